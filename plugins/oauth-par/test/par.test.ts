/**
 * RFC 9126 end to end on a real server: openid-client 6 (buildAuthorizationUrlWithPAR) and
 * oauth4webapi 3 (pushedAuthorizationRequest) push their requests and sign in through the hosted
 * login to tokens; every refusal of the endpoint and of /authorize with its exact status and
 * code; discovery and `request_uri` without the plugin.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { FakeClock, registerWithFakes } from '@gatehouse-auth/testing';
import {
  Browser,
  OTHER,
  SPA,
  SPA_CB,
  WEB,
  WEB_CB,
  WEB_CB2,
  authorizePath,
  basic,
  clientKey,
  expectOAuthError,
  locationOf,
  loginWithPassword,
  pkcePair,
  postForm,
  startServer,
  type ClientKey,
  type OAuthServer,
  type Site,
  type TestUser,
} from '../../../test/oauth/support.js';
import plugin from '../src/index.js';

const PLUGIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OTHER_RESOLVER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/other-resolver.js');
const REQUEST_URI = /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/;

/** An app that may send only pushed requests. */
const STRICT = { id: 'par-only', secret: 'par-only-secret-0123456789abcdef0123456789ab' };
const STRICT_CB = 'https://par-only.example.test/cb';
/** An app that authenticates with private_key_jwt. */
const SIGNED = { id: 'par-jwt' };
const SIGNED_CB = 'https://par-jwt.example.test/cb';

const apps = (key: ClientKey) => [
  {
    client_id: STRICT.id,
    client_secret: STRICT.secret,
    redirect_uris: [STRICT_CB],
    grant_types: ['authorization_code'],
    scopes: ['openid', 'profile'],
    login_stages: [['PASSWORD']],
    require_pushed_authorization_requests: true,
  },
  {
    client_id: SIGNED.id,
    token_endpoint_auth_method: 'private_key_jwt',
    jwks: { keys: [key.publicJwk] },
    redirect_uris: [SIGNED_CB],
    grant_types: ['authorization_code'],
    scopes: ['openid', 'profile'],
    login_stages: [['PASSWORD']],
  },
];

const push = (server: Site, fields: Record<string, string> | [string, string][], auth?: string) =>
  postForm(server, '/oauth/par', fields, auth);

/** A pushed request's parameters for the web app: PKCE, state, nonce. */
function webRequest(extra: Record<string, string> = {}) {
  const { verifier, challenge } = pkcePair();
  const fields = {
    response_type: 'code',
    redirect_uri: WEB_CB,
    scope: 'openid profile',
    state: `state-${verifier.slice(0, 8)}`,
    nonce: `nonce-${verifier.slice(0, 8)}`,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  };
  return { fields, verifier };
}

/** Pushes for the web app (Basic); the request_uri. */
async function pushed(server: Site, fields: Record<string, string>, client = WEB): Promise<string> {
  const res = await push(server, fields, basic(client.id, client.secret));
  expect(res.status, res.text).to.equal(201);
  return res.body.request_uri as string;
}

const byReference = (clientId: string, requestUri: string, extra: Record<string, string> = {}) =>
  authorizePath({ client_id: clientId, request_uri: requestUri, ...extra });

/** /authorize refused on the error page (never redirected), with this code. */
async function refusedPage(browser: Browser, path: string, code: string): Promise<void> {
  const res = await browser.get(path);
  expect(res.status, res.headers.get('location') ?? '').to.equal(400);
  expect(await res.text()).to.include(code);
}

/** From an authorization URL to the client's callback, signing in with the password. */
async function signIn(server: OAuthServer, browser: Browser, url: string, user: TestUser): Promise<URL> {
  const next = locationOf(await browser.get(url), server);
  expect(next.pathname, next.href).to.equal('/login');
  return locationOf(await loginWithPassword(browser, server, next, user), server);
}

describe('@gatehouse-auth/oauth-par (RFC 9126)', function () {
  describe('relying parties on openid-client and oauth4webapi', function () {
    let server: OAuthServer;
    let user: TestUser;

    before(async function () {
      const key = await clientKey();
      server = await startServer({ key, plugins: [{ path: PLUGIN }], apps: apps(key) });
      user = await server.user('par');
    });
    after(() => server?.close());

    it('announces pushed_authorization_request_endpoint and require_pushed_authorization_requests', async function () {
      for (const p of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        const doc = (await (await fetch(server.url(p))).json()) as Record<string, unknown>;
        expect(doc.pushed_authorization_request_endpoint).to.equal(server.url('/oauth/par'));
        expect(doc.require_pushed_authorization_requests).to.equal(false);
      }
    });

    it('openid-client: buildAuthorizationUrlWithPAR, the hosted login, tokens (client_secret_basic)', async function () {
      const config = await oidc.discovery(
        new URL(server.issuer),
        WEB.id,
        WEB.secret,
        oidc.ClientSecretBasic(WEB.secret),
        {
          execute: [oidc.allowInsecureRequests],
        },
      );
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = await oidc.buildAuthorizationUrlWithPAR(config, {
        redirect_uri: WEB_CB,
        scope: 'openid profile',
        state,
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      // Only the client and the reference travel through the browser.
      expect([...url.searchParams.keys()].sort()).to.deep.equal(['client_id', 'request_uri']);
      expect(url.searchParams.get('request_uri')).to.match(REQUEST_URI);
      const callback = await signIn(server, new Browser(server), url.pathname + url.search, user);
      expect(callback.href.split('?')[0]).to.equal(WEB_CB);
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      });
      expect(tokens.scope).to.equal('openid profile');
      expect(tokens.claims()!.sub).to.equal(user.id);
    });

    it('openid-client: private_key_jwt at the PAR endpoint', async function () {
      const config = await oidc.discovery(
        new URL(server.issuer),
        SIGNED.id,
        undefined,
        oidc.PrivateKeyJwt(server.key.privateKey),
        { execute: [oidc.allowInsecureRequests] },
      );
      const verifier = oidc.randomPKCECodeVerifier();
      const url = await oidc.buildAuthorizationUrlWithPAR(config, {
        redirect_uri: SIGNED_CB,
        scope: 'openid',
        state: 'signed-state',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      const callback = await signIn(server, new Browser(server), url.pathname + url.search, user);
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: 'signed-state',
      });
      expect(tokens.claims()!.sub).to.equal(user.id);
    });

    it('oauth4webapi: a public client pushes with its bare client_id, PKCE S256', async function () {
      const insecure = { [oauth.allowInsecureRequests]: true } as const;
      const issuer = new URL(server.issuer);
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
      const client: oauth.Client = { client_id: SPA.id };
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const nonce = oauth.generateRandomNonce();
      const response = await oauth.pushedAuthorizationRequest(
        as,
        client,
        oauth.None(),
        {
          response_type: 'code',
          redirect_uri: SPA_CB,
          scope: 'openid offline_access',
          state,
          nonce,
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        },
        insecure,
      );
      const par = await oauth.processPushedAuthorizationResponse(as, client, response);
      expect(par.expires_in).to.equal(60);
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({ client_id: SPA.id, request_uri: par.request_uri }).toString();
      const callback = await signIn(server, new Browser(server), url.pathname + url.search, user);
      const params = oauth.validateAuthResponse(as, client, callback, state);
      const tokenResponse = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.None(),
        params,
        SPA_CB,
        verifier,
        insecure,
      );
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, tokenResponse, {
        expectedNonce: nonce,
        requireIdToken: true,
      });
      expect(tokens.refresh_token).to.be.a('string');
      expect(oauth.getValidatedIdTokenClaims(tokens)!.sub).to.equal(user.id);
    });

    it('the pushed parameters are the request: the query’s others are ignored', async function () {
      const { fields } = webRequest();
      const requestUri = await pushed(server, fields);
      const browser = new Browser(server);
      const callback = await signIn(
        server,
        browser,
        byReference(WEB.id, requestUri, { redirect_uri: WEB_CB2, state: 'from-the-query', scope: 'openid email' }),
        user,
      );
      expect(callback.href.split('?')[0]).to.equal(WEB_CB);
      expect(callback.searchParams.get('state')).to.equal(fields.state);
      expect(callback.searchParams.get('code')).to.be.a('string');
    });

    it('an app with require_pushed_authorization_requests signs in with a pushed request only', async function () {
      const { fields } = webRequest({ redirect_uri: STRICT_CB, scope: 'openid' });
      const browser = new Browser(server);
      await refusedPage(browser, authorizePath({ client_id: STRICT.id, ...fields }), 'invalid_request');
      const requestUri = await pushed(server, fields, STRICT);
      const callback = await signIn(server, browser, byReference(STRICT.id, requestUri), user);
      expect(callback.href.split('?')[0]).to.equal(STRICT_CB);
      expect(callback.searchParams.get('state')).to.equal(fields.state);
    });
  });

  describe('every refusal, on the server’s clock', function () {
    let server: OAuthServer;
    const clock = new FakeClock(new Date());

    before(async function () {
      const key = await clientKey();
      server = await startServer({
        key,
        plugins: [
          { path: PLUGIN, options: { pushes: { max: 3, window_seconds: 60 } } },
          // An app's own login UI asks for its request id with the cidaas-style generate call.
          { name: '@gatehouse-auth/compat-cidaas' },
        ],
        apps: apps(key),
        clock,
        trustProxy: true,
      });
    });
    after(() => server?.close());
    // Each test in a fresh window of the push limit.
    beforeEach(() => clock.advance(61));

    describe('the PAR endpoint', function () {
      it('201 with a request_uri of 256 random bits, expires_in 60, no-store', async function () {
        const res = await push(server, webRequest().fields, basic(WEB.id, WEB.secret));
        expect(res.status, res.text).to.equal(201);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        expect(res.body.request_uri).to.match(REQUEST_URI);
        expect(res.body.expires_in).to.equal(60);
      });

      it('a fault is answered in OAuth’s style: 500 server_error (the route declares it)', async function () {
        const clients = server.gatehouse.container.cradle.clients;
        const get = clients.get.bind(clients);
        clients.get = () => {
          throw new Error('boom');
        };
        try {
          const res = await push(server, webRequest().fields, basic(WEB.id, WEB.secret));
          expect(res.status, res.text).to.equal(500);
          expect(res.body.error, res.text).to.equal('server_error');
        } finally {
          clients.get = get;
        }
      });

      it('401 invalid_client: no client authentication, a wrong secret, an unknown client', async function () {
        const { fields } = webRequest();
        expectOAuthError(await push(server, fields), 401, 'invalid_client');
        const wrong = await push(server, fields, basic(WEB.id, 'wrong'));
        expectOAuthError(wrong, 401, 'invalid_client');
        expect(wrong.headers.get('www-authenticate')).to.match(/^Basic/);
        // A confidential client cannot pass as public with its bare client_id.
        expectOAuthError(await push(server, { ...fields, client_id: WEB.id }), 401, 'invalid_client');
        expectOAuthError(await push(server, { ...fields, client_id: 'nobody' }), 401, 'invalid_client');
      });

      it('400 invalid_request: request_uri inside a pushed request', async function () {
        const inner = await pushed(server, webRequest().fields);
        const res = await push(server, webRequest({ request_uri: inner }).fields, basic(WEB.id, WEB.secret));
        expectOAuthError(res, 400, 'invalid_request');
      });

      it('400 invalid_request: a redirect_uri the app did not register, or none of several', async function () {
        const auth = basic(WEB.id, WEB.secret);
        const res = await push(server, webRequest({ redirect_uri: `${WEB_CB}/extra` }).fields, auth);
        expect(expectOAuthError(res, 400, 'invalid_request').error_description).to.include('redirect_uri');
        const { redirect_uri: _dropped, ...noRedirect } = webRequest().fields;
        expectOAuthError(await push(server, noRedirect, auth), 400, 'invalid_request');
      });

      it('validated as /authorize validates: scope, response_type, PKCE of a public client', async function () {
        const auth = basic(WEB.id, WEB.secret);
        expectOAuthError(await push(server, webRequest({ scope: 'openid admin' }).fields, auth), 400, 'invalid_scope');
        expectOAuthError(
          await push(server, webRequest({ response_type: 'token' }).fields, auth),
          400,
          'unsupported_response_type',
        );
        const {
          code_challenge: _c,
          code_challenge_method: _m,
          ...noPkce
        } = webRequest({ redirect_uri: SPA_CB }).fields;
        expectOAuthError(await push(server, { ...noPkce, client_id: SPA.id }), 400, 'invalid_request');
        expectOAuthError(
          await push(server, webRequest({ code_challenge_method: 'plain' }).fields, auth),
          400,
          'invalid_request',
        );
      });

      it('400 invalid_request: a repeated parameter, or a client_id that is not the authenticated one', async function () {
        const auth = basic(WEB.id, WEB.secret);
        const repeated: [string, string][] = [...Object.entries(webRequest().fields), ['scope', 'openid']];
        expectOAuthError(await push(server, repeated, auth), 400, 'invalid_request');
        expectOAuthError(
          await push(server, { ...webRequest().fields, client_id: OTHER.id }, auth),
          400,
          'invalid_request',
        );
      });

      it('429 temporarily_unavailable with Retry-After past the pushes of a window', async function () {
        const auth = basic(STRICT.id, STRICT.secret);
        const fields = webRequest({ redirect_uri: STRICT_CB, scope: 'openid' }).fields;
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++) statuses.push((await push(server, fields, auth)).status);
        const blocked = await push(server, fields, auth);
        expect(statuses).to.deep.equal([201, 201, 201]);
        expectOAuthError(blocked, 429, 'temporarily_unavailable');
        expect(Number(blocked.headers.get('retry-after'))).to.be.above(0);
        // Another client has its own count.
        expect((await push(server, webRequest().fields, basic(WEB.id, WEB.secret))).status).to.equal(201);
      });
    });

    describe('/authorize with a request_uri', function () {
      it('used once: a second /authorize with it is refused (invalid_request_uri)', async function () {
        const requestUri = await pushed(server, webRequest().fields);
        const browser = new Browser(server);
        expect(locationOf(await browser.get(byReference(WEB.id, requestUri)), server).pathname).to.equal('/login');
        await refusedPage(browser, byReference(WEB.id, requestUri), 'invalid_request_uri');
        await refusedPage(new Browser(server), byReference(WEB.id, requestUri), 'invalid_request_uri');
      });

      it('racing /authorize requests with one request_uri: exactly one gets it', async function () {
        const requestUri = await pushed(server, webRequest().fields);
        const answers = await Promise.all(
          Array.from({ length: 5 }, () => new Browser(server).get(byReference(WEB.id, requestUri))),
        );
        expect(answers.map((r) => r.status).sort()).to.deep.equal([303, 400, 400, 400, 400]);
      });

      it('expired after expires_in (invalid_request_uri)', async function () {
        const requestUri = await pushed(server, webRequest().fields);
        clock.advance(61);
        await refusedPage(new Browser(server), byReference(WEB.id, requestUri), 'invalid_request_uri');
      });

      it('another app’s request_uri is refused, and stays the other app’s', async function () {
        const requestUri = await pushed(server, webRequest().fields);
        await refusedPage(new Browser(server), byReference(OTHER.id, requestUri), 'invalid_request_uri');
        const next = locationOf(await new Browser(server).get(byReference(WEB.id, requestUri)), server);
        expect(next.pathname).to.equal('/login');
      });

      it('an unknown request_uri, one that is no pushed request; no client_id, an unknown one, with request, repeated', async function () {
        const browser = new Browser(server);
        await refusedPage(
          browser,
          byReference(WEB.id, 'urn:ietf:params:oauth:request_uri:not-a-real-one'),
          'invalid_request_uri',
        );
        await refusedPage(
          browser,
          byReference(WEB.id, 'https://web.example.test/request.jwt'),
          'request_uri_not_supported',
        );
        const requestUri = await pushed(server, webRequest().fields);
        await refusedPage(browser, authorizePath({ request_uri: requestUri }), 'invalid_request');
        await refusedPage(browser, byReference('nobody', requestUri), 'invalid_client');
        await refusedPage(browser, byReference(WEB.id, requestUri, { request: 'e30.e30.' }), 'invalid_request');
        const twice: [string, string][] = [
          ['client_id', WEB.id],
          ['request_uri', requestUri],
          ['request_uri', requestUri],
        ];
        await refusedPage(browser, authorizePath(twice), 'invalid_request');
        // Refused before use: the request is still there.
        expect(locationOf(await browser.get(byReference(WEB.id, requestUri)), server).pathname).to.equal('/login');
      });

      it('a plain request of a require_pushed_authorization_requests app: invalid_request, on the page', async function () {
        const { fields } = webRequest({ redirect_uri: STRICT_CB, scope: 'openid' });
        await refusedPage(new Browser(server), authorizePath({ client_id: STRICT.id, ...fields }), 'invalid_request');
        // Other apps still send plain requests.
        const plain = await new Browser(server).get(authorizePath({ client_id: WEB.id, ...webRequest().fields }));
        expect(locationOf(plain, server).pathname).to.equal('/login');
      });
    });
    describe('an app’s own login UI (generate)', function () {
      const generate = (body: Record<string, string>) =>
        fetch(server.url('/authz-srv/authrequest/authz/generate'), {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });

      it('resolves a request_uri, and refuses a plain request of a PAR-only app', async function () {
        const fields = webRequest({ redirect_uri: STRICT_CB, scope: 'openid' }).fields;
        const plain = await generate({ client_id: STRICT.id, ...fields });
        expect([plain.status, ((await plain.json()) as { error: string }).error]).to.deep.equal([
          400,
          'invalid_request',
        ]);
        // Resolved and valid: refused only because this app has no login UI of its own.
        const requestUri = await pushed(server, fields, STRICT);
        const byUri = await generate({ client_id: STRICT.id, request_uri: requestUri });
        const answer = (await byUri.json()) as { error: string; error_description: string };
        expect([byUri.status, answer.error]).to.deep.equal([400, 'unauthorized_client']);
        expect(answer.error_description).to.include('login_page_url');
      });
    });
  });

  describe('without the plugin, and at start-up', function () {
    it('no discovery members, and a request_uri at /authorize is refused as before (request_uri_not_supported)', async function () {
      const server = await startServer({ minimal: true });
      try {
        const doc = (await (await fetch(server.url('/.well-known/openid-configuration'))).json()) as Record<
          string,
          unknown
        >;
        expect(doc).to.not.have.property('pushed_authorization_request_endpoint');
        expect(doc).to.not.have.property('require_pushed_authorization_requests');
        const res = await new Browser(server).get(
          byReference(WEB.id, 'urn:ietf:params:oauth:request_uri:abc', { redirect_uri: WEB_CB, state: 'xyz' }),
        );
        const callback = locationOf(res, server);
        expect(callback.searchParams.get('error')).to.equal('request_uri_not_supported');
        expect(callback.searchParams.get('state')).to.equal('xyz');
        expect((await postForm(server, '/oauth/par', webRequest().fields, basic(WEB.id, WEB.secret))).status).to.equal(
          404,
        );
      } finally {
        await server.close();
      }
    });

    it('a second request_uri resolver stops start-up', async function () {
      let failure: unknown = null;
      try {
        const server = await startServer({ minimal: true, plugins: [{ path: PLUGIN }, { path: OTHER_RESOLVER }] });
        await server.close();
      } catch (err) {
        failure = err;
      }
      expect(String(failure)).to.include(
        'plugin @fixture/other-resolver: authorization request resolver "request_uri" is already registered by plugin @gatehouse-auth/oauth-par',
      );
    });

    it('the global option requires pushed requests of every app, and says so in discovery', async function () {
      const strict = await registerWithFakes(plugin, { require_pushed_authorization_requests: true });
      expect(strict.metadata.get('require_pushed_authorization_requests')).to.equal(true);
      expect(strict.metadata.get('pushed_authorization_request_endpoint')).to.equal('https://gatehouse.test/oauth/par');
      const app = { settings: { require_pushed_authorization_requests: false } } as never;
      expect(strict.requestResolver!.required!(app)).to.equal(true);
      const lenient = await registerWithFakes(plugin, {});
      expect(lenient.requestResolver!.required!(app)).to.equal(false);
      expect(
        lenient.requestResolver!.required!({ settings: { require_pushed_authorization_requests: true } } as never),
      ).to.equal(true);
    });
  });
});
