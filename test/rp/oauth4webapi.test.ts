/**
 * Issue 13's relying-party suite, second library: oauth4webapi 3 (the low-level library under
 * openid-client, used directly by many RPs and edge runtimes) against the same server. It
 * validates the authorization response (iss, state), the token response and the ID token's
 * claims (iss, aud, nonce, exp, auth_time with max_age), and, with
 * validateApplicationLevelSignature, the ID token's signature against the JWKS; the alg against
 * the client's id_token_signed_response_alg.
 */
import { expect } from 'chai';
import { decodeProtectedHeader, generateKeyPair } from 'jose';
import * as oauth from 'oauth4webapi';
import {
  ACR_MFA,
  PASSWORD,
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
  STEPUP_APP,
  halfHash,
  immediateRedirect,
  patchProfile,
  rejection,
  signIn,
  startRpServer,
  type RpApp,
  type RpServer,
} from './support.js';

const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** What a call threw (null if nothing). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return null;
}

describe('A relying party on oauth4webapi 3 (issue 13)', function () {
  let server: RpServer;
  let user: TestUser;
  let as: oauth.AuthorizationServer;

  before(async function () {
    server = await startRpServer();
    user = await server.user('rp4w');
    const issuer = new URL(server.issuer);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  });
  after(() => server?.close());

  interface AuthRequest {
    url: URL;
    state: string;
    nonce: string;
    verifier: string;
  }

  async function authRequest(app: RpApp, extra: Record<string, string> = {}): Promise<AuthRequest> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: app.id,
      redirect_uri: app.redirectUri,
      response_type: 'code',
      scope: 'openid',
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...extra,
    }).toString();
    return { url, state, nonce, verifier };
  }

  /**
   * Validates the callback, redeems the code and validates the token response, the ID token's
   * claims and its signature. Returns the tokens and the validated claims.
   */
  async function redeem(
    app: RpApp,
    client: oauth.Client,
    callback: URL,
    req: AuthRequest,
    maxAge?: number,
  ): Promise<{ tokens: oauth.TokenEndpointResponse; claims: oauth.IDToken }> {
    const params = oauth.validateAuthResponse(as, client, callback, req.state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(app.secret),
      params,
      app.redirectUri,
      req.verifier,
      insecure,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: req.nonce,
      requireIdToken: true,
      ...(maxAge === undefined ? {} : { maxAge }),
    });
    await oauth.validateApplicationLevelSignature(as, response, insecure);
    return { tokens, claims: oauth.getValidatedIdTokenClaims(tokens)! };
  }

  async function codeFlow(app: RpApp, client: oauth.Client, extra: Record<string, string> = {}) {
    const req = await authRequest(app, extra);
    const callback = await signIn(server, new Browser(server), req.url, user);
    return { callback, ...(await redeem(app, client, callback, req)) };
  }

  for (const [app, alg] of [
    [RS, 'RS256'],
    [ES, 'ES256'],
  ] as const) {
    it(`${app.id}: a ${alg} ID token whose claims and signature the library validates`, async function () {
      const client: oauth.Client = { client_id: app.id, id_token_signed_response_alg: alg };
      const { tokens, claims, callback } = await codeFlow(app, client, { scope: 'openid email' });
      expect(decodeProtectedHeader(tokens.id_token!).alg).to.equal(alg);
      expect(claims).to.include({ iss: server.issuer, aud: app.id, sub: user.id });
      expect(claims.at_hash).to.equal(halfHash(tokens.access_token));
      expect(claims.c_hash).to.equal(halfHash(callback.searchParams.get('code')!));
    });
  }

  it('an app that registered ES256 but gets RS256 ID tokens is refused by the library', async function () {
    const client: oauth.Client = { client_id: RS.id, id_token_signed_response_alg: 'ES256' };
    const req = await authRequest(RS);
    const callback = await signIn(server, new Browser(server), req.url, user);
    const err = await rejection(redeem(RS, client, callback, req));
    expect(err).to.be.instanceOf(oauth.OperationProcessingError);
    expect((err as Error).message).to.equal('unexpected JWT "alg" header parameter');
  });

  it('the claims parameter: name in the ID token, email from userinfo', async function () {
    await patchProfile(server, user, { name: 'Grace Hopper' });
    const client: oauth.Client = { client_id: RS.id };
    const claimsRequest = { id_token: { name: null }, userinfo: { email: null } };
    const { tokens, claims } = await codeFlow(RS, client, { claims: JSON.stringify(claimsRequest) });
    expect(claims.name).to.equal('Grace Hopper');
    expect(claims).to.not.have.property('email');
    const info = await oauth.processUserInfoResponse(
      as,
      client,
      claims.sub,
      await oauth.userInfoRequest(as, client, tokens.access_token, insecure),
    );
    expect(info).to.deep.equal({ sub: user.id, email: user.email });
  });

  it('request objects: a JAR request → request_not_supported, a request_uri → request_uri_not_supported', async function () {
    const client: oauth.Client = { client_id: RS.id };
    const { privateKey } = await generateKeyPair('ES256');
    const req = await authRequest(RS);
    const request = await oauth.issueRequestObject(as, client, req.url.searchParams, privateKey);
    const jar = new URL(as.authorization_endpoint!);
    // RFC 9101 §5: client_id and the request object; OIDC Core §6.1 wants the state outside too.
    jar.search = new URLSearchParams({ client_id: RS.id, request, state: req.state }).toString();
    const jarCallback = await immediateRedirect(server, jar, RS);
    const refused = thrown(() => oauth.validateAuthResponse(as, client, jarCallback, req.state));
    expect(refused).to.be.instanceOf(oauth.AuthorizationResponseError);
    expect((refused as oauth.AuthorizationResponseError).error).to.equal('request_not_supported');

    const byUri = await authRequest(RS, { request_uri: 'urn:ietf:params:oauth:request_uri:abc' });
    const callback = await immediateRedirect(server, byUri.url, RS);
    const err = thrown(() => oauth.validateAuthResponse(as, client, callback, byUri.state));
    expect(err).to.be.instanceOf(oauth.AuthorizationResponseError);
    expect((err as oauth.AuthorizationResponseError).error).to.equal('request_uri_not_supported');
  });

  it('an essential acr in the claims parameter: password and TOTP, acr mfa and auth_time in the ID token', async function () {
    const seed = await enrolTotp(server, user);
    const client: oauth.Client = { client_id: STEPUP_APP.id };
    const claimsRequest = { id_token: { acr: { essential: true, values: [ACR_MFA] } } };
    const req = await authRequest(STEPUP_APP, { claims: JSON.stringify(claimsRequest), max_age: '300' });
    const browser = new Browser(server);
    const requestId = loginRequestId(locationOf(await browser.get(req.url.href), server));
    const password = await completeStage(
      browser,
      server,
      requestId,
      'PASSWORD',
      { identifier: user.username },
      { password: PASSWORD },
    );
    expect(loginRequestId(password), 'TOTP is asked next').to.equal(requestId);
    const resume = await completeStage(
      browser,
      server,
      requestId,
      'TOTP',
      { sub: user.id },
      { pass_code: await totpCode(seed) },
    );
    const callback = locationOf(await browser.get(resume.pathname + resume.search), server);
    const { claims } = await redeem(STEPUP_APP, client, callback, req, 300);
    expect(claims.acr).to.equal(ACR_MFA);
    expect(claims.amr).to.include.members(['pwd', 'otp']);
  });

  it('token exchange for one file: restricted_to in the response and in introspection', async function () {
    const client: oauth.Client = { client_id: FILES.id };
    const auth = oauth.ClientSecretBasic(FILES.secret);
    const { tokens } = await codeFlow(FILES, client, { scope: 'openid item_preview item_download' });
    const exchanged = await oauth.processGenericTokenEndpointResponse(
      as,
      client,
      await oauth.genericTokenEndpointRequest(
        as,
        client,
        auth,
        EXCHANGE,
        {
          subject_token: tokens.access_token,
          subject_token_type: ACCESS_TOKEN_TYPE,
          resource: DOC,
          scope: 'item_preview item_download',
        },
        insecure,
      ),
    );
    const expected = [
      { object: DOC_OBJECT, scope: 'item_preview' },
      { object: DOC_OBJECT, scope: 'item_download' },
    ];
    expect(exchanged).to.deep.include({
      token_type: 'bearer',
      issued_token_type: ACCESS_TOKEN_TYPE,
      restricted_to: expected,
    });
    const info = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, auth, exchanged.access_token, insecure),
    );
    expect(info).to.deep.include({ active: true, token_type: 'bearer', aud: DOC, restricted_to: expected });
  });
});
