/**
 * RFC 7591/7592 end to end on a real server: oauth4webapi 3 registers a client with an initial
 * access token, the client signs in through the hosted login (with consent) to tokens, then reads,
 * updates and deletes its registration, after which its tokens are refused. Every refusal of the
 * registration and configuration endpoints with its exact status and code; admin-minted initial
 * access tokens; the rate limit; two nodes on one PostgreSQL database.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import {
  ADMIN_TOKEN,
  Browser,
  WEB,
  authorize,
  expectOAuthError,
  locationOf,
  pkcePair,
  postForm,
  startServer,
  type JsonResponse,
  type OAuthServer,
  type TestUser,
} from '../../../test/oauth/support.js';
import { withPostgresDatabase } from '../../../test/support/postgres.js';

const PLUGIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const INITIAL = 'operator-handed-initial-access-token-0123456789';
const digest = (token: string) => createHash('sha256').update(token).digest('base64url');
const CB = 'https://registered.example.test/cb';
const ORIGIN = 'https://spa-site.example.test';

/** A JSON call; the answer with its parsed body. */
async function call(
  server: OAuthServer,
  method: string,
  where: string,
  body?: unknown,
  token?: string,
  contentType = 'application/json',
): Promise<JsonResponse> {
  const res = await fetch(where.startsWith('http') ? where : server.url(where), {
    method,
    headers: {
      Accept: 'application/json',
      ...(body !== undefined ? { 'Content-Type': contentType } : {}),
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = {};
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

const register = (server: OAuthServer, metadata: unknown, token: string | undefined = INITIAL) =>
  call(server, 'POST', '/oauth/register', metadata, token);

/** A registration's answer, asserted 201. */
async function registered(server: OAuthServer, metadata: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await register(server, metadata);
  expect(res.status, res.text).to.equal(201);
  return res.body;
}

/** Authorize → hosted login → consent (allowed) → the client's callback. */
async function signInWithConsent(
  server: OAuthServer,
  browser: Browser,
  params: Record<string, string>,
  user: TestUser,
): Promise<URL> {
  const page = locationOf(await authorize(browser, server, params, user), server);
  expect(page.pathname, page.href).to.equal('/login/consent');
  const html = await (await browser.get(page.pathname + page.search)).text();
  const requestId = /name="request_id" value="([^"]+)"/.exec(html)![1]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
  return locationOf(
    await browser.postForm('/login/consent', { request_id: requestId, csrf, decision: 'allow' }),
    server,
  );
}

const plugin = (options: Record<string, unknown> = {}) => ({
  path: PLUGIN,
  options: { initial_access_tokens_sha256: [digest(INITIAL)], ...options },
});

describe('@gatehouse-auth/oauth-dcr (RFC 7591/7592)', function () {
  let server: OAuthServer;
  let user: TestUser;

  before(async function () {
    // Every call counts, refused ones too: room for this suite's.
    server = await startServer({
      plugins: [plugin({ registrations: { max: 500, window_seconds: 3600 } })],
      // A site the operator lets call the APIs from the browser (CORS).
      apps: [{ client_id: 'site', redirect_uris: [CB], allowed_origins: [ORIGIN], login_stages: [['PASSWORD']] }],
    });
    user = await server.user('dcr');
  });
  after(() => server?.close());

  it('announces registration_endpoint', async function () {
    for (const p of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const doc = (await (await fetch(server.url(p))).json()) as Record<string, unknown>;
      expect(doc.registration_endpoint).to.equal(server.url('/oauth/register'));
    }
  });

  it('oauth4webapi registers, signs in, reads, updates and deletes; the deleted client’s tokens are refused', async function () {
    const insecure = { [oauth.allowInsecureRequests]: true } as const;
    const issuer = new URL(server.issuer);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const response = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: 'Registered App',
        redirect_uris: [CB],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: 'openid profile offline_access',
        contacts: ['ops@registered.example.test'],
        client_uri: 'https://registered.example.test/',
        tos_uri: 'https://registered.example.test/tos',
        // Unknown metadata is ignored (RFC 7591 §2) and never echoed.
        software_version: '1.0',
        login_stages: [['TOTP']],
        consent_required: false,
      },
      { ...insecure, initialAccessToken: INITIAL },
    );
    const client = await oauth.processDynamicClientRegistrationResponse(response);
    expect(client.client_id).to.match(/^dcr-[A-Za-z0-9_-]{22}$/);
    expect(client.client_secret).to.be.a('string');
    expect(client.client_secret_expires_at).to.equal(0);
    expect(client.client_id_issued_at).to.be.a('number');
    expect(client.client_name).to.equal('Registered App');
    expect(client.redirect_uris).to.deep.equal([CB]);
    expect(client.scope).to.equal('openid profile offline_access');
    expect(client.grant_types).to.deep.equal(['authorization_code', 'refresh_token']);
    expect(client.response_types).to.deep.equal(['code']);
    expect(client.contacts).to.deep.equal(['ops@registered.example.test']);
    expect(client.tos_uri).to.equal('https://registered.example.test/tos');
    expect(client).to.not.have.property('software_version');
    expect(client).to.not.have.property('login_stages');
    const rat = client.registration_access_token as string;
    const configUri = client.registration_client_uri as string;
    expect(configUri).to.equal(server.url(`/oauth/register/${client.client_id}`));

    // The admin API sees it as a database app with the server's login stages and consent.
    const listed = await fetch(server.url(`/admin/apps/${client.client_id}`), {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const app = ((await listed.json()) as { data: { source: string; app: Record<string, unknown> } }).data;
    expect(app.source).to.equal('database');
    expect(app.app.login_stages).to.deep.equal([['PASSWORD']]);
    expect(app.app.consent_required).to.equal(true);

    // The hosted login with the new client, consent, tokens.
    const browser = new Browser(server);
    const { verifier, challenge } = pkcePair();
    const callback = await signInWithConsent(
      server,
      browser,
      {
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: CB,
        scope: 'openid profile offline_access',
        state: 'dcr-state',
        nonce: 'dcr-nonce',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      },
      user,
    );
    expect(callback.href.split('?')[0]).to.equal(CB);
    const params = oauth.validateAuthResponse(as, client, callback, 'dcr-state');
    const tokenResponse = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(client.client_secret as string),
      params,
      CB,
      verifier,
      insecure,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, tokenResponse, {
      expectedNonce: 'dcr-nonce',
      requireIdToken: true,
    });
    expect(oauth.getValidatedIdTokenClaims(tokens)!.sub).to.equal(user.id);
    expect(tokens.refresh_token).to.be.a('string');

    // RFC 7592 §2.1: read.
    const read = await call(server, 'GET', configUri, undefined, rat);
    expect(read.status, read.text).to.equal(200);
    expect(read.headers.get('cache-control')).to.equal('no-store');
    expect(read.body.client_id).to.equal(client.client_id);
    expect(read.body.client_name).to.equal('Registered App');
    expect(read.body.registration_access_token).to.equal(rat);
    expect(read.body).to.not.have.property('client_secret');

    // §2.2: update (the secret may be sent, unchanged; the registration token stays).
    const updated = await call(
      server,
      'PUT',
      configUri,
      {
        client_id: client.client_id,
        client_secret: client.client_secret,
        client_name: 'Renamed App',
        redirect_uris: [CB, 'https://registered.example.test/cb2'],
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'openid profile offline_access',
      },
      rat,
    );
    expect(updated.status, updated.text).to.equal(200);
    expect(updated.body.client_name).to.equal('Renamed App');
    expect(updated.body.redirect_uris).to.deep.equal([CB, 'https://registered.example.test/cb2']);
    expect(updated.body).to.not.have.property('contacts');
    expect(updated.body.registration_access_token).to.equal(rat);

    // The tokens still work until the client deletes itself.
    const userinfo = () =>
      fetch(as.userinfo_endpoint!, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect((await userinfo()).status).to.equal(200);
    // §2.3: delete → 204; the app and its tokens are gone.
    const deleted = await call(server, 'DELETE', configUri, undefined, rat);
    expect(deleted.status).to.equal(204);
    const refused = await userinfo();
    expect(refused.status).to.equal(401);
    expect(refused.headers.get('www-authenticate')).to.include('invalid_token');
    const refreshed = await postForm(
      server,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
      `Basic ${Buffer.from(`${client.client_id}:${client.client_secret as string}`).toString('base64')}`,
    );
    expectOAuthError(refreshed, 401, 'invalid_client');
    // The registration is gone: the token manages nothing any more.
    expectOAuthError(await call(server, 'GET', configUri, undefined, rat), 401, 'invalid_token');
  });

  it('CORS: a single-page app on an allowed origin registers from the browser; other origins get no CORS headers', async function () {
    const pre = await fetch(server.url('/oauth/register'), {
      method: 'OPTIONS',
      headers: {
        Origin: ORIGIN,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type',
      },
    });
    expect(pre.status).to.equal(204);
    expect(pre.headers.get('access-control-allow-origin')).to.equal(ORIGIN);
    const res = await fetch(server.url('/oauth/register'), {
      method: 'POST',
      headers: { Origin: ORIGIN, 'Content-Type': 'application/json', Authorization: `Bearer ${INITIAL}` },
      body: JSON.stringify({ redirect_uris: [CB], token_endpoint_auth_method: 'none' }),
    });
    expect(res.status).to.equal(201);
    expect(res.headers.get('access-control-allow-origin')).to.equal(ORIGIN);
    const other = await fetch(server.url('/oauth/register'), {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example.test', 'Access-Control-Request-Method': 'POST' },
    });
    expect(other.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('openid-client: dynamicClientRegistration with the initial access token', async function () {
    const config = await oidc.dynamicClientRegistration(
      new URL(server.issuer),
      { redirect_uris: [CB], token_endpoint_auth_method: 'none', client_name: 'SPA' },
      oidc.None(),
      { initialAccessToken: INITIAL, execute: [oidc.allowInsecureRequests] },
    );
    const meta = config.clientMetadata();
    expect(meta.client_id).to.match(/^dcr-/);
    expect(meta.client_secret).to.equal(undefined);
    expect(meta.registration_access_token).to.be.a('string');
    expect(config.serverMetadata().registration_endpoint).to.equal(server.url('/oauth/register'));
  });

  it('a public client (none) gets no secret; private_key_jwt with jwks gets none either', async function () {
    const pub = await registered(server, { redirect_uris: [CB], token_endpoint_auth_method: 'none' });
    expect(pub).to.not.have.property('client_secret');
    expect(pub.token_endpoint_auth_method).to.equal('none');
    const signed = await registered(server, {
      redirect_uris: [CB],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [server.key.publicJwk] },
    });
    expect(signed).to.not.have.property('client_secret');
    expect(signed.jwks).to.deep.equal({ keys: [server.key.publicJwk] });
  });

  describe('refusals of POST /oauth/register', function () {
    it('no initial access token → 401 invalid_token with WWW-Authenticate Bearer', async function () {
      const res = await register(server, { redirect_uris: [CB] }, '');
      expectOAuthError(res, 401, 'invalid_token');
      expect(res.headers.get('www-authenticate')).to.match(/^Bearer error="invalid_token"/);
    });

    it('a wrong initial access token → 401 invalid_token, before the body is read', async function () {
      expectOAuthError(await register(server, { redirect_uris: [CB] }, 'not-the-token'), 401, 'invalid_token');
      expectOAuthError(await register(server, '{"broken', 'not-the-token'), 401, 'invalid_token');
    });

    const cases: [string, unknown, string][] = [
      [
        'a software statement',
        { redirect_uris: [CB], software_statement: 'e30.e30.' },
        'unapproved_software_statement',
      ],
      ['no redirect URI for the code grant', { client_name: 'x' }, 'invalid_redirect_uri'],
      [
        'an http redirect URI on a public host',
        { redirect_uris: ['http://evil.example.test/cb'] },
        'invalid_redirect_uri',
      ],
      ['a redirect URI with a fragment', { redirect_uris: ['https://a.example.test/cb#x'] }, 'invalid_redirect_uri'],
      ['a scope not allowed', { redirect_uris: [CB], scope: 'openid admin' }, 'invalid_client_metadata'],
      ['the implicit grant', { redirect_uris: [CB], grant_types: ['implicit'] }, 'invalid_client_metadata'],
      ['the password grant', { redirect_uris: [CB], grant_types: ['password'] }, 'invalid_client_metadata'],
      [
        'client_credentials (not allowed by default)',
        { grant_types: ['client_credentials'] },
        'invalid_client_metadata',
      ],
      ['response type token', { redirect_uris: [CB], response_types: ['token'] }, 'invalid_client_metadata'],
      [
        'client_secret_jwt',
        { redirect_uris: [CB], token_endpoint_auth_method: 'client_secret_jwt' },
        'invalid_client_metadata',
      ],
      [
        'private_key_jwt without keys',
        { redirect_uris: [CB], token_endpoint_auth_method: 'private_key_jwt' },
        'invalid_client_metadata',
      ],
      [
        'a jwks_uri (not allowed by default)',
        { redirect_uris: [CB], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://a.example.test/jwks' },
        'invalid_client_metadata',
      ],
      [
        'jwks and jwks_uri',
        { redirect_uris: [CB], jwks: { keys: [] }, jwks_uri: 'https://a.example.test/jwks' },
        'invalid_client_metadata',
      ],
      [
        'an empty jwks',
        { redirect_uris: [CB], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [] } },
        'invalid_client_metadata',
      ],
      ['an http logo_uri', { redirect_uris: [CB], logo_uri: 'http://a.example.test/l.png' }, 'invalid_client_metadata'],
      ['redirect_uris not an array', { redirect_uris: CB }, 'invalid_client_metadata'],
      [
        'an unsupported signing alg',
        { redirect_uris: [CB], id_token_signed_response_alg: 'none' },
        'invalid_client_metadata',
      ],
      ['a JSON array', [CB], 'invalid_client_metadata'],
      ['broken JSON', '{"redirect_uris": [', 'invalid_client_metadata'],
    ];
    for (const [what, body, code] of cases) {
      it(`${what} → 400 ${code}`, async function () {
        expectOAuthError(await register(server, body), 400, code);
      });
    }

    it('a form body → 400 invalid_client_metadata', async function () {
      const res = await call(
        server,
        'POST',
        '/oauth/register',
        `redirect_uris=${CB}`,
        INITIAL,
        'application/x-www-form-urlencoded',
      );
      expectOAuthError(res, 400, 'invalid_client_metadata');
    });
  });

  describe('RFC 7592 refusals', function () {
    it('a wrong or missing registration token, another client’s, a config app, an admin-made app, one deleted and made again → 401 invalid_token', async function () {
      const one = await registered(server, { redirect_uris: [CB] });
      const two = await registered(server, { redirect_uris: [CB] });
      const uri = one.registration_client_uri as string;
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const body = method === 'PUT' ? { client_id: one.client_id, redirect_uris: [CB] } : undefined;
        const none = await call(server, method, uri, body);
        expectOAuthError(none, 401, 'invalid_token');
        expect(none.headers.get('www-authenticate')).to.match(/^Bearer /);
        expectOAuthError(await call(server, method, uri, body, 'wrong'), 401, 'invalid_token');
        expectOAuthError(
          await call(server, method, uri, body, two.registration_access_token as string),
          401,
          'invalid_token',
        );
        expectOAuthError(
          await call(server, method, `/oauth/register/${WEB.id}`, body, two.registration_access_token as string),
          401,
          'invalid_token',
        );
      }
      // An app made by the admin API: not the plugin's to manage.
      const made = await fetch(server.url('/admin/apps'), {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ client_id: 'admin-made', redirect_uris: [CB] }),
      });
      expect(made.status).to.equal(201);
      expectOAuthError(
        await call(server, 'DELETE', '/oauth/register/admin-made', undefined, INITIAL),
        401,
        'invalid_token',
      );
      // Deleted by an admin and made again with its id: the old registration token manages nothing.
      const three = await registered(server, { redirect_uris: [CB] });
      const threeId = three.client_id as string;
      const adminCall = (method: string, where: string, body?: unknown) =>
        fetch(server.url(where), {
          method,
          headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      expect((await adminCall('DELETE', `/admin/apps/${threeId}`)).status).to.equal(200);
      await new Promise((r) => setTimeout(r, 5));
      expect((await adminCall('POST', '/admin/apps', { client_id: threeId, redirect_uris: [CB] })).status).to.equal(
        201,
      );
      const threeRat = three.registration_access_token as string;
      expectOAuthError(
        await call(server, 'GET', `/oauth/register/${threeId}`, undefined, threeRat),
        401,
        'invalid_token',
      );
      expectOAuthError(
        await call(server, 'DELETE', `/oauth/register/${threeId}`, undefined, threeRat),
        401,
        'invalid_token',
      );
      // Still there.
      expect(
        (
          await call(
            server,
            'GET',
            `/oauth/register/${one.client_id as string}`,
            undefined,
            one.registration_access_token as string,
          )
        ).status,
      ).to.equal(200);
    });

    it('an update with another client_id, a server field, a wrong secret or a forbidden grant → 400', async function () {
      const one = await registered(server, { redirect_uris: [CB] });
      const uri = one.registration_client_uri as string;
      const rat = one.registration_access_token as string;
      const base = { client_id: one.client_id, redirect_uris: [CB] };
      expectOAuthError(
        await call(server, 'PUT', uri, { ...base, client_id: 'dcr-other' }, rat),
        400,
        'invalid_client_metadata',
      );
      expectOAuthError(
        await call(server, 'PUT', uri, { ...base, registration_access_token: rat }, rat),
        400,
        'invalid_client_metadata',
      );
      expectOAuthError(
        await call(server, 'PUT', uri, { ...base, client_secret: 'x'.repeat(43) }, rat),
        400,
        'invalid_client_metadata',
      );
      expectOAuthError(
        await call(server, 'PUT', uri, { ...base, grant_types: ['password'] }, rat),
        400,
        'invalid_client_metadata',
      );
      expectOAuthError(
        await call(server, 'PUT', uri, { ...base, redirect_uris: ['http://evil.example.test/'] }, rat),
        400,
        'invalid_redirect_uri',
      );
      // A confidential client cannot become public.
      expectOAuthError(
        await call(server, 'PUT', uri, { ...base, token_endpoint_auth_method: 'none' }, rat),
        400,
        'invalid_client_metadata',
      );
    });
  });

  describe('initial access tokens minted by an admin', function () {
    const mint = (body: unknown, token = ADMIN_TOKEN) =>
      call(server, 'POST', '/admin/registration-tokens', body, token);

    it('single use: refused metadata keeps it, the second registration with it → 401 invalid_token', async function () {
      const res = await mint({ uses: 'single', ttl_seconds: 600 });
      expect(res.status, res.text).to.equal(201);
      const token = (res.body.data as { initial_access_token: string }).initial_access_token;
      // Refused metadata does not use it up.
      expectOAuthError(
        await register(server, { redirect_uris: [CB], scope: 'admin' }, token),
        400,
        'invalid_client_metadata',
      );
      expect((await register(server, { redirect_uris: [CB] }, token)).status).to.equal(201);
      expectOAuthError(await register(server, { redirect_uris: [CB] }, token), 401, 'invalid_token');
    });

    it('multi use: until it expires', async function () {
      const res = await mint({ uses: 'multi' });
      const token = (res.body.data as { initial_access_token: string }).initial_access_token;
      expect((await register(server, { redirect_uris: [CB] }, token)).status).to.equal(201);
      expect((await register(server, { redirect_uris: [CB] }, token)).status).to.equal(201);
    });

    it('without the admin token → 401 UNAUTHORIZED; bad fields → 400 INVALID_FIELD', async function () {
      const res = await mint({}, 'not-admin');
      expect(res.status).to.equal(401);
      expect(res.text).to.include('UNAUTHORIZED');
      for (const bad of [{ ttl_seconds: 5 }, { ttl_seconds: 'x' }, { uses: 'twice' }]) {
        const refused = await mint(bad);
        expect(refused.status, refused.text).to.equal(400);
        expect(refused.text).to.include('INVALID_FIELD');
      }
    });
  });
});

describe('@gatehouse-auth/oauth-dcr options', function () {
  let server: OAuthServer;
  before(async function () {
    server = await startServer({
      plugins: [
        plugin({
          open_registration: true,
          registrations: { max: 4, window_seconds: 3600 },
          allowed_grant_types: ['client_credentials'],
          allowed_scopes: ['reports.read'],
          client_id_prefix: 'reg_',
          allow_jwks_uri: true,
        }),
      ],
    });
  });
  after(() => server?.close());

  it('open registration, client_credentials and an https jwks_uri when allowed, then 429 per address', async function () {
    const res = await call(server, 'POST', '/oauth/register', {
      grant_types: ['client_credentials'],
      scope: 'reports.read',
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.client_id).to.match(/^reg_/);
    expect(res.body.response_types).to.deep.equal([]);
    const token = await postForm(
      server,
      '/oauth/token',
      { grant_type: 'client_credentials', scope: 'reports.read' },
      `Basic ${Buffer.from(`${res.body.client_id as string}:${res.body.client_secret as string}`).toString('base64')}`,
    );
    expect(token.status, token.text).to.equal(200);
    expectOAuthError(
      await call(server, 'POST', '/oauth/register', { grant_types: ['authorization_code'], redirect_uris: [CB] }),
      400,
      'invalid_client_metadata',
    );
    expectOAuthError(
      await call(server, 'POST', '/oauth/register', {
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: 'http://169.254.169.254/jwks',
      }),
      400,
      'invalid_client_metadata',
    );
    const withUri = await call(server, 'POST', '/oauth/register', {
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'https://keys.example.test/jwks',
    });
    expect(withUri.status, withUri.text).to.equal(201);
    expect(withUri.body.jwks_uri).to.equal('https://keys.example.test/jwks');
    const limited = await call(server, 'POST', '/oauth/register', { grant_types: ['client_credentials'] });
    expectOAuthError(limited, 429, 'temporarily_unavailable');
    expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
  });
});

describe('@gatehouse-auth/oauth-dcr without the plugin', function () {
  it('no registration_endpoint; /oauth/register answers 404', async function () {
    const server = await startServer({ minimal: true });
    try {
      const doc = (await (await fetch(server.url('/.well-known/openid-configuration'))).json()) as Record<
        string,
        unknown
      >;
      expect(doc).to.not.have.property('registration_endpoint');
      expect((await register(server, { redirect_uris: [CB] })).status).to.equal(404);
    } finally {
      await server.close();
    }
  });
});

describe('@gatehouse-auth/oauth-dcr on two nodes sharing one PostgreSQL database', function () {
  const db = withPostgresDatabase();
  let a: OAuthServer;
  let b: OAuthServer;
  before(async function () {
    const config = { oauth: { clients_poll_seconds: 0 } };
    a = await startServer({ databaseUrl: db.url, config, plugins: [plugin()] });
    b = await startServer({ databaseUrl: db.url, config, plugins: [plugin()], key: a.key });
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });

  it('registered on A, signs in on B, managed and deleted on B', async function () {
    const res = await register(a, { redirect_uris: [CB], token_endpoint_auth_method: 'none', scope: 'openid' });
    expect(res.status, res.text).to.equal(201);
    const clientId = res.body.client_id as string;
    const user = await b.user('dcr-nodes');
    const { challenge } = pkcePair();
    const callback = await signInWithConsent(
      b,
      new Browser(b),
      {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: CB,
        scope: 'openid',
        state: 's',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      },
      user,
    );
    expect(callback.searchParams.get('code')).to.be.a('string');
    const rat = res.body.registration_access_token as string;
    const onB = `/oauth/register/${clientId}`;
    expect((await call(b, 'GET', onB, undefined, rat)).status).to.equal(200);
    expect((await call(b, 'DELETE', onB, undefined, rat)).status).to.equal(204);
    expectOAuthError(await call(a, 'GET', onB, undefined, rat), 401, 'invalid_token');
  });
});
