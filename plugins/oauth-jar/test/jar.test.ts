/**
 * RFC 9101 end to end on a real server: openid-client 6 (buildAuthorizationUrlWithJAR) signs a
 * request by value, oauth4webapi 3 (issueRequestObject + pushedAuthorizationRequest) pushes one
 * for an app whose keys are at a jwks_uri the test serves; both sign in through the hosted login
 * to tokens. Then every refusal with its exact status and code, at /authorize (an error page,
 * never a redirect) and at the PAR endpoint.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { parseConfig } from '@gatehouse-auth/core';
import { registerWithFakes } from '@gatehouse-auth/testing';
import {
  Browser,
  WEB,
  WEB_CB,
  authorizePath,
  basic,
  clientKey,
  locationOf,
  loginWithPassword,
  pkcePair,
  postForm,
  startServer,
  type OAuthServer,
  type TestUser,
} from '../../../test/oauth/support.js';
import plugin from '../src/index.js';

const PLUGIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Keys inline, and every request must be signed. */
const STRICT = { id: 'jar-strict' };
const STRICT_CB = 'https://jar-strict.example.test/cb';
/** Keys at a jwks_uri; plain requests allowed. */
const REMOTE = { id: 'jar-remote' };
const REMOTE_CB = 'https://jar-remote.example.test/cb';

const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** Serves a JWKS at /jwks.json, as an app publishes its keys. */
async function jwksServer(jwk: JWK): Promise<{ url: string; fetched: () => number; close(): Promise<void> }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    count += 1;
    res.writeHead(req.url === '/jwks.json' ? 200 : 404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    fetched: () => count,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('@gatehouse-auth/oauth-jar (RFC 9101)', function () {
  let server: OAuthServer;
  let user: TestUser;
  let remoteKey: { privateKey: CryptoKey; publicJwk: JWK };
  let jwks: Awaited<ReturnType<typeof jwksServer>>;

  before(async function () {
    const key = await clientKey();
    const pair = await generateKeyPair('ES256');
    remoteKey = { privateKey: pair.privateKey, publicJwk: { ...(await exportJWK(pair.publicKey)), kid: 'remote-1' } };
    jwks = await jwksServer(remoteKey.publicJwk);
    server = await startServer({
      key,
      plugins: [{ path: PLUGIN }, { name: '@gatehouse-auth/oauth-par' }],
      apps: [
        {
          client_id: STRICT.id,
          jwks: { keys: [key.publicJwk] },
          redirect_uris: [STRICT_CB],
          grant_types: ['authorization_code'],
          scopes: ['openid', 'profile'],
          login_stages: [['PASSWORD']],
          require_signed_request_object: true,
        },
        {
          client_id: REMOTE.id,
          jwks_uri: jwks.url,
          redirect_uris: [REMOTE_CB],
          grant_types: ['authorization_code'],
          scopes: ['openid', 'profile'],
          login_stages: [['PASSWORD']],
        },
      ],
    });
    user = await server.user('jar');
  });
  after(async () => {
    await server?.close();
    await jwks?.close();
  });

  /** A request object of the strict app, signed with its key unless another is given. */
  async function requestObject(
    claims: JWTPayload,
    opts: { key?: CryptoKey; alg?: string; kid?: string; typ?: string; exp?: number | null; aud?: string } = {},
  ): Promise<string> {
    const { challenge } = pkcePair();
    const jwt = new SignJWT({
      response_type: 'code',
      client_id: STRICT.id,
      redirect_uri: STRICT_CB,
      scope: 'openid',
      state: 'jar-state',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...claims,
    })
      .setProtectedHeader({
        alg: opts.alg ?? 'ES256',
        kid: opts.kid ?? 'pkjwt-key-1',
        typ: opts.typ ?? 'oauth-authz-req+jwt',
      })
      .setIssuer(STRICT.id)
      .setAudience(opts.aud ?? server.issuer)
      .setIssuedAt();
    if (opts.exp !== null) jwt.setExpirationTime(opts.exp ?? '5m');
    return jwt.sign(opts.key ?? server.key.privateKey);
  }

  /** /authorize refused on the error page (never redirected), with this code. */
  async function refused(query: Record<string, string>, code: string, why?: RegExp): Promise<void> {
    const res = await new Browser(server).get(authorizePath(query));
    expect(res.status, res.headers.get('location') ?? '').to.equal(400);
    const text = await res.text();
    expect(text).to.include(code);
    if (why) expect(text).to.match(why);
  }

  const strictBy = async (claims: JWTPayload, opts?: Parameters<typeof requestObject>[1]) => ({
    client_id: STRICT.id,
    request: await requestObject(claims, opts),
  });

  it('announces request_parameter_supported with its algorithms, and require_signed_request_object', async function () {
    const doc = (await (await fetch(server.url('/.well-known/openid-configuration'))).json()) as Record<
      string,
      unknown
    >;
    expect(doc.request_parameter_supported).to.equal(true);
    expect(doc.request_object_signing_alg_values_supported).to.deep.equal(['RS256', 'PS256', 'ES256', 'EdDSA']);
    expect(doc.require_signed_request_object).to.equal(false);
    // request_uri is a pushed request's only: never a URL the server would fetch.
    expect(doc.request_uri_parameter_supported).to.equal(false);
  });

  it('openid-client: buildAuthorizationUrlWithJAR, the hosted login, tokens (private_key_jwt)', async function () {
    const config = await oidc.discovery(
      new URL(server.issuer),
      STRICT.id,
      undefined,
      oidc.PrivateKeyJwt(server.key.privateKey),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const url = await oidc.buildAuthorizationUrlWithJAR(
      config,
      {
        redirect_uri: STRICT_CB,
        scope: 'openid profile',
        state: 'jar-oidc',
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      { key: server.key.privateKey, kid: 'pkjwt-key-1' },
    );
    expect(url.searchParams.get('request')).to.match(/^ey/);
    const browser = new Browser(server);
    const login = locationOf(await browser.get(url.pathname + url.search), server);
    expect(login.pathname, login.href).to.equal('/login');
    const callback = locationOf(await loginWithPassword(browser, server, login, user), server);
    expect(callback.href.split('?')[0]).to.equal(STRICT_CB);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: 'jar-oidc',
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.scope).to.equal('openid profile');
    expect(tokens.claims()!.sub).to.equal(user.id);
  });

  it('oauth4webapi: a request object pushed (PAR), keys from the app’s jwks_uri, tokens', async function () {
    const issuer = new URL(server.issuer);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const client: oauth.Client = { client_id: REMOTE.id };
    const auth = oauth.PrivateKeyJwt({ key: remoteKey.privateKey, kid: 'remote-1' });
    const verifier = oauth.generateRandomCodeVerifier();
    const request = await oauth.issueRequestObject(
      as,
      client,
      {
        response_type: 'code',
        redirect_uri: REMOTE_CB,
        scope: 'openid',
        state: 'jar-par',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      { key: remoteKey.privateKey, kid: 'remote-1' },
    );
    const pushed = await oauth.processPushedAuthorizationResponse(
      as,
      client,
      await oauth.pushedAuthorizationRequest(as, client, auth, { request }, insecure),
    );
    const browser = new Browser(server);
    const login = locationOf(
      await browser.get(authorizePath({ client_id: REMOTE.id, request_uri: pushed.request_uri })),
      server,
    );
    const callback = locationOf(await loginWithPassword(browser, server, login, user), server);
    const params = oauth.validateAuthResponse(as, client, callback, 'jar-par');
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, REMOTE_CB, verifier, insecure),
    );
    expect(tokens.access_token).to.be.a('string');
    expect(jwks.fetched()).to.be.greaterThan(0);
  });

  it('the object is the request: the query’s other parameters are ignored', async function () {
    const query = {
      ...(await strictBy({ state: 'from-object' })),
      state: 'from-query',
      redirect_uri: 'https://evil.example/cb',
    };
    const browser = new Browser(server);
    const login = locationOf(await browser.get(authorizePath(query)), server);
    const callback = locationOf(await loginWithPassword(browser, server, login, user), server);
    expect(callback.href.split('?')[0]).to.equal(STRICT_CB);
    expect(callback.searchParams.get('state')).to.equal('from-object');
  });

  it('names the issuer with or without a trailing slash as its audience, as client assertions may', async function () {
    for (const aud of [server.issuer.replace(/\/$/, ''), `${server.issuer.replace(/\/$/, '')}/`]) {
      const query = { client_id: STRICT.id, request: await requestObject({}, { aud }) };
      expect(locationOf(await new Browser(server).get(authorizePath(query)), server).pathname, aud).to.equal('/login');
    }
  });

  describe('refusals at /authorize: 400 on the error page', function () {
    it('invalid_request: a plain request of an app that must sign (require_signed_request_object)', async function () {
      const { challenge } = pkcePair();
      await refused(
        {
          client_id: STRICT.id,
          response_type: 'code',
          redirect_uri: STRICT_CB,
          scope: 'openid',
          state: 's',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        },
        'invalid_request',
        /must sign/,
      );
    });

    it('invalid_request_object: unsigned (alg none)', async function () {
      const header = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
      const body = Buffer.from(
        JSON.stringify({ iss: STRICT.id, aud: server.issuer, client_id: STRICT.id, response_type: 'code', exp: 9e9 }),
      ).toString('base64url');
      await refused({ client_id: STRICT.id, request: `${header}.${body}.` }, 'invalid_request_object', /alg none/);
    });

    it('invalid_request_object: signed with a key that is not the app’s', async function () {
      const other = await generateKeyPair('ES256');
      await refused(await strictBy({}, { key: other.privateKey }), 'invalid_request_object', /signature/);
    });

    it('invalid_request_object: HMAC, or an algorithm not allowed', async function () {
      await refused(
        await strictBy({}, { key: new TextEncoder().encode('x'.repeat(32)) as unknown as CryptoKey, alg: 'HS256' }),
        'invalid_request_object',
        /alg must be one of/,
      );
    });

    it('invalid_request_object: for another audience, from another issuer', async function () {
      const wrongAud = await new SignJWT({ response_type: 'code', client_id: STRICT.id })
        .setProtectedHeader({ alg: 'ES256', kid: 'pkjwt-key-1' })
        .setIssuer(STRICT.id)
        .setAudience('https://other.example')
        .setExpirationTime('5m')
        .sign(server.key.privateKey);
      await refused({ client_id: STRICT.id, request: wrongAud }, 'invalid_request_object', /aud/);
      const wrongIss = await new SignJWT({ response_type: 'code', client_id: STRICT.id })
        .setProtectedHeader({ alg: 'ES256', kid: 'pkjwt-key-1' })
        .setIssuer('someone-else')
        .setAudience(server.issuer)
        .setExpirationTime('5m')
        .sign(server.key.privateKey);
      await refused({ client_id: STRICT.id, request: wrongIss }, 'invalid_request_object', /iss/);
    });

    it('invalid_request_object: no exp, expired, or living longer than an hour', async function () {
      await refused(await strictBy({}, { exp: null }), 'invalid_request_object', /exp/);
      await refused(await strictBy({}, { exp: Math.floor(Date.now() / 1000) - 120 }), 'invalid_request_object', /exp/);
      await refused(
        await strictBy({}, { exp: Math.floor(Date.now() / 1000) + 7200 }),
        'invalid_request_object',
        /3600 s ahead/,
      );
    });

    it('invalid_request_object: another type of JWT (explicit typing, RFC 9101 §10.8)', async function () {
      await refused(await strictBy({}, { typ: 'dpop+jwt' }), 'invalid_request_object', /typed/);
    });

    it('invalid_request_object: a jti used before (replay)', async function () {
      const query = await strictBy({ jti: `jti-${Date.now()}` });
      const first = await new Browser(server).get(authorizePath(query));
      expect(first.status).to.equal(303);
      await refused(query, 'invalid_request_object', /already used/);
    });

    it('invalid_request_object: encrypted (JWE), not a JWT, another app’s client_id', async function () {
      await refused({ client_id: STRICT.id, request: 'a.b.c.d.e' }, 'invalid_request_object', /encrypted/);
      await refused({ client_id: STRICT.id, request: 'not-a-jwt' }, 'invalid_request_object', /not a JWT/);
      await refused(await strictBy({ client_id: REMOTE.id }), 'invalid_request_object', /not a request of this app/);
    });

    it('invalid_request_object: an app without keys; invalid_request: request with request_uri, or no client_id', async function () {
      const unsigned = await requestObject({ client_id: WEB.id, redirect_uri: WEB_CB });
      await refused({ client_id: WEB.id, request: unsigned }, 'invalid_request_object', /no keys/);
      const request = await requestObject({});
      await refused(
        { client_id: STRICT.id, request, request_uri: 'urn:x' },
        'invalid_request',
        /cannot be used together/,
      );
      await refused({ request }, 'invalid_request', /client_id is required/);
    });
  });

  describe('refusals at the PAR endpoint: 400 JSON', function () {
    const push = (fields: Record<string, string>, auth?: string) => postForm(server, '/oauth/par', fields, auth);

    it('invalid_request: a plain push of an app that must sign', async function () {
      const issuer = new URL(server.issuer);
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
      const client: oauth.Client = { client_id: STRICT.id };
      const res = await oauth.pushedAuthorizationRequest(
        as,
        client,
        oauth.PrivateKeyJwt({ key: server.key.privateKey, kid: 'pkjwt-key-1' }),
        { response_type: 'code', redirect_uri: STRICT_CB, scope: 'openid', state: 's' },
        insecure,
      );
      expect(res.status).to.equal(400);
      expect(await res.json()).to.deep.include({ error: 'invalid_request' });
    });

    it('invalid_request_object: a pushed object signed by another key', async function () {
      const other = await generateKeyPair('ES256');
      const request = await requestObject({ client_id: WEB.id, redirect_uri: WEB_CB }, { key: other.privateKey });
      const res = await push({ request }, basic(WEB.id, WEB.secret));
      expect(res.status, res.text).to.equal(400);
      expect(res.body.error).to.equal('invalid_request_object');
    });
  });

  describe('the plugin alone (testing kit)', function () {
    it('registers one verifier with the allowed algorithms and refuses none, HMAC and unknown ones in its options', async function () {
      const registered = await registerWithFakes(plugin, { algorithms: ['PS256'] });
      expect(registered.requestObjectVerifier?.algorithms).to.deep.equal(['PS256']);
      for (const algorithms of [['none'], ['HS256'], []]) {
        let error: unknown;
        try {
          await registerWithFakes(plugin, { algorithms });
        } catch (err) {
          error = err;
        }
        expect(error, JSON.stringify(algorithms)).to.be.an('error');
      }
    });
  });

  describe('an app’s keys in the config (jwks or jwks_uri)', function () {
    const configWith = (app: Record<string, unknown>) => () =>
      parseConfig(
        {
          issuer: 'https://login.example.test',
          secrets: { encryption_key: Buffer.alloc(32, 7).toString('base64') },
          apps: [{ client_id: 'keys', redirect_uris: ['https://keys.example/cb'], ...app }],
        },
        {},
      );

    it('refuses both at once, and private_key_jwt with neither', function () {
      expect(
        configWith({
          jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }] },
          jwks_uri: 'https://keys.example/jwks',
        }),
      ).to.throw(/jwks_uri.*cannot be set beside jwks/);
      expect(configWith({ token_endpoint_auth_method: 'private_key_jwt' })).to.throw(
        /jwks.*required for private_key_jwt/,
      );
      expect(configWith({ jwks_uri: 'not a url' })).to.throw(/jwks_uri/);
    });

    it('accepts an app with only a jwks_uri (its token requests are private_key_jwt, as the PAR test above shows)', function () {
      const config = configWith({ jwks_uri: 'https://keys.example/jwks' })();
      expect(config.apps[0]!.jwks_uri).to.equal('https://keys.example/jwks');
    });
  });
});
