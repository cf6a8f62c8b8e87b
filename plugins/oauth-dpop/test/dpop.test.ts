/**
 * DPoP (RFC 9449) end to end on a real server: oauth4webapi's and openid-client's DPoP handles
 * drive the code flow, refresh and userinfo, and client credentials; hand-made proofs check each
 * refusal with its exact status and code; two nodes on one database refuse a replayed proof and
 * take each other's nonces; a server without the plugin ignores the header as before.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK, type CryptoKey } from 'jose';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { withPostgresDatabase } from '../../../test/support/postgres.js';
import {
  MACHINE,
  SPA,
  SPA_CB,
  basic,
  clientKey,
  decodeJwtParts,
  expectOAuthError,
  introspect,
  machineToken,
  obtainCode,
  startServer,
  type JsonResponse,
  type OAuthServer,
  type TestUser,
} from '../../../test/oauth/support.js';

const PLUGIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECOND_BINDING = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/second-binding.ts');
const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** A browser origin the FREE app allows (CORS). */
const ORIGIN = 'https://dpop-spa.example.test';
/** A confidential service app whose token requests must carry a proof. */
const BOUND = { id: 'dpop-bound', secret: 'dpop-bound-secret-0123456789abcdef012345678' };
/** A confidential service app that may send a proof or not. */
const FREE = { id: 'dpop-free', secret: 'dpop-free-secret-0123456789abcdef0123456789' };
const APPS = [
  {
    client_id: BOUND.id,
    client_secret: BOUND.secret,
    grant_types: ['client_credentials'],
    scopes: ['reports.read'],
    dpop_bound_access_tokens: true,
  },
  {
    client_id: FREE.id,
    client_secret: FREE.secret,
    grant_types: ['client_credentials'],
    scopes: ['reports.read'],
    token_format: 'opaque',
    allowed_origins: [ORIGIN],
  },
];

interface ProofKey {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

async function proofKey(alg = 'ES256'): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}

const now = () => Math.floor(Date.now() / 1000);
const sha256 = async (value: string) =>
  Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(value))).toString('base64url');

/** A proof signed with `key`; claims and header members override the defaults of a token request. */
async function proof(
  server: OAuthServer,
  key: ProofKey,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT({
    htm: 'POST',
    htu: server.url('/oauth/token'),
    iat: now(),
    jti: randomBytes(12).toString('base64url'),
    ...claims,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk, ...header })
    .sign(key.privateKey);
}

/** POSTs a form to the token endpoint with the given headers (Authorization, DPoP). */
async function tokenPost(
  server: OAuthServer,
  fields: Record<string, string>,
  headers: Record<string, string>,
  where = '/oauth/token',
): Promise<JsonResponse> {
  const res = await fetch(server.url(where), {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : {}, text };
}

const serviceToken = (server: OAuthServer, app: { id: string; secret: string }, dpop?: string) =>
  tokenPost(
    server,
    { grant_type: 'client_credentials', scope: 'reports.read' },
    { Authorization: basic(app.id, app.secret), ...(dpop ? { DPoP: dpop } : {}) },
  );

async function userinfo(server: OAuthServer, authorization: string, dpop?: string): Promise<JsonResponse> {
  const res = await fetch(server.url('/userinfo'), {
    headers: { Authorization: authorization, ...(dpop ? { DPoP: dpop } : {}) },
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : {}, text };
}

/** Retries once on use_dpop_nonce, as RFC 9449 §8 asks a client to (oauth4webapi leaves the retry to us). */
async function withNonceRetry<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!oauth.isDPoPNonceError(err)) throw err;
    return fn();
  }
}

const spa: oauth.Client = { client_id: SPA.id };

/**
 * The SPA's code flow with oauth4webapi, its token request carrying `handle`'s proofs (retried once
 * on use_dpop_nonce); `tries` says how many token requests it took.
 */
async function codeFlow(
  server: OAuthServer,
  as: oauth.AuthorizationServer,
  user: TestUser,
  handle: oauth.DPoPHandle,
  scope = 'openid profile offline_access',
): Promise<oauth.TokenEndpointResponse & { tries: number }> {
  const got = await obtainCode(server, user, { clientId: SPA.id, redirectUri: SPA_CB, scope });
  const params = oauth.validateAuthResponse(as, spa, got.callback, got.state);
  let tries = 0;
  const tokens = await withNonceRetry(async () => {
    tries += 1;
    const res = await oauth.authorizationCodeGrantRequest(as, spa, oauth.None(), params, SPA_CB, got.verifier, {
      DPoP: handle,
      ...insecure,
    });
    return oauth.processAuthorizationCodeResponse(as, spa, res, { expectedNonce: got.nonce });
  });
  return { ...tokens, tries };
}

/** The `sub` userinfo answers for a DPoP-bound token with `handle`'s proof (oauth4webapi). */
async function userinfoSub(
  as: oauth.AuthorizationServer,
  user: TestUser,
  token: string,
  handle: oauth.DPoPHandle,
): Promise<string> {
  const res = await oauth.userInfoRequest(as, spa, token, { DPoP: handle, ...insecure });
  return (await oauth.processUserInfoResponse(as, spa, user.id, res)).sub;
}

async function discover(server: OAuthServer): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(server.issuer);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
}

describe('@gatehouse-auth/oauth-dpop (RFC 9449)', function () {
  let server: OAuthServer;
  let user: TestUser;
  let as: oauth.AuthorizationServer;
  before(async function () {
    server = await startServer({ plugins: [{ path: PLUGIN }], apps: APPS });
    user = await server.user('dpop');
    as = await discover(server);
  });
  after(() => server?.close());

  it('announces dpop_signing_alg_values_supported in discovery', function () {
    expect(as.dpop_signing_alg_values_supported).to.deep.equal(['ES256', 'EdDSA', 'Ed25519']);
  });

  it('oauth4webapi: code flow, userinfo and refresh with one key; the tokens are bound to it', async function () {
    const keyPair = await oauth.generateKeyPair('ES256');
    const handle = oauth.DPoP(spa, keyPair);
    const tokens = await codeFlow(server, as, user, handle);
    expect(tokens.token_type).to.equal('dpop');
    expect(tokens.refresh_token).to.be.a('string');
    const jkt = await handle.calculateThumbprint();

    // The JWT access token and introspection carry the key's thumbprint (RFC 9449 §6).
    expect(decodeJwtParts(tokens.access_token).payload.cnf).to.deep.equal({ jkt });
    const introspector = (await machineToken(server, 'introspection')).body.access_token as string;
    const seen = await tokenPost(
      server,
      { token: tokens.access_token },
      { Authorization: `Bearer ${introspector}` },
      '/token/introspect',
    );
    expect(seen.body).to.include({ active: true, token_type: 'DPoP' });
    expect(seen.body.cnf).to.deep.equal({ jkt });
    // The refresh token of a public client is bound too.
    const rt = await tokenPost(
      server,
      { token: tokens.refresh_token! },
      { Authorization: `Bearer ${introspector}` },
      '/token/introspect',
    );
    expect(rt.body.cnf).to.deep.equal({ jkt });

    expect(await userinfoSub(as, user, tokens.access_token, handle)).to.equal(user.id);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      spa,
      await oauth.refreshTokenGrantRequest(as, spa, oauth.None(), tokens.refresh_token!, { DPoP: handle, ...insecure }),
    );
    expect(refreshed.token_type).to.equal('dpop');
    expect(decodeJwtParts(refreshed.access_token).payload.cnf).to.deep.equal({ jkt });
  });

  it('a refresh with another key’s proof, or with none, is invalid_grant and revokes nothing', async function () {
    const handle = oauth.DPoP(spa, await oauth.generateKeyPair('ES256'));
    const tokens = await codeFlow(server, as, user, handle);
    const other = await proofKey();
    const fields = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: SPA.id };
    expectOAuthError(await tokenPost(server, fields, { DPoP: await proof(server, other) }), 400, 'invalid_grant');
    expectOAuthError(await tokenPost(server, fields, {}), 400, 'invalid_grant');
    // The holder of the key still refreshes: nothing was rotated or revoked.
    const res = await oauth.refreshTokenGrantRequest(as, spa, oauth.None(), tokens.refresh_token!, {
      DPoP: handle,
      ...insecure,
    });
    expect((await oauth.processRefreshTokenResponse(as, spa, res)).token_type).to.equal('dpop');
  });

  it('openid-client: getDPoPHandle through client credentials; the JWT carries cnf.jkt', async function () {
    const config = await oidc.discovery(new URL(server.issuer), BOUND.id, BOUND.secret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    const keyPair = await oidc.randomDPoPKeyPair('ES256');
    const DPoP = oidc.getDPoPHandle(config, keyPair);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'reports.read' }, { DPoP });
    expect(tokens.token_type).to.equal('dpop');
    const jkt = await DPoP.calculateThumbprint();
    expect(decodeJwtParts(tokens.access_token).payload.cnf).to.deep.equal({ jkt });
    const seen = await tokenPost(
      server,
      { token: tokens.access_token },
      { Authorization: basic(BOUND.id, BOUND.secret) },
      '/token/introspect',
    );
    expect(seen.body).to.include({ active: true, token_type: 'DPoP' });
    expect(seen.body.cnf).to.deep.equal({ jkt });
  });

  it('an opaque token bound to a key: token_type DPoP and cnf in introspection', async function () {
    const key = await proofKey();
    const res = await serviceToken(server, FREE, await proof(server, key));
    expect(res.status, res.text).to.equal(200);
    expect(res.body.token_type).to.equal('DPoP');
    const seen = await introspect(server, res.body.access_token as string, FREE);
    expect(seen.cnf).to.deep.equal({ jkt: key.jkt });
    // The same app without a proof gets a bearer token, without cnf.
    const bearer = await serviceToken(server, FREE);
    expect(bearer.body.token_type).to.equal('bearer');
    expect(await introspect(server, bearer.body.access_token as string, FREE)).to.not.have.property('cnf');
  });

  it('a bound token with the introspection scope is no bearer token at introspection: 401 invalid_token', async function () {
    const key = await proofKey();
    const res = await tokenPost(
      server,
      { grant_type: 'client_credentials', scope: 'introspection' },
      { Authorization: basic(MACHINE.id, MACHINE.secret), DPoP: await proof(server, key) },
    );
    expect(res.body.token_type).to.equal('DPoP');
    const bearer = (await machineToken(server, 'introspection')).body.access_token as string;
    const asBearer = { Authorization: `Bearer ${res.body.access_token as string}` };
    expectOAuthError(await tokenPost(server, { token: bearer }, asBearer, '/token/introspect'), 401, 'invalid_token');
  });

  describe('refusals at the token endpoint', function () {
    let key: ProofKey;
    before(async () => (key = await proofKey()));

    /** 400 invalid_dpop_proof, for the reason given. */
    const refused = async (dpop: string | undefined, reason: RegExp) => {
      const body = expectOAuthError(await serviceToken(server, BOUND, dpop), 400, 'invalid_dpop_proof');
      expect(body.error_description).to.match(reason);
    };

    it('no proof for an app with dpop_bound_access_tokens: 400 invalid_dpop_proof', async function () {
      await refused(undefined, /must send a DPoP proof/);
    });

    it('a proof for another method (htm) or URL (htu): 400 invalid_dpop_proof', async function () {
      await refused(await proof(server, key, { htm: 'GET' }), /htm/);
      await refused(await proof(server, key, { htu: server.url('/oauth/other') }), /htu/);
      await refused(await proof(server, key, { htu: 'https://elsewhere.example.test/oauth/token' }), /htu/);
    });

    it('htu is compared without query and fragment', async function () {
      const res = await serviceToken(
        server,
        BOUND,
        await proof(server, key, { htu: `${server.url('/oauth/token')}?a=1#f` }),
      );
      expect(res.status, res.text).to.equal(200);
    });

    it('a stale iat (61 s + skew) or one from the future: 400 invalid_dpop_proof', async function () {
      await refused(await proof(server, key, { iat: now() - 70 }), /iat/);
      await refused(await proof(server, key, { iat: now() + 60 }), /iat/);
      // 50 s old is within the window.
      expect((await serviceToken(server, BOUND, await proof(server, key, { iat: now() - 50 }))).status).to.equal(200);
    });

    it('a replayed jti: the first use succeeds, the second is refused', async function () {
      const once = await proof(server, key);
      expect((await serviceToken(server, BOUND, once)).status).to.equal(200);
      await refused(once, /used already/);
    });

    it('alg none and HS256 are refused', async function () {
      const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
      const claims = { htm: 'POST', htu: server.url('/oauth/token'), iat: now(), jti: 'none-1' };
      await refused(`${b64({ alg: 'none', typ: 'dpop+jwt', jwk: key.jwk })}.${b64(claims)}.`, /alg must be/);
      const hs = await new SignJWT({ ...claims, jti: 'hs-1' })
        .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: key.jwk })
        .sign(randomBytes(32));
      await refused(hs, /alg must be/);
    });

    it('a private key in jwk, a wrong typ, a bad signature: 400 invalid_dpop_proof', async function () {
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      const privateJwk = await exportJWK(privateKey);
      await refused(await proof(server, key, {}, { jwk: privateJwk }), /public key/);
      await refused(await proof(server, key, {}, { typ: 'JWT' }), /typ/);
      const other = await proofKey();
      const good = await proof(server, key);
      const [h, p] = good.split('.');
      await refused(`${h}.${p}.${(await proof(server, other)).split('.')[2]}`, /signature/);
      // Signed by another key than the one in jwk.
      await refused(await proof(server, other, {}, { jwk: key.jwk }), /signature/);
    });

    it('two DPoP headers: 400 invalid_dpop_proof', async function () {
      const res = await fetch(server.url('/oauth/token'), {
        method: 'POST',
        headers: [
          ['Content-Type', 'application/x-www-form-urlencoded'],
          ['Authorization', basic(BOUND.id, BOUND.secret)],
          ['DPoP', await proof(server, key)],
          ['DPoP', await proof(server, key)],
        ],
        body: 'grant_type=client_credentials',
      });
      expect(res.status).to.equal(400);
      expect(await res.json()).to.include({
        error: 'invalid_dpop_proof',
        error_description: 'exactly one DPoP header is required',
      });
    });
  });

  describe('userinfo', function () {
    let key: ProofKey;
    let token: string;
    before(async function () {
      token = (await codeFlow(server, as, user, oauth.DPoP(spa, await oauth.generateKeyPair('ES256')))).access_token;
      // Not the token's key.
      key = await proofKey();
    });

    const resourceProof = async (k: ProofKey, claims: Record<string, unknown> = {}) =>
      proof(server, k, { htm: 'GET', htu: server.url('/userinfo'), ath: await sha256(token), ...claims });

    it('a bound token as Bearer: 401 invalid_token with a DPoP challenge', async function () {
      const res = await userinfo(server, `Bearer ${token}`);
      expect(res.status).to.equal(401);
      expect(res.body.error).to.equal('invalid_token');
      expect(res.headers.get('www-authenticate')).to.match(/^DPoP error="invalid_token"/);
      expect(res.headers.get('www-authenticate')).to.include('algs="ES256 EdDSA Ed25519"');
    });

    it('a proof of another key than the token’s: 401 invalid_token', async function () {
      const res = await userinfo(server, `DPoP ${token}`, await resourceProof(key));
      expect(res.status).to.equal(401);
      expect(res.body.error).to.equal('invalid_token');
    });

    it('a missing or wrong ath, or no proof: 401 invalid_dpop_proof with a DPoP challenge', async function () {
      for (const dpop of [
        await resourceProof(key, { ath: undefined }),
        await resourceProof(key, { ath: await sha256('another token') }),
        undefined,
      ]) {
        const res = await userinfo(server, `DPoP ${token}`, dpop);
        expect(res.status, res.text).to.equal(401);
        expect(res.body.error).to.equal('invalid_dpop_proof');
        expect(res.headers.get('www-authenticate')).to.match(/^DPoP error="invalid_dpop_proof"/);
      }
    });

    it('a bearer token stays a bearer token', async function () {
      const got = await obtainCode(server, user, { clientId: SPA.id, redirectUri: SPA_CB, scope: 'openid profile' });
      const res = await tokenPost(
        server,
        {
          grant_type: 'authorization_code',
          code: got.code,
          redirect_uri: SPA_CB,
          code_verifier: got.verifier,
          client_id: SPA.id,
        },
        {},
      );
      expect(res.body.token_type).to.equal('bearer');
      const info = await userinfo(server, `Bearer ${res.body.access_token as string}`);
      expect(info.status, info.text).to.equal(200);
    });
  });

  it('a second plugin registering a token binding stops start-up', async function () {
    let failure: unknown = null;
    try {
      const other = await startServer({ plugins: [{ path: PLUGIN }, { path: SECOND_BINDING }] });
      await other.close();
    } catch (err) {
      failure = err;
    }
    expect(String(failure)).to.match(/token binding "jkt" is already registered by plugin @gatehouse-auth\/oauth-dpop/);
  });
});

describe('@gatehouse-auth/oauth-dpop with server nonces', function () {
  let server: OAuthServer;
  let as: oauth.AuthorizationServer;
  let user: TestUser;
  before(async function () {
    server = await startServer({ plugins: [{ path: PLUGIN, options: { nonces: true } }], apps: APPS });
    as = await discover(server);
    user = await server.user('nonce');
  });
  after(() => server?.close());

  it('the first request answers use_dpop_nonce with a DPoP-Nonce header; the retry with it succeeds', async function () {
    const key = await proofKey();
    const first = await serviceToken(server, BOUND, await proof(server, key));
    expectOAuthError(first, 400, 'use_dpop_nonce');
    const nonce = first.headers.get('dpop-nonce');
    expect(nonce).to.be.a('string');
    const second = await serviceToken(server, BOUND, await proof(server, key, { nonce }));
    expect(second.status, second.text).to.equal(200);
    expect(second.headers.get('dpop-nonce')).to.equal(nonce);
    // A made-up nonce is not taken.
    expectOAuthError(
      await serviceToken(server, BOUND, await proof(server, key, { nonce: `${nonce}x` })),
      400,
      'use_dpop_nonce',
    );
  });

  it('CORS: a browser may send DPoP and read DPoP-Nonce and WWW-Authenticate', async function () {
    const pre = await fetch(server.url('/oauth/token'), {
      method: 'OPTIONS',
      headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'dpop' },
    });
    expect(pre.status).to.equal(204);
    expect(pre.headers.get('access-control-allow-headers')).to.include('dpop');
    const res = await fetch(server.url('/oauth/token'), {
      method: 'POST',
      headers: {
        Origin: ORIGIN,
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: basic(FREE.id, FREE.secret),
        DPoP: await proof(server, await proofKey()),
      },
      body: 'grant_type=client_credentials',
    });
    expect(res.status).to.equal(400);
    expect(res.headers.get('access-control-allow-origin')).to.equal(ORIGIN);
    expect(res.headers.get('access-control-expose-headers')).to.equal('DPoP-Nonce,WWW-Authenticate');
    expect(res.headers.get('dpop-nonce')).to.be.a('string');
  });

  it('oauth4webapi learns the nonce from the refusal and retries a client credentials request', async function () {
    const client: oauth.Client = { client_id: BOUND.id };
    const handle = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const tokens = await withNonceRetry(async () =>
      oauth.processClientCredentialsResponse(
        as,
        client,
        await oauth.clientCredentialsGrantRequest(
          as,
          client,
          oauth.ClientSecretBasic(BOUND.secret),
          { scope: 'reports.read' },
          {
            DPoP: handle,
            ...insecure,
          },
        ),
      ),
    );
    expect(tokens.token_type).to.equal('dpop');
  });

  it('oauth4webapi: code flow and userinfo, each answering use_dpop_nonce first (401 with a DPoP challenge at userinfo)', async function () {
    const handle = oauth.DPoP(spa, await oauth.generateKeyPair('ES256'));
    const tokens = await codeFlow(server, as, user, handle, 'openid profile');
    expect(tokens.tries).to.equal(2);
    expect(tokens.token_type).to.equal('dpop');
    // The nonce the token endpoint gave is good at userinfo too (one server, one nonce).
    expect(await userinfoSub(as, user, tokens.access_token, handle)).to.equal(user.id);
    // A fresh handle knows no nonce: userinfo answers 401 use_dpop_nonce with a DPoP-Nonce header.
    const fresh = oauth.DPoP(spa, await oauth.generateKeyPair('ES256'));
    const res = await oauth.userInfoRequest(as, spa, tokens.access_token, { DPoP: fresh, ...insecure });
    expect(res.status).to.equal(401);
    expect(res.headers.get('www-authenticate')).to.match(/^DPoP error="use_dpop_nonce"/);
    expect(res.headers.get('dpop-nonce')).to.be.a('string');
  });
});

describe('@gatehouse-auth/oauth-dpop on two nodes sharing one PostgreSQL database', function () {
  const db = withPostgresDatabase();
  let a: OAuthServer;
  let b: OAuthServer;
  before(async function () {
    const key = await clientKey();
    const plugins = [{ path: PLUGIN, options: { nonces: true } }];
    a = await startServer({ databaseUrl: db.url, key, plugins, apps: APPS });
    // B answers for the same issuer (behind one load balancer), so A's htu is B's too.
    b = await startServer({ databaseUrl: db.url, key, plugins, apps: APPS, config: { issuer: a.issuer } });
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });

  it('a nonce from A works on B; a proof used on A is refused on B', async function () {
    const key = await proofKey();
    const nonce = (await serviceToken(a, BOUND, await proof(a, key))).headers.get('dpop-nonce')!;
    const once = await proof(a, key, { nonce });
    expect((await serviceToken(a, BOUND, once)).status).to.equal(200);
    expectOAuthError(await serviceToken(b, BOUND, once), 400, 'invalid_dpop_proof');
    const fresh = await serviceToken(b, BOUND, await proof(a, key, { nonce }));
    expect(fresh.status, fresh.text).to.equal(200);
  });
});

describe('without @gatehouse-auth/oauth-dpop', function () {
  let server: OAuthServer;
  before(async () => (server = await startServer()));
  after(() => server?.close());

  it('a DPoP header is ignored: a bearer token without cnf', async function () {
    const key = await proofKey();
    const res = await tokenPost(
      server,
      { grant_type: 'client_credentials', scope: 'reports.read' },
      { Authorization: basic(MACHINE.id, MACHINE.secret), DPoP: await proof(server, key) },
    );
    expect(res.status, res.text).to.equal(200);
    expect(res.body.token_type).to.equal('bearer');
    expect(decodeJwtParts(res.body.access_token as string).payload).to.not.have.property('cnf');
    expect(await introspect(server, res.body.access_token as string, MACHINE)).to.not.have.property('cnf');
    const doc = (await (await fetch(server.url('/.well-known/openid-configuration'))).json()) as Record<
      string,
      unknown
    >;
    expect(doc).to.not.have.property('dpop_signing_alg_values_supported');
  });
});
