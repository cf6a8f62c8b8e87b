/**
 * The FAPI 2.0 Security Profile switch (`security_profile: fapi2`, decisions 0053 and 0080): oauth4webapi
 * drives a FAPI app through PAR with private_key_jwt, PKCE S256 and DPoP-bound tokens, and each
 * refusal the profile adds is asserted with its status, code and description. docs/oauth.md
 * ("FAPI 2.0 Security Profile") maps each requirement to a test here.
 */
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { expect } from 'chai';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import * as oauth from 'oauth4webapi';
import { BootError, checkConfig, parseConfig } from '@gatehouse-auth/core';
import {
  Browser,
  authorizePath,
  locationOf,
  loginWithPassword,
  pkcePair,
  startServer,
  type OAuthServer,
  type TestUser,
} from '../../../test/oauth/support.js';

const insecure = { [oauth.allowInsecureRequests]: true } as const;
const FAPI = 'fapi';
const FAPI_CB = 'https://fapi.example.test/cb';
const FAPI_PLUGIN = { name: '@gatehouse-auth/oauth-fapi' };
const PLUGINS = [{ name: '@gatehouse-auth/oauth-par' }, { name: '@gatehouse-auth/oauth-dpop' }, FAPI_PLUGIN];

/** The FAPI app's entry: private_key_jwt with an EC key and a 2048-bit RSA key (no `alg`: PS256 or RS256). */
function fapiApp(jwks: JWK[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: FAPI,
    security_profile: 'fapi2',
    token_endpoint_auth_method: 'private_key_jwt',
    jwks: { keys: jwks },
    redirect_uris: [FAPI_CB],
    grant_types: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'offline_access'],
    login_stages: [['PASSWORD']],
    // §5.4.1: PS256, ES256 or EdDSA (the ID token's default is RS256).
    id_token_signed_response_alg: 'ES256',
    ...extra,
  };
}

/** Runs a request and its processing, once more when the server asks for a DPoP nonce. */
async function withNonce<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (err) {
    if (!oauth.isDPoPNonceError(err)) throw err;
    return attempt();
  }
}

/** The refusal oauth4webapi reports for a request. */
async function refusal(promise: Promise<unknown>): Promise<{ status: number; error: string; description: string }> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(oauth.ResponseBodyError);
    const e = err as oauth.ResponseBodyError;
    return { status: e.status, error: e.error, description: e.error_description ?? '' };
  }
  throw new Error('the request succeeded');
}

describe('FAPI 2.0 Security Profile (security_profile: fapi2)', function () {
  let server: OAuthServer;
  let user: TestUser;
  let as: oauth.AuthorizationServer;
  let ecKey: CryptoKey;
  let rsaKey: KeyObject;
  const client: oauth.Client = { client_id: FAPI };
  const auth = () => oauth.PrivateKeyJwt({ key: ecKey, kid: 'fapi-ec' });

  before(async function () {
    const ec = await generateKeyPair('ES256');
    // A node KeyObject signs both RS256 and PS256 (a CryptoKey is made for one of them).
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    ecKey = ec.privateKey;
    rsaKey = rsa.privateKey;
    const jwks = [
      { ...(await exportJWK(ec.publicKey)), kid: 'fapi-ec' },
      { ...(rsa.publicKey.export({ format: 'jwk' }) as JWK), kid: 'fapi-rsa' },
    ];
    server = await startServer({ plugins: PLUGINS, apps: [fapiApp(jwks)] });
    user = await server.user('fapi');
    const issuer = new URL(server.issuer);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  });
  after(() => server?.close());

  /** A pushed request of the FAPI app (DPoP proof at PAR binds the code too), and its PKCE verifier. */
  async function push(dpop: oauth.DPoPHandle, params: Record<string, string> = {}) {
    const { verifier, challenge } = pkcePair();
    const state = randomBytes(9).toString('base64url');
    const nonce = randomBytes(9).toString('base64url');
    const { request_uri } = await withNonce(async () =>
      oauth.processPushedAuthorizationResponse(
        as,
        client,
        await oauth.pushedAuthorizationRequest(
          as,
          client,
          auth(),
          {
            response_type: 'code',
            redirect_uri: FAPI_CB,
            scope: 'openid profile offline_access',
            state,
            nonce,
            code_challenge: challenge,
            code_challenge_method: 'S256',
            ...params,
          },
          { DPoP: dpop, ...insecure },
        ),
      ),
    );
    return { request_uri, verifier, state, nonce };
  }

  /** Through the hosted login page to the app's callback with a code. */
  async function signIn(requestUri: string): Promise<URL> {
    const browser = new Browser(server);
    const login = locationOf(await browser.get(authorizePath({ client_id: FAPI, request_uri: requestUri })), server);
    expect(login.pathname).to.equal('/login');
    return locationOf(await loginWithPassword(browser, server, login, user), server);
  }

  const redeem = (callback: URL, state: string, verifier: string, dpop?: oauth.DPoPHandle) =>
    oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth(),
      oauth.validateAuthResponse(as, client, callback, state),
      FAPI_CB,
      verifier,
      { ...(dpop ? { DPoP: dpop } : {}), ...insecure },
    );

  /** A pushed request with a hand-made client assertion: the PAR endpoint's answer. */
  async function pushWithAssertion(
    claims: Record<string, unknown>,
    key: CryptoKey | KeyObject = ecKey,
    alg = 'ES256',
    kid = 'fapi-ec',
  ) {
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({
      iss: FAPI,
      sub: FAPI,
      aud: server.issuer,
      jti: randomBytes(12).toString('base64url'),
      iat: now,
      exp: now + 60,
      ...claims,
    })
      .setProtectedHeader({ alg, kid })
      .sign(key);
    const { challenge } = pkcePair();
    const res = await fetch(server.url('/oauth/par'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: assertion,
        response_type: 'code',
        redirect_uri: FAPI_CB,
        scope: 'openid',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  describe('end to end with oauth4webapi', function () {
    it('PAR with private_key_jwt, PKCE S256, the hosted login, DPoP-bound tokens, a DPoP refresh and userinfo', async function () {
      const dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
      const { request_uri, verifier, state, nonce } = await push(dpop);
      const callback = await signIn(request_uri);
      // RFC 9207: iss in the authorization response (oauth4webapi checks it against the metadata too).
      expect(callback.searchParams.get('iss')).to.equal(server.issuer);
      const tokens = await withNonce(async () =>
        oauth.processAuthorizationCodeResponse(as, client, await redeem(callback, state, verifier, dpop), {
          expectedNonce: nonce,
          requireIdToken: true,
        }),
      );
      expect(tokens.token_type).to.equal('dpop');
      expect(tokens.refresh_token).to.be.a('string');
      const refreshed = await withNonce(async () =>
        oauth.processRefreshTokenResponse(
          as,
          client,
          await oauth.refreshTokenGrantRequest(as, client, auth(), tokens.refresh_token!, { DPoP: dpop, ...insecure }),
        ),
      );
      expect(refreshed.token_type).to.equal('dpop');
      // §5.3.2.1 (9): no rotation: the same refresh token serves again (a lost response is retried).
      expect(refreshed.refresh_token).to.equal(undefined);
      const again = await withNonce(async () =>
        oauth.processRefreshTokenResponse(
          as,
          client,
          await oauth.refreshTokenGrantRequest(as, client, auth(), tokens.refresh_token!, { DPoP: dpop, ...insecure }),
        ),
      );
      expect(again.access_token).to.not.equal(refreshed.access_token);
      // A refresh is a token request like any: without a proof it is refused.
      const bare = await oauth.refreshTokenGrantRequest(as, client, auth(), tokens.refresh_token!, insecure);
      expect(bare.status).to.equal(400);
      expect(((await bare.json()) as { error: string }).error).to.equal('invalid_request');
      const sub = oauth.getValidatedIdTokenClaims(tokens)!.sub;
      const info = await withNonce(async () =>
        oauth.processUserInfoResponse(
          as,
          client,
          sub,
          await oauth.userInfoRequest(as, client, refreshed.access_token, { DPoP: dpop, ...insecure }),
        ),
      );
      expect(info.sub).to.equal(user.id);
    });
  });

  describe('refusals', function () {
    it('a plain /authorize request (not pushed): 400 invalid_request on the error page', async function () {
      const { challenge } = pkcePair();
      const res = await new Browser(server).get(
        authorizePath({
          response_type: 'code',
          client_id: FAPI,
          redirect_uri: FAPI_CB,
          scope: 'openid',
          state: 'plain',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        }),
      );
      expect(res.status).to.equal(400);
      expect(res.headers.get('location')).to.equal(null);
      const page = await res.text();
      expect(page).to.include('invalid_request');
      expect(page).to.include(
        'This app (FAPI 2.0) must push its authorization requests (PAR) and send the request_uri.',
      );
    });

    it('PAR without PKCE: 400 invalid_request', async function () {
      const dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
      expect(await refusal(push(dpop, { code_challenge: '', code_challenge_method: '' }))).to.deep.equal({
        status: 400,
        error: 'invalid_request',
        description: 'PKCE (code_challenge with S256) is required for this app (FAPI 2.0)',
      });
    });

    it('PAR with PKCE plain: 400 invalid_request', async function () {
      const dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
      const verifier = oauth.generateRandomCodeVerifier();
      expect(await refusal(push(dpop, { code_challenge: verifier, code_challenge_method: 'plain' }))).to.deep.equal({
        status: 400,
        error: 'invalid_request',
        description: 'code_challenge_method must be S256',
      });
    });

    it('PAR without redirect_uri (though one is registered): 400 invalid_request', async function () {
      const dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
      expect(await refusal(push(dpop, { redirect_uri: '' }))).to.deep.equal({
        status: 400,
        error: 'invalid_request',
        description: 'The redirect_uri is required for this app (FAPI 2.0).',
      });
    });

    it('a token request without a DPoP proof: 400 invalid_request, and the code stays good', async function () {
      // No proof at PAR either: the code is not bound to a key, so only the FAPI rule refuses it.
      const { request_uri, verifier, state } = await withNonce(async () => {
        const { verifier: v, challenge } = pkcePair();
        const s = randomBytes(9).toString('base64url');
        const res = await oauth.pushedAuthorizationRequest(
          as,
          client,
          auth(),
          {
            response_type: 'code',
            redirect_uri: FAPI_CB,
            scope: 'openid',
            state: s,
            code_challenge: challenge,
            code_challenge_method: 'S256',
          },
          insecure,
        );
        return { ...(await oauth.processPushedAuthorizationResponse(as, client, res)), verifier: v, state: s };
      });
      const callback = await signIn(request_uri);
      const bare = await redeem(callback, state, verifier);
      expect(bare.status).to.equal(400);
      expect(await bare.json()).to.deep.equal({
        error: 'invalid_request',
        error_description:
          'this app (FAPI 2.0) gets sender-constrained tokens only: send a DPoP proof or a client certificate',
      });
      const dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
      const tokens = await withNonce(async () =>
        oauth.processAuthorizationCodeResponse(as, client, await redeem(callback, state, verifier, dpop)),
      );
      expect(tokens.token_type).to.equal('dpop');
    });

    it('a client assertion with the token endpoint as aud: 401 invalid_client', async function () {
      const res = await pushWithAssertion({ aud: server.url('/oauth/token') });
      expect(res).to.deep.equal({
        status: 401,
        body: {
          error: 'invalid_client',
          error_description: `client_assertion aud must be the issuer ${server.issuer}, as a string`,
        },
      });
    });

    it('a client assertion with the issuer in an array as aud: 401 invalid_client', async function () {
      const res = await pushWithAssertion({ aud: [server.issuer] });
      expect(res.status).to.equal(401);
      expect(res.body.error).to.equal('invalid_client');
    });

    it('the issuer as a string is accepted, and nbf 10 s ahead (clock skew, §5.3.2.1)', async function () {
      const now = Math.floor(Date.now() / 1000);
      expect((await pushWithAssertion({})).status).to.equal(201);
      expect((await pushWithAssertion({ nbf: now + 10, iat: now + 10 })).status).to.equal(201);
    });

    it('an assertion whose iat or nbf is 90 s ahead: 401 invalid_client', async function () {
      const now = Math.floor(Date.now() / 1000);
      const iat = await pushWithAssertion({ iat: now + 90 });
      expect(iat).to.deep.equal({
        status: 401,
        body: { error: 'invalid_client', error_description: 'client_assertion iat is in the future' },
      });
      const nbf = await pushWithAssertion({ nbf: now + 90 });
      expect(nbf.status).to.equal(401);
      expect(nbf.body.error).to.equal('invalid_client');
    });

    it('an assertion signed RS256: 401 invalid_client; the same key with PS256 is accepted', async function () {
      const rs = await pushWithAssertion({}, rsaKey, 'RS256', 'fapi-rsa');
      expect(rs.status).to.equal(401);
      expect(rs.body.error).to.equal('invalid_client');
      expect(String(rs.body.error_description)).to.match(/^client_assertion rejected: .*alg/);
      const ps = await pushWithAssertion({}, rsaKey, 'PS256', 'fapi-rsa');
      expect(ps.status).to.equal(201);
    });
  });

  describe('start-up and the config check', function () {
    const ecJwk = async () => ({ ...(await exportJWK((await generateKeyPair('ES256')).publicKey)), kid: 'k' });

    async function bootError(plugins: { name: string }[]): Promise<string> {
      try {
        const s = await startServer({ plugins: [...plugins, FAPI_PLUGIN], apps: [fapiApp([await ecJwk()])] });
        await s.close();
      } catch (err) {
        expect(err).to.be.instanceOf(BootError);
        return (err as Error).message;
      }
      throw new Error('the server started');
    }

    it('no PAR plugin: start-up refuses, naming @gatehouse-auth/oauth-par', async function () {
      expect(await bootError([{ name: '@gatehouse-auth/oauth-dpop' }])).to.match(
        /security_profile: the FAPI 2\.0 app "fapi" needs pushed authorization requests; add @gatehouse-auth\/oauth-par to plugins$/,
      );
    });

    it('no token binding plugin: start-up refuses, naming @gatehouse-auth/oauth-dpop and oauth-mtls', async function () {
      expect(await bootError([{ name: '@gatehouse-auth/oauth-par' }])).to.match(
        /security_profile: the FAPI 2\.0 app "fapi" needs sender-constrained tokens; add @gatehouse-auth\/oauth-dpop or @gatehouse-auth\/oauth-mtls to plugins$/,
      );
    });

    // The app's config is the plugin's to check (decision 80): `config check`, with what the apps need.
    const checked = (app: Record<string, unknown>) =>
      checkConfig({
        config: parseConfig(
          {
            issuer: 'https://id.example.test',
            log: { level: 'silent' },
            plugins: [
              { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
              { name: '@gatehouse-auth/management' },
              { name: '@gatehouse-auth/verification-api' },
              { name: '@gatehouse-auth/page-login' },
              { name: '@gatehouse-auth/grant-authorization-code' },
              { name: '@gatehouse-auth/grant-refresh-token' },
              { name: '@gatehouse-auth/grant-password' },
              ...PLUGINS,
            ],
            apps: [app],
          },
          {},
        ),
        baseDir: process.cwd(),
      });

    async function configProblems(app: Record<string, unknown>): Promise<string> {
      try {
        await checked(app);
      } catch (err) {
        expect(err).to.be.instanceOf(BootError);
        return (err as Error).message;
      }
      throw new Error('the config was accepted');
    }

    it('refuses a public FAPI app, a secret, implicit, password, a long code, an http redirect URI and RS256 ID tokens', async function () {
      const publicApp = await configProblems({
        client_id: 'p',
        security_profile: 'fapi2',
        token_endpoint_auth_method: 'none',
        redirect_uris: ['http://127.0.0.1/cb'],
        response_types: ['code', 'token'],
        grant_types: ['authorization_code', 'password'],
        code_ttl: 120,
      });
      expect(publicApp).to.include(
        'apps[0].token_endpoint_auth_method: is none; a FAPI 2.0 app (security_profile fapi2) is a confidential client that authenticates with private_key_jwt or tls_client_auth',
      );
      expect(publicApp).to.include('apps[0].response_types[1]: token: a FAPI 2.0 app uses response_type code only');
      expect(publicApp).to.include('apps[0].grant_types[1]: password: FAPI 2.0 forbids this grant');
      expect(publicApp).to.include('apps[0].code_ttl: must be at most 60 seconds for a FAPI 2.0 app');
      expect(publicApp).to.include('apps[0].redirect_uris[0]: must be https for a FAPI 2.0 app');
      expect(publicApp).to.include(
        "apps[0].id_token_signed_response_alg: is RS256; a FAPI 2.0 app's tokens are signed PS256, ES256 or EdDSA",
      );
      const secret = await configProblems({
        client_id: 's',
        security_profile: 'fapi2',
        client_secret: 'a-secret-of-at-least-32-characters-long',
        redirect_uris: [FAPI_CB],
      });
      expect(secret).to.include('apps[0].token_endpoint_auth_method: is client_secret_basic;');
    });

    it('refuses an RSA key under 2048 bits; accepts a FAPI app that meets the profile', async function () {
      const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
      const short = { ...(publicKey.export({ format: 'jwk' }) as JWK), kid: 'short' };
      expect(await configProblems(fapiApp([short]))).to.include(
        'apps[0].jwks.keys[0]: an RSA key of a FAPI 2.0 app has at least 2048 bits',
      );
      await checked(fapiApp([await ecJwk()]));
      const config = parseConfig({ issuer: 'https://id.example.test', apps: [fapiApp([await ecJwk()])] }, {});
      expect(config.apps[0]!.security_profile).to.equal('fapi2');
    });
  });
});
