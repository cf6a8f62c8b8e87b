/**
 * The token endpoint against checklist §2–4 and §6: code redemption (single use, binding to
 * client, redirect URI and PKCE, expiry), the request format, client authentication (secrets,
 * assertions, throttling), refresh rotation, client credentials with service subjects, token
 * formats, ID token claims, JWKS and metadata.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createLocalJWKSet, generateKeyPair, jwtVerify, SignJWT, type JSONWebKeySet } from 'jose';
import { withPostgresDatabase } from '../support/postgres.js';
import {
  Browser,
  CSJWT,
  GUESSED,
  LEGACY,
  MACHINE,
  MFA,
  OPAQUE,
  OTHER,
  PASSWORD,
  PKJWT,
  SHORTCODE,
  SPA,
  SPA_CB,
  WEB,
  WEB_CB,
  WEB_CB2,
  authorizePath,
  basic,
  completeStage,
  decodeJwtParts,
  enrolTotp,
  expectOAuthError,
  halfHash,
  introspect,
  locationOf,
  loginRequestId,
  machineToken,
  obtainCode,
  postForm,
  redeem,
  sleep,
  startServer,
  totpCode,
  type JsonResponse,
  type OAuthServer,
  type TestUser,
} from './support.js';

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** 401 invalid_client with the Basic challenge (RFC 6749 §5.2). */
function expectInvalidClient(res: JsonResponse): void {
  expectOAuthError(res, 401, 'invalid_client');
  expect(res.headers.get('www-authenticate')).to.match(/^Basic\b/);
}

describe('OAuth token endpoint (checklist §2–4, §6)', function () {
  let server: OAuthServer;
  let user: TestUser;
  let jwks: JSONWebKeySet;

  before(async function () {
    server = await startServer();
    user = await server.user('tok');
    jwks = (await (await fetch(server.url('/.well-known/jwks.json'))).json()) as JSONWebKeySet;
  });
  after(() => server?.close());

  /** A code flow for the web client and its redemption: the token response body. */
  async function webTokens(scope = 'openid profile offline_access'): Promise<Record<string, string>> {
    const got = await obtainCode(server, user, { scope });
    const res = await redeem(server, got);
    expect(res.status, res.text).to.equal(200);
    return res.body as Record<string, string>;
  }

  const refresh = (refreshToken: string, client: { id: string; secret?: string } = WEB, extra = {}) =>
    postForm(
      server,
      '/oauth2/token/',
      {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        ...(client.secret ? {} : { client_id: client.id }),
        ...extra,
      },
      client.secret ? basic(client.id, client.secret) : undefined,
    );

  describe('authorization_code (§2)', function () {
    it('succeeds with no-store, Pragma no-cache and the spec fields', async function () {
      const got = await obtainCode(server, user);
      const res = await redeem(server, got);
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('pragma')).to.equal('no-cache');
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(res.body).to.have.all.keys(
        'access_token',
        'token_type',
        'expires_in',
        'issued_token_type',
        'scope',
        'refresh_token',
        'id_token',
      );
      expect(res.body).to.include({
        token_type: 'bearer',
        expires_in: 3600,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        scope: 'openid profile email offline_access',
      });
    });

    it('a second redemption → 400 invalid_grant, and the first redemption’s tokens become inactive', async function () {
      const got = await obtainCode(server, user);
      const first = await redeem(server, got);
      expect(first.status).to.equal(200);
      expectOAuthError(await redeem(server, got), 400, 'invalid_grant');
      expect(await introspect(server, first.body.access_token as string)).to.deep.equal({ active: false });
      expect(await introspect(server, first.body.refresh_token as string)).to.deep.equal({ active: false });
      // The resource server side: userinfo refuses the access token.
      const info = await fetch(server.url('/userinfo'), {
        headers: { Authorization: `Bearer ${first.body.access_token as string}` },
      });
      expect(info.status).to.equal(401);
      expectOAuthError(await refresh(first.body.refresh_token as string), 400, 'invalid_grant');
    });

    it('another client holding the code → invalid_grant, before and after the redemption, and revokes nothing', async function () {
      const got = await obtainCode(server, user);
      expectOAuthError(await redeem(server, got, OTHER), 400, 'invalid_grant');
      // The stranger did not burn the code…
      const legit = await redeem(server, got);
      expect(legit.status, legit.text).to.equal(200);
      // …and presenting it after the redemption does not trigger the replay revocation.
      expectOAuthError(await redeem(server, got, OTHER), 400, 'invalid_grant');
      expect((await introspect(server, legit.body.access_token as string)).active).to.equal(true);
      expect((await refresh(legit.body.refresh_token as string)).status).to.equal(200);
    });

    it('an expired code → invalid_grant', async function () {
      const got = await obtainCode(server, user, {
        clientId: SHORTCODE.id,
        redirectUri: 'https://shortcode.example.test/cb',
        scope: 'openid',
      });
      await sleep(1100);
      expectOAuthError(await redeem(server, got, SHORTCODE), 400, 'invalid_grant');
    });

    it('redirect_uri missing or different → invalid_grant; the code still works with the right one', async function () {
      const got = await obtainCode(server, user);
      expectOAuthError(await redeem(server, got, WEB, { redirect_uri: undefined }), 400, 'invalid_grant');
      expectOAuthError(await redeem(server, got, WEB, { redirect_uri: WEB_CB2 }), 400, 'invalid_grant');
      expectOAuthError(await redeem(server, got, WEB, { redirect_uri: `${WEB_CB}/` }), 400, 'invalid_grant');
      expect((await redeem(server, got)).status).to.equal(200);
    });

    it('PKCE: a missing, wrong or malformed verifier → invalid_grant; the code still works with the right one', async function () {
      const got = await obtainCode(server, user);
      const wrong = randomBytes(32).toString('base64url');
      for (const verifier of [undefined, wrong, 'short', 'a'.repeat(129), `${wrong.slice(0, 42)}+/`]) {
        expectOAuthError(await redeem(server, got, WEB, { code_verifier: verifier }), 400, 'invalid_grant');
      }
      expect((await redeem(server, got)).status).to.equal(200);
    });

    it('PKCE: a verifier without an earlier challenge (downgrade) → invalid_grant', async function () {
      const got = await obtainCode(server, user, { pkce: false });
      expectOAuthError(await redeem(server, got), 400, 'invalid_grant');
      // A confidential client may do without PKCE altogether.
      expect((await redeem(server, got, WEB, { code_verifier: undefined })).status).to.equal(200);
    });

    it('a public client redeems with its client_id; without client_id → 401 invalid_client', async function () {
      const got = await obtainCode(server, user, { clientId: SPA.id, redirectUri: SPA_CB, scope: 'openid' });
      expectInvalidClient(await redeem(server, got, SPA, { client_id: undefined }));
      expectOAuthError(
        await redeem(server, got, SPA, { client_id: SPA.id, client_secret: 'x'.repeat(40) }),
        401,
        'invalid_client',
      );
      expect((await redeem(server, got, SPA)).status).to.equal(200);
    });

    it('an unknown code → invalid_grant; no code → invalid_request', async function () {
      const got = await obtainCode(server, user);
      expectOAuthError(await redeem(server, got, WEB, { code: 'x'.repeat(43) }), 400, 'invalid_grant');
      expectOAuthError(await redeem(server, got, WEB, { code: undefined }), 400, 'invalid_request');
    });
  });

  describe('request format (§2.8)', function () {
    it('GET → 405 with Allow: POST', async function () {
      for (const path of ['/oauth/token', '/oauth2/token/']) {
        const res = await fetch(server.url(path));
        expect(res.status).to.equal(405);
        expect(res.headers.get('allow')).to.equal('POST');
        expect(((await res.json()) as { error: string }).error).to.equal('invalid_request');
      }
    });

    it('a duplicated parameter → invalid_request', async function () {
      const res = await postForm(
        server,
        '/oauth/token',
        'grant_type=client_credentials&scope=reports.read&scope=reports.write',
        basic(MACHINE.id, MACHINE.secret),
      );
      expectOAuthError(res, 400, 'invalid_request');
    });

    it('an empty parameter counts as absent', async function () {
      const res = await postForm(
        server,
        '/oauth/token',
        'grant_type=client_credentials&scope=&service_subject_type=',
        basic(MACHINE.id, MACHINE.secret),
      );
      expect(res.status, res.text).to.equal(200);
      expect(res.body.scope).to.equal('reports.read reports.write introspection');
    });

    it('a JSON body → invalid_request', async function () {
      const res = await fetch(server.url('/oauth/token'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: basic(MACHINE.id, MACHINE.secret) },
        body: JSON.stringify({ grant_type: 'client_credentials' }),
      });
      expect(res.status).to.equal(400);
      expect(((await res.json()) as { error: string }).error).to.equal('invalid_request');
    });

    it('answers at every path the spec gives (and with a query component)', async function () {
      for (const path of ['/oauth/token', '/oauth2/token', '/oauth2/token/', '/', '/oauth/token?x=1']) {
        const res = await postForm(
          server,
          path,
          { grant_type: 'client_credentials', scope: 'reports.read' },
          basic(MACHINE.id, MACHINE.secret),
        );
        expect(res.status, `${path}: ${res.text}`).to.equal(200);
        expect(res.body.scope).to.equal('reports.read');
      }
    });
  });

  describe('client authentication and error codes (§3)', function () {
    const cc = { grant_type: 'client_credentials' };

    it('a bad secret via Basic → 401 invalid_client with WWW-Authenticate: Basic', async function () {
      expectInvalidClient(await postForm(server, '/oauth/token', cc, basic(OTHER.id, 'wrong-secret')));
      expectInvalidClient(await postForm(server, '/oauth/token', cc, basic('no-such-client', 'whatever')));
      expectInvalidClient(
        await postForm(server, '/oauth/token', { ...cc, client_id: OTHER.id, client_secret: 'wrong' }),
      );
      expectInvalidClient(await postForm(server, '/oauth/token', cc));
    });

    it('Basic and a body secret in one request → invalid_request', async function () {
      expectOAuthError(
        await postForm(
          server,
          '/oauth/token',
          { ...cc, client_secret: MACHINE.secret },
          basic(MACHINE.id, MACHINE.secret),
        ),
        400,
        'invalid_request',
      );
    });

    it('a client_id in the body that differs from Basic → invalid_request', async function () {
      expectOAuthError(
        await postForm(server, '/oauth/token', { ...cc, client_id: OTHER.id }, basic(MACHINE.id, MACHINE.secret)),
        400,
        'invalid_request',
      );
    });

    it('the secret in the body (client_secret_post) is accepted too, from a client whose method is not pinned', async function () {
      const res = await postForm(server, '/oauth/token', {
        ...cc,
        client_id: MACHINE.id,
        client_secret: MACHINE.secret,
      });
      expect(res.status, res.text).to.equal(200);
    });

    it('a client pinned to client_secret_basic cannot send its secret in the body: 401 invalid_client', async function () {
      const inBody = await postForm(server, '/oauth2/revoke', {
        token: 'not-a-token',
        client_id: WEB.id,
        client_secret: WEB.secret,
      });
      expectInvalidClient(inBody);
      const byBasic = await postForm(server, '/oauth2/revoke', { token: 'not-a-token' }, basic(WEB.id, WEB.secret));
      expect(byBasic.status, byBasic.text).to.equal(200);
    });

    it('unknown grant → unsupported_grant_type; none → invalid_request', async function () {
      const auth = basic(MACHINE.id, MACHINE.secret);
      expectOAuthError(
        await postForm(server, '/oauth/token', { grant_type: 'urn:example:magic' }, auth),
        400,
        'unsupported_grant_type',
      );
      expectOAuthError(await postForm(server, '/oauth/token', { scope: 'reports.read' }, auth), 400, 'invalid_request');
    });

    it('a grant the client may not use → unauthorized_client', async function () {
      const auth = basic(MACHINE.id, MACHINE.secret);
      for (const grant of ['authorization_code', 'refresh_token', 'password']) {
        expectOAuthError(
          await postForm(server, '/oauth/token', { grant_type: grant }, auth),
          400,
          'unauthorized_client',
        );
      }
    });

    it('the password grant for a client without it → unauthorized_client', async function () {
      expectOAuthError(
        await postForm(
          server,
          '/oauth/token',
          { grant_type: 'password', username: user.username, password: PASSWORD },
          basic(WEB.id, WEB.secret),
        ),
        400,
        'unauthorized_client',
      );
    });

    it('the password grant for the one client that enables it: tokens; a wrong password → invalid_grant', async function () {
      const auth = basic(LEGACY.id, LEGACY.secret);
      const ok = await postForm(
        server,
        '/oauth/token',
        { grant_type: 'password', username: user.username, password: PASSWORD, scope: 'openid offline_access' },
        auth,
      );
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body.refresh_token).to.be.a('string');
      const idToken = decodeJwtParts(ok.body.id_token as string).payload;
      expect(idToken).to.include({ sub: user.id, aud: LEGACY.id });
      expect(idToken.amr).to.deep.equal(['pwd']);
      for (const [username, password] of [
        [user.username, 'not the password at all'],
        ['nobody-here', PASSWORD],
      ]) {
        const res = await postForm(
          server,
          '/oauth/token',
          { grant_type: 'password', username: username!, password: password! },
          auth,
        );
        expect(expectOAuthError(res, 400, 'invalid_grant').error_description).to.equal(
          'invalid resource owner credentials',
        );
      }
      expectOAuthError(
        await postForm(
          server,
          '/oauth/token',
          { grant_type: 'password', username: user.username, password: PASSWORD, scope: 'email' },
          auth,
        ),
        400,
        'invalid_scope',
      );
    });

    it('an excess scope → invalid_scope', async function () {
      for (const scope of ['admin', 'reports.read admin', 'openid', 'offline_access']) {
        expectOAuthError(await machineToken(server, scope), 400, 'invalid_scope');
      }
    });

    it('secret guessing is throttled: after 20 failures even the right secret gets 429', async function () {
      for (let i = 0; i < 20; i += 1) {
        expectInvalidClient(await postForm(server, '/oauth/token', cc, basic(GUESSED.id, `guess-${i}`)));
      }
      const blocked = await postForm(server, '/oauth/token', cc, basic(GUESSED.id, GUESSED.secret));
      expectOAuthError(blocked, 429, 'invalid_client');
      expect(blocked.headers.get('retry-after')).to.equal('300');
      // Other clients are not affected.
      expect((await machineToken(server)).status).to.equal(200);
    });
  });

  describe('refresh_token (§4)', function () {
    it('rotates: the new token works, the old one is inactive', async function () {
      const first = await webTokens();
      const second = await refresh(first.refresh_token!);
      expect(second.status, second.text).to.equal(200);
      expect(second.headers.get('cache-control')).to.equal('no-store');
      expect(second.body.refresh_token).to.be.a('string').and.not.equal(first.refresh_token);
      expect(second.body.scope).to.equal('openid profile offline_access');
      expect(await introspect(server, first.refresh_token!)).to.deep.equal({ active: false });
      expect((await introspect(server, second.body.refresh_token as string)).active).to.equal(true);
      // The first access token lives on until the family is revoked.
      expect((await introspect(server, first.access_token!)).active).to.equal(true);
      const idToken = decodeJwtParts(second.body.id_token as string).payload;
      const original = decodeJwtParts(first.id_token!).payload;
      expect(idToken.auth_time).to.equal(original.auth_time);
      expect(idToken.amr).to.deep.equal(['pwd']);
      expect((await refresh(second.body.refresh_token as string)).status).to.equal(200);
    });

    it('reuse of a rotated token → invalid_grant, and the whole family is revoked', async function () {
      const first = await webTokens();
      const second = await refresh(first.refresh_token!);
      const third = await refresh(second.body.refresh_token as string);
      expect(third.status).to.equal(200);
      expectOAuthError(await refresh(first.refresh_token!), 400, 'invalid_grant');
      for (const token of [
        third.body.refresh_token,
        third.body.access_token,
        second.body.access_token,
        first.access_token,
      ] as string[]) {
        expect(await introspect(server, token)).to.deep.equal({ active: false });
      }
      expectOAuthError(await refresh(third.body.refresh_token as string), 400, 'invalid_grant');
    });

    it('another client’s refresh token → invalid_grant, and it keeps working for its owner', async function () {
      const tokens = await webTokens();
      expectOAuthError(await refresh(tokens.refresh_token!, OTHER), 400, 'invalid_grant');
      expect((await refresh(tokens.refresh_token!)).status).to.equal(200);
    });

    it('a confidential client refreshing without authentication → 401 invalid_client', async function () {
      const tokens = await webTokens();
      expectInvalidClient(await refresh(tokens.refresh_token!, { id: WEB.id }));
      expect((await refresh(tokens.refresh_token!)).status).to.equal(200);
    });

    it('a wider scope → invalid_scope (the token is not spent); a narrower one is granted and can widen back to the original', async function () {
      const tokens = await webTokens('openid offline_access');
      expectOAuthError(
        await refresh(tokens.refresh_token!, WEB, { scope: 'openid profile offline_access' }),
        400,
        'invalid_scope',
      );
      const narrowed = await refresh(tokens.refresh_token!, WEB, { scope: 'openid' });
      expect(narrowed.status, narrowed.text).to.equal(200);
      expect(narrowed.body.scope).to.equal('openid');
      // RFC 6749 §6: the new refresh token keeps the original scope.
      const back = await refresh(narrowed.body.refresh_token as string, WEB, { scope: 'openid offline_access' });
      expect(back.status, back.text).to.equal(200);
      expect(back.body.scope).to.equal('openid offline_access');
    });

    it('an access token is not a refresh token → invalid_grant', async function () {
      const tokens = await webTokens();
      expectOAuthError(await refresh(tokens.access_token!), 400, 'invalid_grant');
    });

    it('a public client refreshes with its client_id', async function () {
      const got = await obtainCode(server, user, {
        clientId: SPA.id,
        redirectUri: SPA_CB,
        scope: 'openid offline_access',
      });
      const tokens = await redeem(server, got, SPA);
      const res = await refresh(tokens.body.refresh_token as string, SPA);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.refresh_token).to.be.a('string');
    });

    it('a store failure while the successor is written spends nothing: 503, then the retry with the same token succeeds', async function () {
      await failingSuccessorWrite(server, webTokens, refresh);
    });

    describe('on PostgreSQL', function () {
      const db = withPostgresDatabase();
      let pg: OAuthServer;
      let pgUser: TestUser;
      before(async function () {
        this.timeout(20_000);
        pg = await startServer({ databaseUrl: db.url });
        pgUser = await pg.user('rotation');
      });
      after(() => pg?.close());
      const pgRefresh = (refreshToken: string) =>
        postForm(
          pg,
          '/oauth2/token/',
          { grant_type: 'refresh_token', refresh_token: refreshToken },
          basic(WEB.id, WEB.secret),
        );

      it('the same: the rotation and the successor commit together', async function () {
        const tokens = async () =>
          (await redeem(pg, await obtainCode(pg, pgUser, { scope: 'openid offline_access' }))).body as Record<
            string,
            string
          >;
        await failingSuccessorWrite(pg, tokens, pgRefresh);
      });
    });
  });

  describe('client_credentials with service subjects', function () {
    const cc = (fields: Record<string, string>, client: { id: string; secret: string } = MACHINE) =>
      postForm(
        server,
        '/oauth/token',
        { grant_type: 'client_credentials', ...fields },
        basic(client.id, client.secret),
      );

    it('acts for itself by default: sub is the client, no refresh or ID token', async function () {
      const res = await cc({});
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys('access_token', 'token_type', 'expires_in', 'issued_token_type', 'scope');
      expect(decodeJwtParts(res.body.access_token as string).payload.sub).to.equal(MACHINE.id);
    });

    it('service_subject_type=enterprise for a configured enterprise', async function () {
      const res = await cc({
        service_subject_type: 'enterprise',
        service_subject_id: 'ent-1001',
        scope: 'reports.read',
      });
      expect(res.status, res.text).to.equal(200);
      expect(decodeJwtParts(res.body.access_token as string).payload).to.include({
        sub: MACHINE.id,
        service_subject_type: 'enterprise',
        service_subject_id: 'ent-1001',
      });
      expect(await introspect(server, res.body.access_token as string, MACHINE)).to.include({
        active: true,
        service_subject_type: 'enterprise',
        service_subject_id: 'ent-1001',
        sub: MACHINE.id,
      });
    });

    it('service_subject_type=user for an existing user: sub is the user', async function () {
      const res = await cc({ service_subject_type: 'user', service_subject_id: user.id });
      expect(res.status, res.text).to.equal(200);
      expect(decodeJwtParts(res.body.access_token as string).payload).to.include({
        sub: user.id,
        service_subject_type: 'user',
        service_subject_id: user.id,
        client_id: MACHINE.id,
      });
    });

    it('refusals: unconfigured enterprise or users → unauthorized_client; malformed or unknown → invalid_request', async function () {
      expectOAuthError(
        await cc({ service_subject_type: 'enterprise', service_subject_id: 'ent-9' }),
        400,
        'unauthorized_client',
      );
      expectOAuthError(
        await cc({ service_subject_type: 'user', service_subject_id: user.id }, OTHER),
        400,
        'unauthorized_client',
      );
      expectOAuthError(
        await cc({ service_subject_type: 'enterprise', service_subject_id: 'ent-1001' }, OTHER),
        400,
        'unauthorized_client',
      );
      expectOAuthError(
        await cc({ service_subject_type: 'user', service_subject_id: 'no-such-user' }),
        400,
        'invalid_request',
      );
      expectOAuthError(await cc({ service_subject_type: 'team', service_subject_id: 'x' }), 400, 'invalid_request');
      expectOAuthError(await cc({ service_subject_type: 'enterprise' }), 400, 'invalid_request');
      expectOAuthError(await cc({ service_subject_id: 'ent-1001' }), 400, 'invalid_request');
      expectOAuthError(
        await cc({ service_subject_type: 'enterprise', service_subject_id: 'has space' }),
        400,
        'invalid_request',
      );
    });
  });

  describe('client assertions (§3.7) on SQLite', function () {
    assertionSuite(() => server);
  });

  describe('client assertions (§3.7) on PostgreSQL', function () {
    const db = withPostgresDatabase();
    let pg: OAuthServer;
    before(async function () {
      this.timeout(20_000);
      pg = await startServer({ databaseUrl: db.url });
    });
    after(() => pg?.close());
    assertionSuite(() => pg);
  });

  describe('token formats and signatures (§6)', function () {
    it('JWT access tokens (RFC 9068): typ at+jwt, iss, aud, client_id, scope; verified with the JWKS', async function () {
      const res = await machineToken(server, 'reports.read');
      const token = res.body.access_token as string;
      const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), {
        issuer: server.issuer,
        audience: MACHINE.id,
        typ: 'at+jwt',
      });
      expect(protectedHeader).to.include({ alg: 'ES256', typ: 'at+jwt' });
      expect(jwks.keys.map((k) => k.kid)).to.include(protectedHeader.kid);
      expect(payload).to.include({ client_id: MACHINE.id, scope: 'reports.read', sub: MACHINE.id });
      expect(payload.jti).to.be.a('string');
      expect(payload.exp! - payload.iat!).to.equal(3600);
    });

    it('opaque access tokens for the opaque app: not a JWT, introspectable; its ID token is still a JWT', async function () {
      const cc = await machineToken(server, 'reports.read', OPAQUE);
      const token = cc.body.access_token as string;
      expect(token).to.match(/^[A-Za-z0-9_-]{43,}$/);
      expect(await introspect(server, token, OPAQUE)).to.include({
        active: true,
        client_id: OPAQUE.id,
        scope: 'reports.read',
      });
      const got = await obtainCode(server, user, {
        clientId: OPAQUE.id,
        redirectUri: 'https://opaque.example.test/cb',
        scope: 'openid offline_access',
      });
      const tokens = await redeem(server, got, OPAQUE);
      expect(tokens.status, tokens.text).to.equal(200);
      expect((tokens.body.access_token as string).split('.')).to.have.length(1);
      const { payload } = await jwtVerify(tokens.body.id_token as string, createLocalJWKSet(jwks), {
        issuer: server.issuer,
        audience: OPAQUE.id,
      });
      expect(payload.at_hash).to.equal(halfHash(tokens.body.access_token as string));
    });

    it('ID token: iss, aud, exp, iat, nonce, auth_time, at_hash, c_hash, amr, signed with a published key', async function () {
      const before = Math.floor(Date.now() / 1000);
      const got = await obtainCode(server, user, { extra: { max_age: '3600' } });
      const res = await redeem(server, got);
      const idToken = res.body.id_token as string;
      const { payload, protectedHeader } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
        issuer: server.issuer,
        audience: WEB.id,
      });
      expect(protectedHeader.alg).to.equal('RS256');
      expect(jwks.keys.map((k) => k.kid)).to.include(protectedHeader.kid);
      expect(payload).to.include({ sub: user.id, nonce: got.nonce, azp: WEB.id });
      expect(payload.iat).to.be.within(before, before + 30);
      expect(payload.exp! - payload.iat!).to.equal(3600);
      expect(payload.auth_time).to.be.a('number').and.at.most(payload.iat!);
      expect(payload.at_hash).to.equal(halfHash(res.body.access_token as string));
      expect(payload.c_hash).to.equal(halfHash(got.code));
      expect(payload.amr).to.deep.equal(['pwd']);
    });

    it('amr lists every method of a two-stage login (PASSWORD then TOTP)', async function () {
      const who = await server.user('mfa');
      const seed = await enrolTotp(server, who);
      const browser = new Browser(server);
      const got = {
        response_type: 'code',
        client_id: MFA.id,
        redirect_uri: 'https://mfa.example.test/cb',
        scope: 'openid',
        state: 'mfa',
      };
      const login = locationOf(await browser.get(authorizePath(got)), server);
      const requestId = loginRequestId(login);
      const next = await completeStage(
        browser,
        server,
        requestId,
        'PASSWORD',
        { identifier: who.username },
        { password: PASSWORD },
      );
      expect(loginRequestId(next)).to.equal(requestId);
      const resume = await completeStage(
        browser,
        server,
        requestId,
        'TOTP',
        { sub: who.id },
        { pass_code: await totpCode(seed) },
      );
      expect(resume.pathname).to.equal('/api/oauth2/authorize/resume');
      const callback = locationOf(await browser.get(resume.pathname + resume.search), server);
      const res = await postForm(
        server,
        '/oauth/token',
        { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: got.redirect_uri },
        basic(MFA.id, MFA.secret),
      );
      expect(res.status, res.text).to.equal(200);
      const amr = decodeJwtParts(res.body.id_token as string).payload.amr as string[];
      expect(amr).to.include.members(['pwd', 'otp']);
    });

    it('JWKS: public keys only, one per configured algorithm (RS256, ES256), each with a unique kid', async function () {
      const res = await fetch(server.url('/.well-known/jwks.json'));
      expect(res.status).to.equal(200);
      const { keys } = (await res.json()) as JSONWebKeySet;
      expect(keys.length).to.be.at.least(1);
      const kids = keys.map((k) => k.kid);
      expect(new Set(kids).size).to.equal(kids.length);
      expect(keys.map((k) => k.alg).sort()).to.deep.equal(['ES256', 'RS256']);
      expect(keys.find((k) => k.alg === 'ES256')).to.include({ kty: 'EC', crv: 'P-256', use: 'sig' });
      expect(keys.find((k) => k.alg === 'RS256')).to.include({ kty: 'RSA', e: 'AQAB', use: 'sig' });
      for (const key of keys) {
        expect(key.kid).to.be.a('string').and.not.equal('');
        expect(key).to.not.have.property('d');
        expect(key).to.not.have.property('p');
      }
    });
  });

  describe('metadata (§6.1)', function () {
    it('with clients that enable them, lists password and implicit', async function () {
      const meta = (await (await fetch(server.url('/.well-known/openid-configuration'))).json()) as Record<
        string,
        unknown
      >;
      expect(meta.issuer).to.equal(server.issuer);
      expect(meta.code_challenge_methods_supported).to.deep.equal(['S256']);
      expect(meta.authorization_response_iss_parameter_supported).to.equal(true);
      expect(meta.grant_types_supported).to.include.members(['password', 'implicit']);
      expect(meta.response_types_supported).to.include('token');
    });

    it('without such clients, password and implicit are absent', async function () {
      const minimal = await startServer({ minimal: true });
      try {
        for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
          const res = await fetch(minimal.url(path));
          expect(res.status).to.equal(200);
          const meta = (await res.json()) as Record<string, unknown>;
          expect(meta.issuer).to.equal(minimal.issuer);
          expect(meta.code_challenge_methods_supported).to.deep.equal(['S256']);
          expect(meta.authorization_response_iss_parameter_supported).to.equal(true);
          expect(meta.grant_types_supported).to.have.members([
            'authorization_code',
            'refresh_token',
            'client_credentials',
          ]);
          expect(meta.response_types_supported).to.deep.equal(['code']);
          // The minimal client does not pin its method, so it may use either (RFC 6749 §2.3.1).
          expect(meta.token_endpoint_auth_methods_supported).to.deep.equal([
            'client_secret_basic',
            'client_secret_post',
          ]);
          expect(meta).to.not.have.property('token_endpoint_auth_signing_alg_values_supported');
        }
        // The grant plugin is loaded, but no client may use it.
        const res = await postForm(
          minimal,
          '/oauth/token',
          { grant_type: 'password', username: 'x', password: 'y' },
          basic(WEB.id, WEB.secret),
        );
        expectOAuthError(res, 400, 'unauthorized_client');
      } finally {
        await minimal.close();
      }
    });
  });

  // The signing key is generated on first use: the first token of a fresh database must not wait
  // for a JWKS request to create it.
  it('issues the very first token of a fresh database (the signing key is generated on first use)', async function () {
    const fresh = await startServer({ minimal: true });
    try {
      const res = await machineToken(fresh, 'reports.read');
      expect(res.status, res.text).to.equal(200);
    } finally {
      await fresh.close();
    }
  });
});

/** Client assertion authentication (RFC 7523 §3) against `get()`'s server. */
function assertionSuite(get: () => OAuthServer): void {
  const claims = (server: OAuthServer, overrides: Record<string, unknown> = {}) => ({
    iss: PKJWT.id,
    sub: PKJWT.id,
    aud: `${server.issuer}/oauth/token`,
    jti: randomBytes(16).toString('base64url'),
    iat: Math.floor(Date.now() / 1000),
    exp: Math.floor(Date.now() / 1000) + 60,
    ...overrides,
  });

  async function signed(server: OAuthServer, overrides: Record<string, unknown> = {}, key = server.key.privateKey) {
    return new SignJWT(claims(server, overrides)).setProtectedHeader({ alg: 'ES256', kid: 'pkjwt-key-1' }).sign(key);
  }

  const withAssertion = (server: OAuthServer, assertion: string, clientId = PKJWT.id) =>
    postForm(server, '/oauth/token', {
      grant_type: 'client_credentials',
      client_id: clientId,
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: assertion,
    });

  it('private_key_jwt: a valid assertion authenticates (aud: token endpoint or issuer)', async function () {
    const server = get();
    for (const aud of [`${server.issuer}/oauth/token`, server.issuer]) {
      const res = await withAssertion(server, await signed(server, { aud }));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.scope).to.equal('reports.read');
    }
  });

  it('private_key_jwt: exp in the past, wrong aud, sub ≠ client_id, bad signature or alg none → 401 invalid_client', async function () {
    const server = get();
    const now = Math.floor(Date.now() / 1000);
    const { privateKey: strangerKey } = await generateKeyPair('ES256');
    const unsigned = (payload: Record<string, unknown>) =>
      `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(
        JSON.stringify(payload),
      ).toString('base64url')}.`;
    const cases: [string, string][] = [
      ['exp 5 minutes past', await signed(server, { iat: now - 400, exp: now - 300 })],
      ['wrong aud', await signed(server, { aud: 'https://elsewhere.example/token' })],
      ['sub is another client', await signed(server, { sub: OTHER.id })],
      ['no sub', await signed(server, { sub: undefined })],
      ['bad signature', await signed(server, {}, strangerKey)],
      ['alg none', unsigned(claims(server))],
      ['no jti', await signed(server, { jti: undefined })],
    ];
    for (const [what, assertion] of cases) {
      const res = await withAssertion(server, assertion);
      expect(res.status, `${what}: ${res.text}`).to.equal(401);
      expectInvalidClient(res);
    }
    // A wrong assertion type is a malformed request.
    const res = await postForm(server, '/oauth/token', {
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:example:other',
      client_assertion: await signed(server),
    });
    expectOAuthError(res, 400, 'invalid_request');
    // And the private_key_jwt client cannot fall back to a shared secret.
    expectInvalidClient(
      await postForm(server, '/oauth/token', { grant_type: 'client_credentials' }, basic(PKJWT.id, 'x'.repeat(40))),
    );
  });

  it('private_key_jwt: a replayed jti → 401 invalid_client', async function () {
    const server = get();
    const assertion = await signed(server);
    expect((await withAssertion(server, assertion)).status).to.equal(200);
    expectInvalidClient(await withAssertion(server, assertion));
  });

  it('client_secret_jwt: an HS256 assertion with the secret authenticates', async function () {
    const server = get();
    const assertion = await new SignJWT(claims(server, { iss: CSJWT.id, sub: CSJWT.id }))
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(CSJWT.secret));
    const res = await withAssertion(server, assertion, CSJWT.id);
    expect(res.status, res.text).to.equal(200);
  });

  it('client_secret_jwt: signed with another secret → 401 invalid_client', async function () {
    const server = get();
    const assertion = await new SignJWT(claims(server, { iss: CSJWT.id, sub: CSJWT.id }))
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('another-secret-0123456789abcdef0123456789'));
    expectInvalidClient(await withAssertion(server, assertion, CSJWT.id));
  });
}

/**
 * Issue 30: the successor's INSERT fails (the database's disk, say) after the rotation's UPDATE
 * ran in the same transaction: the client gets 503 and its refresh token is not spent, so the
 * retry succeeds, where two separate writes answered 500 and made the retry look like reuse.
 */
async function failingSuccessorWrite(
  server: OAuthServer,
  tokens: () => Promise<Record<string, string | undefined>>,
  refresh: (refreshToken: string) => Promise<JsonResponse>,
): Promise<void> {
  const first = await tokens();
  const store = server.gatehouse.container.cradle.tokens as unknown as {
    storeTokens: (...args: unknown[]) => Promise<void>;
  };
  const original = store.storeTokens;
  store.storeTokens = () => Promise.reject(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }));
  let failed: JsonResponse;
  try {
    failed = await refresh(first.refresh_token!);
  } finally {
    store.storeTokens = original;
  }
  expect(failed.status, failed.text).to.equal(503);
  expect(failed.body.error).to.equal('temporarily_unavailable');
  expect((await introspect(server, first.refresh_token!)).active, 'the refresh token is not spent').to.equal(true);
  const retried = await refresh(first.refresh_token!);
  expect(retried.status, retried.text).to.equal(200);
  expect((await introspect(server, retried.body.refresh_token as string)).active).to.equal(true);
  expect((await introspect(server, first.access_token!)).active, 'nothing was revoked').to.equal(true);
}
