/**
 * The userinfo endpoint as a plugin (issue 26, decision 88): driven by an independent client
 * library (oauth4webapi v3) over GET and POST (moved from test/oauth/client-library.test.ts);
 * without the plugin `/userinfo` answers 404 and discovery names no `userinfo_endpoint`. The
 * claims are test/oauth/claims.test.ts's, the token bindings oauth-dpop's and oauth-mtls's tests.
 */
import { expect } from 'chai';
import * as oauth from 'oauth4webapi';
import { registerWithFakes } from '@gatehouse-auth/testing';
import plugin from '../src/index.js';
import { libraryCodeFlow } from '../../../test/oauth/library-code-flow.js';
import { startServer, WEB, WEB_CB, type OAuthServer, type TestUser } from '../../../test/oauth/support.js';

const PLUGIN = '@gatehouse-auth/oidc-userinfo';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

describe('oidc-userinfo: the userinfo endpoint (OIDC Core §5.3)', function () {
  let server: OAuthServer;
  let as: oauth.AuthorizationServer;
  let user: TestUser;

  before(async function () {
    server = await startServer();
    const issuer = new URL(server.issuer);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    user = await server.user('info');
  });
  after(() => server?.close());

  /** Runs the front channel in a browser and validates the callback with the library. */
  const codeFlow = (client: oauth.Client, redirectUri: string, scope: string) =>
    libraryCodeFlow(server, as, user, client, redirectUri, scope);

  it('discovery names it; the plugin mounts at the shared root and adds one member', async function () {
    expect(as.userinfo_endpoint).to.equal(`${server.issuer}/userinfo`);
    const registered = await registerWithFakes(plugin);
    expect(registered.routes.map((r) => r.path)).to.deep.equal(['/']);
    expect([...registered.metadata]).to.deep.equal([['userinfo_endpoint', `${registered.api.web.issuer}/userinfo`]]);
  });

  it('answers userinfo over GET and POST', async function () {
    const client: oauth.Client = { client_id: WEB.id };
    const auth = oauth.ClientSecretBasic(WEB.secret);
    const { params, verifier, nonce } = await codeFlow(client, WEB_CB, 'openid profile email');
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, WEB_CB, verifier, insecure),
      { expectedNonce: nonce },
    );
    const expected = { sub: user.id, preferred_username: user.username, email: user.email, email_verified: false };
    const viaGet = await oauth.processUserInfoResponse(
      as,
      client,
      user.id,
      await oauth.userInfoRequest(as, client, tokens.access_token, insecure),
    );
    expect(viaGet).to.deep.equal(expected);

    const viaPost = await oauth.protectedResourceRequest(
      tokens.access_token,
      'POST',
      new URL(as.userinfo_endpoint!),
      new Headers({ 'Content-Type': 'application/x-www-form-urlencoded' }),
      '',
      insecure,
    );
    expect(await oauth.processUserInfoResponse(as, client, user.id, viaPost)).to.deep.equal(expected);

    // RFC 6750 §2.2: the token in a form body.
    const formPost = await fetch(as.userinfo_endpoint!, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ access_token: tokens.access_token }).toString(),
    });
    expect(formPost.status).to.equal(200);
    expect(await formPost.json()).to.deep.equal(expected);

    // Without a token: 401 with a Bearer challenge.
    const none = await fetch(as.userinfo_endpoint!);
    expect(none.status).to.equal(401);
    expect(none.headers.get('www-authenticate')).to.match(/^Bearer error="invalid_token"/);
  });

  it('answers at /oauth2/userinfo too, and refuses a repeated parameter with invalid_request', async function () {
    const none = await fetch(server.url('/oauth2/userinfo'));
    expect(none.status).to.equal(401);
    const twice = await fetch(server.url('/userinfo'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'access_token=a&access_token=b',
    });
    expect(twice.status).to.equal(400);
    expect(((await twice.json()) as { error: string }).error).to.equal('invalid_request');
  });

  it('a fault is answered in OAuth’s style: 500 server_error', async function () {
    const tokens = server.gatehouse.container.cradle.tokens;
    const inspect = tokens.inspect.bind(tokens);
    tokens.inspect = () => Promise.reject(new Error('boom'));
    try {
      const res = await fetch(server.url('/userinfo'), { headers: { Authorization: 'Bearer x' } });
      expect(res.status).to.equal(500);
      expect(((await res.json()) as { error: string }).error).to.equal('server_error');
    } finally {
      tokens.inspect = inspect;
    }
  });
});

describe('oidc-userinfo left out', function () {
  let server: OAuthServer;
  before(async function () {
    server = await startServer({ without: [PLUGIN] });
  });
  after(() => server?.close());

  it('/userinfo and /oauth2/userinfo answer 404, and discovery has no userinfo_endpoint', async function () {
    for (const path of ['/userinfo', '/oauth2/userinfo']) {
      expect((await fetch(server.url(path))).status, `GET ${path}`).to.equal(404);
      const post = await fetch(server.url(path), {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'access_token=x',
      });
      expect(post.status, `POST ${path}`).to.equal(404);
    }
    const metadata = (await (await fetch(server.url('/.well-known/openid-configuration'))).json()) as object;
    expect(metadata).to.not.have.property('userinfo_endpoint');
    expect(metadata).to.have.property('token_endpoint');
  });
});
