/**
 * Issue 13's relying-party suite: Gatehouse driven by openid-client 6, the most used Node RP
 * library, the way an application would use it. The library discovers the server, builds the
 * authorization requests, checks the authorization response (iss, state) and the ID token (its
 * signature against the JWKS — non-repudiation checks on —, alg, iss, aud, nonce, exp,
 * auth_time against max_age) and the userinfo `sub`; the browser part runs without a browser,
 * as the OAuth suite does. What the library does not check in the code flow (at_hash, c_hash)
 * is checked here.
 */
import { expect } from 'chai';
import { decodeProtectedHeader, generateKeyPair, type JSONWebKeySet } from 'jose';
import * as client from 'openid-client';
import {
  ACR_MFA,
  ACR_PWD,
  Browser,
  completeStage,
  enrolTotp,
  locationOf,
  loginRequestId,
  totpCode,
  type TestUser,
} from '../oauth/support.js';
import {
  ACCESS_TOKEN_TYPE,
  DOC,
  DOC_OBJECT,
  ES,
  EXCHANGE,
  FILES,
  RS,
  PROFILE_IN_ID,
  STEPUP_APP,
  TABS,
  halfHash,
  immediateRedirect,
  patchProfile,
  rejection,
  signIn,
  startRpServer,
  type RpApp,
  type RpServer,
} from './support.js';

/** Asserts a token-endpoint style error that the library parsed: its status and code. */
function expectBodyError(err: unknown, status: number, code: string): void {
  expect(err, 'the library should have thrown a ResponseBodyError').to.be.instanceOf(client.ResponseBodyError);
  const body = err as client.ResponseBodyError;
  expect([body.status, body.error], body.error_description).to.deep.equal([status, code]);
}

/** Asserts a check of the library's own that failed: the library's code and the failed check. */
function expectClientCheck(err: unknown, code: string, check: string): void {
  expect(err, String(err)).to.be.instanceOf(client.ClientError);
  expect((err as client.ClientError).code).to.equal(code);
  expect(((err as Error).cause as Error | undefined)?.message).to.equal(check);
}

/** Asserts an authorization error response that the library parsed (after its iss check). */
function expectAuthorizationError(err: unknown, code: string): void {
  expect(err, String(err)).to.be.instanceOf(client.AuthorizationResponseError);
  expect((err as client.AuthorizationResponseError).error).to.equal(code);
}

describe('A relying party on openid-client 6 (issue 13)', function () {
  let server: RpServer;
  let user: TestUser;

  before(async function () {
    server = await startRpServer();
    user = await server.user('rp');
  });
  after(() => server?.close());
  afterEach(() => {
    if (server) server.clock.offset = 0;
  });

  /** Discovery as an RP does it; the library then checks every ID token's signature against the JWKS. */
  const discover = (app: RpApp, metadata: Partial<client.ClientMetadata> = {}) =>
    client.discovery(new URL(server.issuer), app.id, metadata, client.ClientSecretBasic(app.secret), {
      execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
    });

  interface AuthRequest {
    url: URL;
    state: string;
    nonce: string;
    verifier: string;
  }

  /** An authorization request as the library builds it: PKCE S256, state and nonce, plus `extra`. */
  async function authRequest(
    config: client.Configuration,
    app: RpApp,
    extra: Record<string, string> = {},
  ): Promise<AuthRequest> {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: app.redirectUri,
      scope: 'openid',
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...extra,
    });
    return { url, state, nonce, verifier };
  }

  /** The library's authorization code grant with every check it offers. */
  const redeem = (config: client.Configuration, callback: URL, req: AuthRequest, checks: { maxAge?: number } = {}) =>
    client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: req.verifier,
      expectedState: req.state,
      expectedNonce: req.nonce,
      idTokenExpected: true,
      ...checks,
    });

  /** The whole code flow for `app` in a fresh browser (or the given one). */
  async function codeFlow(
    config: client.Configuration,
    app: RpApp,
    extra: Record<string, string> = {},
    browser = new Browser(server),
  ) {
    const req = await authRequest(config, app, extra);
    const callback = await signIn(server, browser, req.url, user);
    const tokens = await redeem(config, callback, req);
    return { req, callback, tokens };
  }

  const jwks = async () => (await (await fetch(server.url('/.well-known/jwks.json'))).json()) as JSONWebKeySet;

  describe('discovery and the code flow', function () {
    it('discovers the server: what an RP reads of the metadata', async function () {
      const meta = (await discover(RS)).serverMetadata();
      expect(meta.issuer).to.equal(server.issuer);
      expect(meta.authorization_endpoint).to.equal(`${server.issuer}/api/oauth2/authorize/`);
      expect(meta.token_endpoint).to.equal(`${server.issuer}/oauth/token`);
      expect(meta.jwks_uri).to.equal(`${server.issuer}/.well-known/jwks.json`);
      expect(meta.id_token_signing_alg_values_supported).to.deep.equal(['RS256', 'ES256']);
      expect(meta.code_challenge_methods_supported).to.deep.equal(['S256']);
      expect(meta.authorization_response_iss_parameter_supported).to.equal(true);
      expect(meta.claims_parameter_supported).to.equal(true);
      expect(meta.acr_values_supported).to.include.members([ACR_PWD, ACR_MFA]);
      expect(meta.grant_types_supported).to.include(EXCHANGE);
      expect(meta.scopes_supported).to.include.members(['openid', 'profile', 'email', 'item_preview']);
    });

    for (const [app, alg] of [
      [RS, 'RS256'],
      [ES, 'ES256'],
    ] as const) {
      it(`code flow with PKCE, state and nonce for ${app.id}: a ${alg} ID token the library verifies`, async function () {
        // The library refuses an ID token in any other algorithm than the one registered here.
        const config = await discover(app, { id_token_signed_response_alg: alg });
        const { req, callback, tokens } = await codeFlow(config, app, { scope: 'openid profile offline_access' });

        expect(tokens.token_type).to.equal('bearer');
        expect(tokens.scope).to.equal('openid profile offline_access');
        expect(tokens.refresh_token).to.be.a('string');
        const claims = tokens.claims()!;
        expect(claims).to.include({ iss: server.issuer, aud: app.id, sub: user.id, nonce: req.nonce });
        expect(claims.auth_time).to.be.a('number');

        const header = decodeProtectedHeader(tokens.id_token!);
        expect(header.alg).to.equal(alg);
        const key = (await jwks()).keys.find((k) => k.kid === header.kid);
        expect(key, 'the signing key is in the JWKS').to.include({ alg, use: 'sig' });
        // Not checked by the library in the code flow (optional there, OIDC Core §3.1.3.6).
        expect(claims.at_hash).to.equal(halfHash(tokens.access_token));
        expect(claims.c_hash).to.equal(halfHash(callback.searchParams.get('code')!));
      });
    }

    it('the library rejects an RS256 ID token when it expects ES256, and one whose signature was altered', async function () {
      const wrongAlg = await discover(RS, { id_token_signed_response_alg: 'ES256' });
      const req = await authRequest(wrongAlg, RS);
      const err = await rejection(redeem(wrongAlg, await signIn(server, new Browser(server), req.url, user), req));
      expectClientCheck(err, 'OAUTH_INVALID_RESPONSE', 'unexpected JWT "alg" header parameter');

      // The same flow, the ID token's signature changed in transit: the JWKS check catches it.
      const config = await discover(RS);
      config[client.customFetch] = async (url, options) => {
        const res = await fetch(url, options);
        if (url !== `${server.issuer}/oauth/token`) return res;
        const body = (await res.json()) as { id_token: string };
        const [h, p, s] = body.id_token.split('.');
        const flipped = Buffer.from(s!, 'base64url');
        flipped[0] = flipped[0]! ^ 1;
        body.id_token = [h, p, flipped.toString('base64url')].join('.');
        return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
      };
      const again = await authRequest(config, RS);
      const tampered = await rejection(
        redeem(config, await signIn(server, new Browser(server), again.url, user), again),
      );
      expectClientCheck(tampered, 'OAUTH_INVALID_RESPONSE', 'JWT signature verification failed');
    });

    it('a wrong PKCE verifier: invalid_grant', async function () {
      const config = await discover(RS);
      const req = await authRequest(config, RS);
      const callback = await signIn(server, new Browser(server), req.url, user);
      const err = await rejection(redeem(config, callback, { ...req, verifier: client.randomPKCECodeVerifier() }));
      expectBodyError(err, 400, 'invalid_grant');
    });
  });

  describe('claims', function () {
    before(async function () {
      await patchProfile(server, user, {
        name: 'Ada Lovelace',
        given_name: 'Ada',
        family_name: 'Lovelace',
        locale: 'en-GB',
      });
    });

    it('the claims parameter: name in the ID token, email from userinfo, with scope openid alone', async function () {
      const config = await discover(RS);
      const claimsRequest = { id_token: { name: null }, userinfo: { email: null } };
      const { tokens } = await codeFlow(config, RS, { scope: 'openid', claims: JSON.stringify(claimsRequest) });
      const claims = tokens.claims()!;
      expect(claims.name).to.equal('Ada Lovelace');
      expect(claims).to.not.have.any.keys('email', 'given_name', 'preferred_username');
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      expect(info).to.deep.equal({ sub: user.id, email: user.email });
    });

    it('an app with id_token_claims: scope gets the granted scopes’ claims in the ID token too', async function () {
      const config = await discover(PROFILE_IN_ID);
      const { tokens } = await codeFlow(config, PROFILE_IN_ID, { scope: 'openid profile email' });
      expect(tokens.claims()).to.include({
        sub: user.id,
        name: 'Ada Lovelace',
        given_name: 'Ada',
        preferred_username: user.username,
        email: user.email,
        email_verified: false,
      });
      // Only the granted scopes: without email, no email.
      const narrower = await codeFlow(config, PROFILE_IN_ID, { scope: 'openid profile' });
      expect(narrower.tokens.claims()).to.include({ name: 'Ada Lovelace' }).and.not.have.any.keys('email');
    });

    it('scope profile: the profile claims in userinfo, not in the ID token', async function () {
      const config = await discover(ES, { id_token_signed_response_alg: 'ES256' });
      const { tokens } = await codeFlow(config, ES, { scope: 'openid profile' });
      const claims = tokens.claims()!;
      expect(claims).to.not.have.any.keys('name', 'given_name');
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      expect(info).to.include({
        sub: user.id,
        name: 'Ada Lovelace',
        given_name: 'Ada',
        family_name: 'Lovelace',
        locale: 'en-GB',
        preferred_username: user.username,
      });
      expect(info.updated_at).to.be.a('number');
      expect(info).to.not.have.any.keys('email', 'email_verified');
    });

    it('userinfo for another subject than the ID token’s is refused by the library', async function () {
      const config = await discover(RS);
      const { tokens } = await codeFlow(config, RS);
      const err = await rejection(client.fetchUserInfo(config, tokens.access_token, 'someone-else'));
      expectClientCheck(
        err,
        'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED',
        'unexpected "response" body "sub" property value',
      );
    });
  });

  describe('hints and locales', function () {
    it('login_hint and ui_locales from the library’s URL: a German page with the identifier filled in, then tokens', async function () {
      const config = await discover(RS);
      const req = await authRequest(config, RS, { login_hint: user.username, ui_locales: 'de-CH en' });
      const browser = new Browser(server);
      const login = locationOf(await browser.get(req.url.href), server);
      expect(login.pathname).to.equal('/login');
      const page = await (await browser.get(login.pathname + login.search)).text();
      expect(page).to.match(/<html lang="de"/);
      expect(page).to.include(`value="${user.username}"`);
      // The hint only fills the field: the password stage is still asked, and the flow ends in tokens.
      const callback = await signIn(server, browser, req.url, user);
      expect((await redeem(config, callback, req)).claims()!.sub).to.equal(user.id);
    });
  });

  describe('request objects', function () {
    it('discovery says request objects are not supported', async function () {
      const meta = (await discover(RS)).serverMetadata();
      expect(meta.request_parameter_supported).to.equal(false);
      expect(meta.request_uri_parameter_supported).to.equal(false);
    });

    it('a signed request object (JAR) → request_not_supported at the redirect URI', async function () {
      const config = await discover(RS);
      const { privateKey } = await generateKeyPair('ES256');
      const url = await client.buildAuthorizationUrlWithJAR(
        config,
        {
          redirect_uri: RS.redirectUri,
          scope: 'openid',
          state: client.randomState(),
          nonce: client.randomNonce(),
          code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
          code_challenge_method: 'S256',
        },
        privateKey,
      );
      expect([...url.searchParams.keys()].sort()).to.deep.equal(['client_id', 'request']);
      const callback = await immediateRedirect(server, url, RS);
      // The state is inside the unread request object, so the error cannot carry it.
      expect(callback.searchParams.has('state')).to.equal(false);
      const err = await rejection(client.authorizationCodeGrant(config, callback, { expectedState: undefined }));
      expectAuthorizationError(err, 'request_not_supported');
    });

    it('a request_uri → request_uri_not_supported at the redirect URI, with the state', async function () {
      const config = await discover(RS);
      const req = await authRequest(config, RS, { request_uri: 'https://rp-rs.example.test/request.jwt' });
      const callback = await immediateRedirect(server, req.url, RS);
      const err = await rejection(redeem(config, callback, req));
      expectAuthorizationError(err, 'request_uri_not_supported');
    });
  });

  describe('acr_values and max_age', function () {
    let seed: string;
    before(async function () {
      seed = await enrolTotp(server, user);
    });

    it('step-up: signed in with a password, acr_values=mfa asks only for TOTP; the ID token says mfa', async function () {
      const config = await discover(STEPUP_APP);
      const browser = new Browser(server);
      const first = await codeFlow(config, STEPUP_APP, {}, browser);
      expect(first.tokens.claims()!.acr).to.equal(ACR_PWD);

      const req = await authRequest(config, STEPUP_APP, { acr_values: ACR_MFA, max_age: '600' });
      const login = locationOf(await browser.get(req.url.href), server);
      const requestId = loginRequestId(login);
      const page = await (await browser.get(login.pathname + login.search)).text();
      expect(page).to.include('data-method="TOTP"');
      expect(page).to.not.include('data-method="PASSWORD"');
      const resume = await completeStage(
        browser,
        server,
        requestId,
        'TOTP',
        { sub: user.id },
        { pass_code: await totpCode(seed) },
      );
      expect(resume.pathname).to.equal('/api/oauth2/authorize/resume');
      const callback = locationOf(await browser.get(resume.pathname + resume.search), server);
      // maxAge makes the library require auth_time and check it is at most 600 s old.
      const tokens = await redeem(config, callback, req, { maxAge: 600 });
      const claims = tokens.claims()!;
      expect(claims.acr).to.equal(ACR_MFA);
      expect(claims.amr).to.include.members(['pwd', 'otp']);
      expect(claims.auth_time).to.be.a('number');
    });

    it('max_age: the ID token carries auth_time, which the library checks', async function () {
      const config = await discover(RS);
      const req = await authRequest(config, RS, { max_age: '60' });
      const tokens = await redeem(config, await signIn(server, new Browser(server), req.url, user), req, {
        maxAge: 60,
      });
      const authTime = tokens.claims()!.auth_time!;
      expect(authTime).to.be.within(Math.floor(Date.now() / 1000) - 60, Math.ceil(Date.now() / 1000));
    });
  });

  describe('refresh, introspection, revocation', function () {
    it('refreshTokenGrant rotates the refresh token; the new ID token is for the same user', async function () {
      const config = await discover(RS);
      const { tokens } = await codeFlow(config, RS, { scope: 'openid offline_access' });
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      expect(refreshed.refresh_token).to.be.a('string').and.not.equal(tokens.refresh_token);
      expect(refreshed.access_token).to.not.equal(tokens.access_token);
      expect(refreshed.claims()).to.include({ sub: user.id, aud: RS.id, iss: server.issuer });
      // The rotated refresh token is spent.
      expectBodyError(await rejection(client.refreshTokenGrant(config, tokens.refresh_token!)), 400, 'invalid_grant');
    });

    it('an app with a reuse interval: two tabs refreshing at once get one new pair; past it, reuse ends the family', async function () {
      const config = await discover(TABS);
      const { tokens } = await codeFlow(config, TABS, { scope: 'openid offline_access' });
      const [a, b] = await Promise.all([
        client.refreshTokenGrant(config, tokens.refresh_token!),
        client.refreshTokenGrant(config, tokens.refresh_token!),
      ]);
      expect(b.access_token).to.equal(a.access_token);
      expect(b.refresh_token).to.equal(a.refresh_token).and.not.equal(tokens.refresh_token);
      expect(await client.tokenIntrospection(config, a.access_token)).to.include({ active: true });

      server.clock.offset = 6;
      expectBodyError(await rejection(client.refreshTokenGrant(config, tokens.refresh_token!)), 400, 'invalid_grant');
      expect(await client.tokenIntrospection(config, a.refresh_token!)).to.deep.equal({ active: false });
    });

    it('tokenIntrospection: active, token_type bearer; after tokenRevocation: {active: false}', async function () {
      const config = await discover(RS);
      const { tokens } = await codeFlow(config, RS, { scope: 'openid offline_access' });
      const info = await client.tokenIntrospection(config, tokens.access_token);
      expect(info).to.include({
        active: true,
        token_type: 'bearer',
        client_id: RS.id,
        sub: user.id,
        scope: 'openid offline_access',
        iss: server.issuer,
      });

      await client.tokenRevocation(config, tokens.access_token);
      expect(await client.tokenIntrospection(config, tokens.access_token)).to.deep.equal({ active: false });

      // Revoking the refresh token ends it too.
      expect(await client.tokenIntrospection(config, tokens.refresh_token!)).to.include({ active: true });
      await client.tokenRevocation(config, tokens.refresh_token!, { token_type_hint: 'refresh_token' });
      expect(await client.tokenIntrospection(config, tokens.refresh_token!)).to.deep.equal({ active: false });
      expectBodyError(await rejection(client.refreshTokenGrant(config, tokens.refresh_token!)), 400, 'invalid_grant');
    });
  });

  describe('token exchange (RFC 8693) with restricted_to', function () {
    const exchange = (config: client.Configuration, subject: string, more: Record<string, string>) =>
      client.genericGrantRequest(config, EXCHANGE, {
        subject_token: subject,
        subject_token_type: ACCESS_TOKEN_TYPE,
        ...more,
      });

    it('a user token exchanged for one file: restricted_to in the response and in introspection', async function () {
      const config = await discover(FILES);
      const { tokens } = await codeFlow(config, FILES, { scope: 'openid item_preview item_download' });
      const exchanged = await exchange(config, tokens.access_token, { resource: DOC, scope: 'item_preview' });
      const expected = [{ object: DOC_OBJECT, scope: 'item_preview' }];
      expect(exchanged).to.deep.include({
        token_type: 'bearer',
        issued_token_type: ACCESS_TOKEN_TYPE,
        scope: 'item_preview',
        restricted_to: expected,
      });
      expect(exchanged.refresh_token).to.equal(undefined);
      expect(exchanged.id_token).to.equal(undefined);

      const info = await client.tokenIntrospection(config, exchanged.access_token);
      expect(info).to.deep.include({
        active: true,
        token_type: 'bearer',
        sub: user.id,
        aud: DOC,
        scope: 'item_preview',
        restricted_to: expected,
      });
      // Without a resource the token is not restricted.
      const plain = await exchange(config, tokens.access_token, { scope: 'item_download' });
      expect(plain).to.not.have.property('restricted_to');
      expect(await client.tokenIntrospection(config, plain.access_token)).to.not.have.property('restricted_to');
    });

    it('refusals: a non-file scope (400 invalid_scope), a widening (401 invalid_scope), an unknown file (400 invalid_target)', async function () {
      const config = await discover(FILES);
      const { tokens } = await codeFlow(config, FILES, { scope: 'openid item_preview item_download' });
      expectBodyError(
        await rejection(exchange(config, tokens.access_token, { resource: DOC, scope: 'openid item_preview' })),
        400,
        'invalid_scope',
      );
      const narrow = await exchange(config, tokens.access_token, { resource: DOC, scope: 'item_preview' });
      expectBodyError(
        await rejection(exchange(config, narrow.access_token, { scope: 'item_preview item_download' })),
        401,
        'invalid_scope',
      );
      expectBodyError(
        await rejection(
          exchange(config, tokens.access_token, { resource: 'https://files.example.test/2.0/files/999' }),
        ),
        400,
        'invalid_target',
      );
    });
  });

  describe('conformance switches an RP meets', function () {
    it('a code lives 30 s: redeemed 29 s later it works, 31 s later it is invalid_grant', async function () {
      const config = await discover(RS);
      const late = await authRequest(config, RS);
      const lateCallback = await signIn(server, new Browser(server), late.url, user);
      server.clock.offset = 31;
      expectBodyError(await rejection(redeem(config, lateCallback, late)), 400, 'invalid_grant');

      server.clock.offset = 0;
      const inTime = await authRequest(config, RS);
      const inTimeCallback = await signIn(server, new Browser(server), inTime.url, user);
      server.clock.offset = 29;
      const tokens = await redeem(config, inTimeCallback, inTime);
      expect(tokens.claims()!.sub).to.equal(user.id);
    });

    it('neither state nor PKCE → invalid_request at the redirect URI; PKCE without state is enough', async function () {
      const config = await discover(RS);
      const bare = client.buildAuthorizationUrl(config, {
        redirect_uri: RS.redirectUri,
        scope: 'openid',
        nonce: client.randomNonce(),
      });
      const callback = await immediateRedirect(server, bare, RS);
      const err = await rejection(client.authorizationCodeGrant(config, callback, { expectedState: undefined }));
      expectAuthorizationError(err, 'invalid_request');
      expect((err as client.AuthorizationResponseError).error_description).to.equal('state is required for this app');

      const verifier = client.randomPKCECodeVerifier();
      const nonce = client.randomNonce();
      const pkceOnly = client.buildAuthorizationUrl(config, {
        redirect_uri: RS.redirectUri,
        scope: 'openid',
        nonce,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      const tokens = await client.authorizationCodeGrant(
        config,
        await signIn(server, new Browser(server), pkceOnly, user),
        {
          pkceCodeVerifier: verifier,
          expectedNonce: nonce,
          expectedState: undefined,
        },
      );
      expect(tokens.claims()!.sub).to.equal(user.id);
    });
  });
});
