/**
 * Introspection (RFC 7662) and revocation (RFC 7009) against checklist §5: every path, client
 * and bearer authentication, foreign tokens, the exact inactive answer, and revocation of a
 * refresh token taking its access tokens along.
 */
import { expect } from 'chai';
import {
  MACHINE,
  OTHER,
  SPA,
  SPA_CB,
  WEB,
  basic,
  expectOAuthError,
  introspect,
  machineToken,
  obtainCode,
  postForm,
  redeem,
  startServer,
  type JsonResponse,
  type OAuthServer,
  type TestUser,
} from './support.js';

const INTROSPECT_PATHS = ['/token/introspect', '/token_info'];
const REVOKE_PATHS = ['/oauth2/revoke/', '/oauth2/revoke', '/token/revoke'];

function expectInvalidClient(res: JsonResponse): void {
  expectOAuthError(res, 401, 'invalid_client');
  expect(res.headers.get('www-authenticate')).to.match(/^Basic\b/);
}

describe('OAuth introspection and revocation (checklist §5)', function () {
  let server: OAuthServer;
  let user: TestUser;

  before(async function () {
    server = await startServer();
    user = await server.user('intro');
  });
  after(() => server?.close());

  async function webTokens(scope = 'openid profile offline_access'): Promise<Record<string, string>> {
    const res = await redeem(server, await obtainCode(server, user, { scope }));
    expect(res.status, res.text).to.equal(200);
    return res.body as Record<string, string>;
  }

  const webAuth = () => basic(WEB.id, WEB.secret);

  describe('revocation', function () {
    it('revokes an access token at every path: 200, empty body, then inactive', async function () {
      for (const path of REVOKE_PATHS) {
        const tokens = await webTokens();
        const res = await postForm(server, path, { token: tokens.access_token! }, webAuth());
        expect(res.status, `${path}: ${res.text}`).to.equal(200);
        expect(res.text).to.equal('');
        expect(res.headers.get('cache-control')).to.equal('no-store');
        expect(await introspect(server, tokens.access_token!)).to.deep.equal({ active: false });
        // Revoking an access token leaves the refresh token alone.
        expect((await introspect(server, tokens.refresh_token!)).active).to.equal(true);
      }
    });

    it('an unknown token → 200', async function () {
      const res = await postForm(server, '/oauth2/revoke/', { token: 'no-such-token' }, webAuth());
      expect(res.status).to.equal(200);
      expect(res.text).to.equal('');
    });

    it('bad or missing client credentials → 401 invalid_client with WWW-Authenticate: Basic', async function () {
      const tokens = await webTokens();
      expectInvalidClient(
        await postForm(server, '/token/revoke', { token: tokens.access_token! }, basic(WEB.id, 'wrong')),
      );
      expectInvalidClient(await postForm(server, '/token/revoke', { token: tokens.access_token! }));
      expectInvalidClient(await postForm(server, '/token/revoke', { token: 'unknown' }, basic('nobody', 'x')));
      expect((await introspect(server, tokens.access_token!)).active).to.equal(true);
    });

    it('another client’s token is refused and stays active', async function () {
      const tokens = await webTokens();
      for (const token of [tokens.access_token!, tokens.refresh_token!]) {
        const res = await postForm(server, '/oauth2/revoke/', { token }, basic(OTHER.id, OTHER.secret));
        expect(res.status, res.text).to.be.within(400, 499);
        expectOAuthError(res, 400, 'unauthorized_client');
        expect((await introspect(server, token)).active).to.equal(true);
      }
    });

    it('revoking a refresh token kills its access tokens, also with a wrong token_type_hint', async function () {
      const tokens = await webTokens();
      const res = await postForm(
        server,
        '/token/revoke',
        { token: tokens.refresh_token!, token_type_hint: 'access_token' },
        webAuth(),
      );
      expect(res.status).to.equal(200);
      expect(await introspect(server, tokens.refresh_token!)).to.deep.equal({ active: false });
      expect(await introspect(server, tokens.access_token!)).to.deep.equal({ active: false });
      const refreshed = await postForm(
        server,
        '/oauth/token',
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
        webAuth(),
      );
      expectOAuthError(refreshed, 400, 'invalid_grant');
    });

    it('a public client revokes its own token by client_id', async function () {
      const got = await obtainCode(server, user, {
        clientId: SPA.id,
        redirectUri: SPA_CB,
        scope: 'openid offline_access',
      });
      const tokens = (await redeem(server, got, SPA)).body as Record<string, string>;
      const res = await postForm(server, '/oauth2/revoke/', { token: tokens.refresh_token!, client_id: SPA.id });
      expect(res.status, res.text).to.equal(200);
      expect(await introspect(server, tokens.access_token!)).to.deep.equal({ active: false });
    });

    it('no token → 400 invalid_request; a duplicated parameter → 400 invalid_request', async function () {
      expectOAuthError(await postForm(server, '/oauth2/revoke/', {}, webAuth()), 400, 'invalid_request');
      expectOAuthError(await postForm(server, '/oauth2/revoke/', 'token=a&token=b', webAuth()), 400, 'invalid_request');
    });

    it('a server fault → 500 server_error (OAuth body, nothing about the cause); the database gone → 503 temporarily_unavailable with Retry-After', async function () {
      const tokens = await webTokens();
      const store = server.gatehouse.container.cradle.tokens;
      const original = store.revokeToken.bind(store);
      try {
        store.revokeToken = () => Promise.reject(new Error('the disk said no (detail 51f2)'));
        const fault = await postForm(server, '/oauth2/revoke/', { token: tokens.access_token! }, webAuth());
        expect(fault.status).to.equal(500);
        expect(fault.body).to.deep.equal({ error: 'server_error', error_description: 'internal server error' });
        store.revokeToken = () =>
          Promise.reject(
            // As the PostgreSQL driver throws it (it marks its errors).
            Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), {
              code: 'ECONNREFUSED',
              [Symbol.for('gatehouse.databaseError')]: true,
            }),
          );
        const down = await postForm(server, '/oauth2/revoke/', { token: tokens.access_token! }, webAuth());
        expect(down.status).to.equal(503);
        expect(down.headers.get('retry-after')).to.equal('5');
        expect(down.body.error).to.equal('temporarily_unavailable');
      } finally {
        store.revokeToken = original;
      }
    });
  });

  describe('introspection', function () {
    it('answers at both paths for an active token, with its fields', async function () {
      const tokens = await webTokens('openid profile offline_access');
      for (const path of INTROSPECT_PATHS) {
        const res = await postForm(server, path, { token: tokens.access_token! }, webAuth());
        expect(res.status, `${path}: ${res.text}`).to.equal(200);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        expect(res.body).to.include({
          active: true,
          scope: 'openid profile offline_access',
          client_id: WEB.id,
          username: user.username,
          token_type: 'bearer',
          sub: user.id,
          aud: WEB.id,
          iss: server.issuer,
        });
        expect(res.body.exp).to.be.a('number');
        expect(res.body.iat).to.be.a('number');
      }
      const rt = await postForm(
        server,
        '/token_info',
        { token: tokens.refresh_token!, token_type_hint: 'refresh_token' },
        webAuth(),
      );
      expect(rt.body).to.include({ active: true, client_id: WEB.id, sub: user.id });
    });

    it('without authentication → 401; with bad credentials → 401 invalid_client; a public client → 401', async function () {
      const tokens = await webTokens();
      for (const path of INTROSPECT_PATHS) {
        expectInvalidClient(await postForm(server, path, { token: tokens.access_token! }));
        expectInvalidClient(await postForm(server, path, { token: tokens.access_token! }, basic(WEB.id, 'wrong')));
        expectInvalidClient(await postForm(server, path, { token: tokens.access_token!, client_id: SPA.id }));
      }
    });

    it('an inactive token → 200 and exactly {"active":false}', async function () {
      const tokens = await webTokens();
      await postForm(server, '/oauth2/revoke/', { token: tokens.access_token! }, webAuth());
      for (const token of [tokens.access_token!, 'unknown-token', 'x'.repeat(5000)]) {
        const res = await postForm(server, '/token/introspect', { token }, webAuth());
        expect(res.status).to.equal(200);
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        expect(res.text).to.equal('{"active":false}');
      }
    });

    it('another client’s token → {"active":false}', async function () {
      const tokens = await webTokens();
      const res = await postForm(
        server,
        '/token/introspect',
        { token: tokens.access_token! },
        basic(OTHER.id, OTHER.secret),
      );
      expect(res.status).to.equal(200);
      expect(res.text).to.equal('{"active":false}');
      const machine = (await machineToken(server)).body.access_token as string;
      expect(await introspect(server, machine)).to.deep.equal({ active: false });
    });

    it('a bearer token with the introspection scope may introspect any token', async function () {
      const bearer = (await machineToken(server, 'introspection')).body.access_token as string;
      const tokens = await webTokens();
      for (const path of INTROSPECT_PATHS) {
        const res = await postForm(server, path, { token: tokens.access_token! }, `Bearer ${bearer}`);
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.include({ active: true, client_id: WEB.id, sub: user.id });
      }
    });

    it('an insufficient or invalid bearer token → 401', async function () {
      const tokens = await webTokens();
      const narrow = (await machineToken(server, 'reports.read')).body.access_token as string;
      const revoked = (await machineToken(server, 'introspection')).body.access_token as string;
      await postForm(server, '/oauth2/revoke/', { token: revoked }, basic(MACHINE.id, MACHINE.secret));
      for (const bearer of [narrow, revoked, 'not-a-token', tokens.refresh_token!]) {
        const res = await postForm(server, '/token/introspect', { token: tokens.access_token! }, `Bearer ${bearer}`);
        expectOAuthError(res, 401, 'invalid_token');
        expect(res.headers.get('www-authenticate')).to.match(/^Bearer error="invalid_token"/);
      }
    });

    it('no token → 400 invalid_request', async function () {
      expectOAuthError(await postForm(server, '/token/introspect', {}, webAuth()), 400, 'invalid_request');
    });
  });
});
