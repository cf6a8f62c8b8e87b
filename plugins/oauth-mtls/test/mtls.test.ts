/**
 * Mutual TLS (RFC 8705) end to end behind a real TLS-terminating proxy: a CA and client
 * certificates made by openssl, a node:https proxy that asks for the certificate and forwards it
 * URL-encoded as nginx does, and openid-client 6 (`TlsClientAuth`, no mTLS aliases) presenting
 * the certificate through its custom fetch. Gatehouse trusts the proxy's address only
 * (`trust_proxy: 127.0.0.2`): a client reaching it directly with the header is not believed.
 */
import { createHash, createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { buildApp, createLogger, listen, parseConfig, type RunningServer } from '@gatehouse-auth/core';
import { freePort } from '../../../test/oauth/support.js';
import { makePki, type Issued, type Pki } from './pki.js';
import { mtlsFetch, startProxy, type Proxy } from './proxy.js';

const PLUGIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DPOP = path.resolve(PLUGIN, '../oauth-dpop');
const ADMIN_TOKEN = 'mtls-suite-admin-token-0123456789abcdef012345';
const PASSWORD = 'correct horse battery staple 42';
/** The proxy connects from this address; the test's direct requests come from 127.0.0.1. */
const PROXY_ADDRESS = '127.0.0.2';
/** A second proxy that forwards certificates it did not verify (nginx `optional_no_ca`). */
const NO_CA_PROXY_ADDRESS = '127.0.0.3';

const PAYMENTS_DN = 'CN=payments,OU=Treasury\\, Europe,O=Example,C=DE';
const SECRET_BOUND = { id: 'secret-bound', secret: 'secret-bound-secret-0123456789abcdef0123456' };

const x5t = (pem: string) => createHash('sha256').update(new X509Certificate(pem).raw).digest('base64url');

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

const answer = async (res: Response): Promise<Answer> => {
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
};

describe('@gatehouse-auth/oauth-mtls behind a TLS-terminating proxy', function () {
  this.timeout(60_000);
  let pki: Pki;
  let payments: Issued;
  let stranger: Issued;
  let selfSigned: Issued;
  let selfSignedOther: Issued;
  let proxy: Proxy;
  let noCaProxy: Proxy;
  let running: RunningServer;
  let internal: string;
  let user: { username: string };

  /** A form POST through the proxy, presenting `cert` (or no certificate). */
  const post = async (
    where: string,
    fields: Record<string, string>,
    cert?: Issued,
    headers: Record<string, string> = {},
  ) =>
    answer(
      await mtlsFetch(pki.ca.cert, cert)(`${proxy.url}${where}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields),
      }),
    );

  /** The same POST straight to Gatehouse (not through the proxy), with a certificate header of its own. */
  const postDirect = async (where: string, fields: Record<string, string>, forged: Issued) =>
    answer(
      await fetch(`${internal}${where}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'X-SSL-Client-Cert': encodeURIComponent(forged.cert),
        },
        body: new URLSearchParams(fields).toString(),
      }),
    );

  const userinfo = async (token: string, cert?: Issued) =>
    answer(
      await mtlsFetch(pki.ca.cert, cert)(`${proxy.url}/userinfo`, { headers: { Authorization: `Bearer ${token}` } }),
    );

  /** openid-client configured for the `payments` app, presenting `cert`. */
  const paymentsClient = (cert?: Issued) =>
    oidc.discovery(new URL(proxy.url), 'payments', { use_mtls_endpoint_aliases: false }, oidc.TlsClientAuth(), {
      [oidc.customFetch]: mtlsFetch(pki.ca.cert, cert),
    });

  before(async function () {
    pki = makePki();
    payments = pki.client('/C=DE/O=Example/OU=Treasury, Europe/CN=payments', 'DNS:payments.example.test');
    stranger = pki.client('/C=DE/O=Example/CN=stranger', 'DNS:stranger.example.test');
    selfSigned = pki.selfSigned('/C=DE/O=Example/OU=Treasury, Europe/CN=payments');
    selfSignedOther = pki.selfSigned('/CN=device');
    const registered = createPublicKey(selfSigned.cert).export({ format: 'jwk' });
    const otherJwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    const port = await freePort();
    // The proxy needs Gatehouse's port, Gatehouse the proxy's URL (its issuer): the port is chosen first.
    proxy = await startProxy({
      server: pki.server,
      ca: pki.ca.cert,
      target: { host: '127.0.0.1', port },
      localAddress: PROXY_ADDRESS,
    });
    noCaProxy = await startProxy({
      server: pki.server,
      ca: pki.ca.cert,
      target: { host: '127.0.0.1', port },
      localAddress: NO_CA_PROXY_ADDRESS,
      noCa: true,
    });
    internal = `http://127.0.0.1:${port}`;
    const config = parseConfig(
      {
        issuer: proxy.url,
        server: { host: '127.0.0.1', port, trust_proxy: `${PROXY_ADDRESS}, ${NO_CA_PROXY_ADDRESS}` },
        database: { url: 'sqlite::memory:' },
        log: { level: 'silent' },
        secrets: { encryption_key: Buffer.alloc(32, 5).toString('base64') },
        admin: { token: ADMIN_TOKEN },
        plugins: [
          { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
          { name: '@gatehouse-auth/grant-client-credentials' },
          { name: '@gatehouse-auth/grant-password' },
          { name: '@gatehouse-auth/grant-refresh-token' },
          { name: '@gatehouse-auth/grant-authorization-code' },
          { name: '@gatehouse-auth/oauth-par' },
          { name: '@gatehouse-auth/oidc-userinfo' },
          { name: '@gatehouse-auth/oauth-fapi' },
          { name: '@gatehouse-auth/admin-api' },
          { name: '@gatehouse-auth/management' },
          { name: '@gatehouse-auth/page-login' },
          { name: '@gatehouse-auth/verification-api' },
          { name: '@gatehouse-auth/setup-api' },
          { path: PLUGIN, options: { trusted_ca_certificates: [pki.ca.cert] } },
          { path: DPOP },
        ],
        apps: [
          {
            client_id: 'payments',
            token_endpoint_auth_method: 'tls_client_auth',
            tls_client_auth_subject_dn: PAYMENTS_DN,
            tls_client_certificate_bound_access_tokens: true,
            grant_types: ['client_credentials'],
            scopes: ['payments', 'introspection'],
          },
          {
            client_id: 'payments-web',
            token_endpoint_auth_method: 'tls_client_auth',
            tls_client_auth_subject_dn: PAYMENTS_DN,
            grant_types: ['authorization_code'],
            redirect_uris: ['https://payments.example.test/cb'],
            scopes: ['openid'],
            login_stages: [['PASSWORD']],
          },
          {
            // RFC 8705 §2.2: its certificate's key is in its jwks (beside an RSA key of another use).
            client_id: 'device',
            token_endpoint_auth_method: 'self_signed_tls_client_auth',
            jwks: {
              keys: [
                { ...registered, kid: 'device-cert' },
                { ...otherJwk, kid: 'other' },
              ],
            },
            tls_client_certificate_bound_access_tokens: true,
            grant_types: ['client_credentials'],
            scopes: ['payments'],
          },
          {
            // FAPI 2.0 with mutual TLS: tls_client_auth, and the certificate is the sender constraint.
            client_id: 'payments-fapi',
            security_profile: 'fapi2',
            token_endpoint_auth_method: 'tls_client_auth',
            tls_client_auth_subject_dn: PAYMENTS_DN,
            grant_types: ['client_credentials'],
            scopes: ['payments'],
            id_token_signed_response_alg: 'ES256',
            access_token_signed_response_alg: 'ES256',
          },
          {
            client_id: 'payments-san',
            token_endpoint_auth_method: 'tls_client_auth',
            tls_client_auth_san_dns: 'PAYMENTS.example.test',
            grant_types: ['client_credentials'],
            scopes: ['payments'],
            token_format: 'opaque',
          },
          {
            client_id: SECRET_BOUND.id,
            client_secret: SECRET_BOUND.secret,
            tls_client_certificate_bound_access_tokens: true,
            grant_types: ['client_credentials'],
            scopes: ['payments'],
          },
          {
            client_id: 'mobile',
            token_endpoint_auth_method: 'none',
            grant_types: ['password', 'refresh_token'],
            scopes: ['openid', 'profile', 'offline_access'],
            login_stages: [['PASSWORD']],
          },
        ],
      },
      {},
    );
    const level = (process.env.GATEHOUSE_TEST_LOG ?? 'silent') as Parameters<typeof createLogger>[0];
    const gatehouse = await buildApp(config, { logger: createLogger(level) });
    running = await listen(gatehouse);
    const created = await gatehouse.container.cradle.users.create({
      username: `mtls${process.pid}`,
      email: 'mtls@example.test',
    });
    const res = await fetch(`${internal}/verification-actions-srv/setup/PASSWORD/initiation`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sub: created.id, password: PASSWORD }),
    });
    expect(res.status, await res.text()).to.equal(200);
    user = { username: `mtls${process.pid}` };
  });

  after(async function () {
    await running?.shutdown();
    await proxy?.close();
    await noCaProxy?.close();
    pki?.remove();
  });

  it('an app naming tls_client_auth without the plugin stops start-up', async function () {
    let failure: unknown = null;
    try {
      await buildApp(
        parseConfig(
          {
            issuer: 'https://id.example.test',
            database: { url: 'sqlite::memory:' },
            secrets: { encryption_key: Buffer.alloc(32, 5).toString('base64') },
            log: { level: 'silent' },
            plugins: [{ name: '@gatehouse-auth/grant-client-credentials' }],
            apps: [
              {
                client_id: 'payments',
                token_endpoint_auth_method: 'tls_client_auth',
                grant_types: ['client_credentials'],
              },
            ],
          },
          {},
        ),
        { logger: createLogger('silent') },
      );
    } catch (err) {
      failure = err;
    }
    expect(String(failure)).to.equal(
      'BootError: apps[0].token_endpoint_auth_method: no plugin provides tls_client_auth (add @gatehouse-auth/oauth-mtls to plugins)',
    );
  });

  it('discovery names tls_client_auth and certificate-bound tokens, and no mTLS aliases', async function () {
    const config = await paymentsClient(payments);
    const meta = config.serverMetadata();
    expect(meta.issuer).to.equal(proxy.url);
    expect(meta.token_endpoint_auth_methods_supported).to.include('tls_client_auth');
    expect(meta.introspection_endpoint_auth_methods_supported).to.include('tls_client_auth');
    expect(meta.revocation_endpoint_auth_methods_supported).to.include('tls_client_auth');
    expect(meta.tls_client_certificate_bound_access_tokens).to.equal(true);
    expect(meta.mtls_endpoint_aliases).to.equal(undefined);
  });

  it('openid-client: tls_client_auth at the token, introspection and revocation endpoints; the token carries cnf.x5t#S256', async function () {
    const config = await paymentsClient(payments);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'payments introspection' });
    expect(tokens.token_type).to.equal('bearer');
    const cnf = { 'x5t#S256': x5t(payments.cert) };
    expect(decodeJwt(tokens.access_token).cnf).to.deep.equal(cnf);
    const seen = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(seen.active).to.equal(true);
    expect(seen.cnf).to.deep.equal(cnf);
    expect(seen.token_type).to.equal('bearer');
    await oidc.tokenRevocation(config, tokens.access_token);
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).to.equal(false);
  });

  it('openid-client: a pushed authorization request (RFC 9126) authenticated with tls_client_auth; none is 401 invalid_client', async function () {
    const config = await oidc.discovery(
      new URL(proxy.url),
      'payments-web',
      { use_mtls_endpoint_aliases: false },
      oidc.TlsClientAuth(),
      { [oidc.customFetch]: mtlsFetch(pki.ca.cert, payments) },
    );
    const params = {
      redirect_uri: 'https://payments.example.test/cb',
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    };
    const url = await oidc.buildAuthorizationUrlWithPAR(config, params);
    expect(url.searchParams.get('request_uri')).to.match(/^urn:ietf:params:oauth:request_uri:/);
    const refused = await post('/oauth/par', { client_id: 'payments-web', response_type: 'code', ...params });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(401);
    expect(refused.body.error).to.equal('invalid_client');
  });

  it('self_signed_tls_client_auth: the certificate whose key the app registered (through a proxy that does not verify); another is 401 invalid_client', async function () {
    const via = (cert?: Issued) =>
      mtlsFetch(pki.ca.cert, cert)(`${noCaProxy.url}/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'device' }),
      }).then(answer);
    const ok = await via(selfSigned);
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(decodeJwt(String(ok.body.access_token)).cnf).to.deep.equal({ 'x5t#S256': x5t(selfSigned.cert) });
    for (const [cert, why] of [
      [selfSignedOther, "the client certificate's key is not one of the app's keys (jwks)"],
      [payments, "the client certificate's key is not one of the app's keys (jwks)"],
      [undefined, 'self_signed_tls_client_auth needs a client certificate'],
    ] as const) {
      const refused = await via(cert);
      expect(refused.status, why).to.equal(401);
      expect(refused.body.error).to.equal('invalid_client');
      expect(refused.body.error_description).to.equal(why);
    }
    const meta = (await paymentsClient(payments)).serverMetadata();
    expect(meta.token_endpoint_auth_methods_supported).to.include('self_signed_tls_client_auth');
  });

  it('a FAPI 2.0 app (security_profile fapi2) with tls_client_auth: its certificate makes the tokens sender-constrained', async function () {
    const config = await oidc.discovery(
      new URL(proxy.url),
      'payments-fapi',
      { use_mtls_endpoint_aliases: false },
      oidc.TlsClientAuth(),
      { [oidc.customFetch]: mtlsFetch(pki.ca.cert, payments) },
    );
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'payments' });
    const claims = decodeJwt(tokens.access_token);
    expect(claims.cnf).to.deep.equal({ 'x5t#S256': x5t(payments.cert) });
    // The same app through the header of an untrusted address authenticates with nothing.
    const direct = await postDirect(
      '/oauth/token',
      { grant_type: 'client_credentials', client_id: 'payments-fapi' },
      payments,
    );
    expect(direct.status, JSON.stringify(direct.body)).to.equal(401);
    expect(direct.body.error).to.equal('invalid_client');
  });

  it('a certificate-bound token is no bearer token for introspection: 401 invalid_token', async function () {
    const config = await paymentsClient(payments);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'payments introspection' });
    const res = await post('/token/introspect', { token: tokens.access_token }, payments, {
      Authorization: `Bearer ${tokens.access_token}`,
    });
    expect(res.status).to.equal(401);
    expect(res.body.error).to.equal('invalid_token');
  });

  it('a SAN DNS name matches case-insensitively (payments-san)', async function () {
    const res = await post('/oauth/token', { grant_type: 'client_credentials', client_id: 'payments-san' }, payments);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const seen = await post(
      '/token/introspect',
      { token: String(res.body.access_token), client_id: 'payments-san' },
      payments,
    );
    expect(seen.body.cnf).to.deep.equal({ 'x5t#S256': x5t(payments.cert) });
  });

  describe('refusals', function () {
    const expectError = (res: Answer, status: number, error: string) => {
      expect(res.status, JSON.stringify(res.body)).to.equal(status);
      expect(res.body.error).to.equal(error);
    };

    it('another subject DN (a certificate of the same CA): 401 invalid_client', async function () {
      const res = await post('/oauth/token', { grant_type: 'client_credentials', client_id: 'payments' }, stranger);
      expectError(res, 401, 'invalid_client');
      expect(res.body.error_description).to.equal('the client certificate does not match tls_client_auth_subject_dn');
      const config = await paymentsClient(stranger);
      const err = await oidc.clientCredentialsGrant(config, { scope: 'payments' }).then(
        () => null,
        (e: unknown) => e as oidc.WWWAuthenticateChallengeError,
      );
      // The core's invalid_client 401 carries `WWW-Authenticate: Basic` (RFC 6749 §5.2), which
      // openid-client reports as a challenge; the body's code is asserted above.
      expect(err?.status).to.equal(401);
      expect(err?.cause[0]?.scheme).to.equal('basic');
    });

    it('another SAN: 401 invalid_client', async function () {
      const res = await post('/oauth/token', { grant_type: 'client_credentials', client_id: 'payments-san' }, stranger);
      expectError(res, 401, 'invalid_client');
    });

    it('no certificate: 401 invalid_client, also at introspection and revocation', async function () {
      expectError(
        await post('/oauth/token', { grant_type: 'client_credentials', client_id: 'payments' }),
        401,
        'invalid_client',
      );
      expectError(await post('/token/introspect', { token: 'x', client_id: 'payments' }), 401, 'invalid_client');
      expectError(await post('/oauth2/revoke/', { token: 'x', client_id: 'payments' }), 401, 'invalid_client');
    });

    it('a secret beside tls_client_auth: 401 invalid_client', async function () {
      const res = await post(
        '/oauth/token',
        { grant_type: 'client_credentials', client_id: 'payments', client_secret: 'x'.repeat(40) },
        payments,
      );
      expectError(res, 401, 'invalid_client');
    });

    it('a certificate the proxy cannot verify never reaches Gatehouse (the proxy answers 400)', async function () {
      const res = await mtlsFetch(pki.ca.cert, selfSigned)(`${proxy.url}/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'payments' }),
      });
      expect(res.status).to.equal(400);
      expect(await res.text()).to.equal('The SSL certificate error');
    });

    it('trusted_ca_certificates: a self-signed certificate with the right DN, forwarded unverified, is 401 invalid_client', async function () {
      const via = (cert: Issued) =>
        mtlsFetch(pki.ca.cert, cert)(`${noCaProxy.url}/oauth/token`, {
          method: 'POST',
          body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'payments' }),
        }).then(answer);
      const forged = await via(selfSigned);
      expectError(forged, 401, 'invalid_client');
      expect(forged.body.error_description).to.equal(
        'the client certificate is not issued by a trusted CA (trusted_ca_certificates)',
      );
      const genuine = await via(payments);
      expect(genuine.status, JSON.stringify(genuine.body)).to.equal(200);
    });

    it('the header from an untrusted address (a client reaching Gatehouse directly) is ignored: 401 invalid_client', async function () {
      const res = await postDirect(
        '/oauth/token',
        { grant_type: 'client_credentials', client_id: 'payments' },
        payments,
      );
      expectError(res, 401, 'invalid_client');
      expect(res.body.error_description).to.equal('tls_client_auth needs a client certificate');
    });

    it('the header from an untrusted address binds nothing: a public client gets a bearer token', async function () {
      const res = await postDirect(
        '/oauth/token',
        { grant_type: 'password', client_id: 'mobile', username: user.username, password: PASSWORD, scope: 'openid' },
        payments,
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(decodeJwt(String(res.body.access_token)).cnf).to.equal(undefined);
    });

    it('tls_client_certificate_bound_access_tokens without a certificate: 400 invalid_request; with one, bound', async function () {
      const fields = { grant_type: 'client_credentials' };
      const basic = {
        Authorization: `Basic ${Buffer.from(`${SECRET_BOUND.id}:${SECRET_BOUND.secret}`).toString('base64')}`,
      };
      const refused = await post('/oauth/token', fields, undefined, basic);
      expectError(refused, 400, 'invalid_request');
      expect(refused.body.error_description).to.equal(
        'this app must present a client certificate (tls_client_certificate_bound_access_tokens)',
      );
      const bound = await post('/oauth/token', fields, stranger, basic);
      expect(bound.status).to.equal(200);
      expect(decodeJwt(String(bound.body.access_token)).cnf).to.deep.equal({ 'x5t#S256': x5t(stranger.cert) });
    });
  });

  describe('a public client with a certificate (certificate-bound access and refresh tokens)', function () {
    const passwordGrant = (cert?: Issued) =>
      post(
        '/oauth/token',
        {
          grant_type: 'password',
          client_id: 'mobile',
          username: user.username,
          password: PASSWORD,
          scope: 'openid offline_access',
        },
        cert,
      );

    it('userinfo answers over a connection with the certificate only: none or another is 401 invalid_token', async function () {
      const tokens = await passwordGrant(payments);
      expect(tokens.status, JSON.stringify(tokens.body)).to.equal(200);
      const token = String(tokens.body.access_token);
      expect(decodeJwt(token).cnf).to.deep.equal({ 'x5t#S256': x5t(payments.cert) });
      const ok = await userinfo(token, payments);
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(ok.body.sub).to.be.a('string');
      for (const cert of [undefined, stranger]) {
        const refused = await userinfo(token, cert);
        expect(refused.status).to.equal(401);
        expect(refused.body.error).to.equal('invalid_token');
        expect(refused.body.error_description).to.equal(
          'the token is bound to a client certificate the request does not present',
        );
        expect(refused.headers.get('www-authenticate')).to.match(/^Bearer error="invalid_token"/);
      }
      // Straight to Gatehouse with the certificate in the header: not believed either.
      const direct = await answer(
        await fetch(`${internal}/userinfo`, {
          headers: { Authorization: `Bearer ${token}`, 'X-SSL-Client-Cert': encodeURIComponent(payments.cert) },
        }),
      );
      expect(direct.status).to.equal(401);
      expect(direct.body.error).to.equal('invalid_token');
    });

    it('the refresh token is bound too: another certificate or none is 400 invalid_grant; its own refreshes', async function () {
      const tokens = await passwordGrant(payments);
      const refresh = String(tokens.body.refresh_token);
      const fields = { grant_type: 'refresh_token', client_id: 'mobile', refresh_token: refresh };
      for (const cert of [stranger, undefined]) {
        const refused = await post('/oauth/token', fields, cert);
        expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
        expect(refused.body.error).to.equal('invalid_grant');
        expect(refused.body.error_description).to.equal(
          'the refresh token is bound to another client certificate (mutual TLS)',
        );
      }
      const refreshed = await post('/oauth/token', fields, payments);
      expect(refreshed.status, JSON.stringify(refreshed.body)).to.equal(200);
      expect(decodeJwt(String(refreshed.body.access_token)).cnf).to.deep.equal({ 'x5t#S256': x5t(payments.cert) });
    });

    it('without a certificate the tokens are bearer tokens, as before', async function () {
      const tokens = await passwordGrant();
      expect(tokens.status).to.equal(200);
      expect(decodeJwt(String(tokens.body.access_token)).cnf).to.equal(undefined);
      expect((await userinfo(String(tokens.body.access_token))).status).to.equal(200);
    });
  });

  it('DPoP and mutual TLS together: the token is bound to both (cnf jkt and x5t#S256, token_type DPoP)', async function () {
    const config = await oidc.discovery(
      new URL(proxy.url),
      'mobile',
      { token_endpoint_auth_method: 'none' },
      oidc.None(),
      {
        [oidc.customFetch]: mtlsFetch(pki.ca.cert, payments),
      },
    );
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keys = {
      publicKey: await crypto.subtle.importKey(
        'spki',
        publicKey.export({ type: 'spki', format: 'der' }),
        { name: 'ECDSA', namedCurve: 'P-256' },
        true,
        ['verify'],
      ),
      privateKey: await crypto.subtle.importKey(
        'pkcs8',
        privateKey.export({ type: 'pkcs8', format: 'der' }),
        { name: 'ECDSA', namedCurve: 'P-256' },
        false,
        ['sign'],
      ),
    };
    const dpop = oidc.getDPoPHandle(config, keys);
    const tokens = await oidc.genericGrantRequest(
      config,
      'password',
      { username: user.username, password: PASSWORD, scope: 'openid' },
      { DPoP: dpop },
    );
    expect(tokens.token_type).to.equal('dpop');
    const cnf = decodeJwt(tokens.access_token).cnf as Record<string, string>;
    expect(cnf['x5t#S256']).to.equal(x5t(payments.cert));
    expect(cnf.jkt).to.be.a('string');
    const info = await oidc.fetchUserInfo(config, tokens.access_token, oidc.skipSubjectCheck, { DPoP: dpop });
    expect(info.sub).to.be.a('string');
  });
});
