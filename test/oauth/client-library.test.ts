/**
 * Gatehouse driven by an independent, certified OAuth client library (oauth4webapi v3):
 * discovery, the authorization code flow with PKCE for a confidential and a public client,
 * ID token validation, refresh with rotation and reuse detection, client credentials
 * (shared secret and private_key_jwt), introspection and revocation (userinfo: plugins/oidc-userinfo).
 */
import { expect } from 'chai';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import * as oauth from 'oauth4webapi';
import { libraryCodeFlow } from './library-code-flow.js';
import {
  halfHash,
  MACHINE,
  PKJWT,
  SPA,
  SPA_CB,
  startServer,
  WEB,
  WEB_CB,
  type OAuthServer,
  type TestUser,
} from './support.js';

const insecure = { [oauth.allowInsecureRequests]: true } as const;

describe('OAuth with an off-the-shelf client library (oauth4webapi)', function () {
  let server: OAuthServer;
  let as: oauth.AuthorizationServer;
  let user: TestUser;
  let jwks: JSONWebKeySet;

  before(async function () {
    server = await startServer();
    const issuer = new URL(server.issuer);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    user = await server.user('lib');
    jwks = (await (await fetch(as.jwks_uri!)).json()) as JSONWebKeySet;
  });
  after(() => server?.close());

  /** Runs the front channel in a browser and validates the callback with the library. */
  const codeFlow = (client: oauth.Client, redirectUri: string, scope: string) =>
    libraryCodeFlow(server, as, user, client, redirectUri, scope);

  async function verifyIdToken(idToken: string, audience: string) {
    const { payload, protectedHeader } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
      issuer: server.issuer,
      audience,
    });
    expect(protectedHeader.alg).to.equal('RS256');
    return payload;
  }

  it('discovers the server at both well-known paths; the issuer is the URL base', async function () {
    const issuer = new URL(server.issuer);
    const oauth2 = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }),
    );
    expect(oauth2).to.deep.equal(as);
    expect(as.issuer).to.equal(server.issuer);
    expect(as).to.include({
      authorization_endpoint: `${server.issuer}/api/oauth2/authorize/`,
      token_endpoint: `${server.issuer}/oauth/token`,
      introspection_endpoint: `${server.issuer}/token/introspect`,
      revocation_endpoint: `${server.issuer}/oauth2/revoke/`,
      userinfo_endpoint: `${server.issuer}/userinfo`,
      jwks_uri: `${server.issuer}/.well-known/jwks.json`,
      authorization_response_iss_parameter_supported: true,
    });
    expect(as.code_challenge_methods_supported).to.deep.equal(['S256']);
    expect(as.response_types_supported).to.have.members(['code', 'token']);
    expect(as.grant_types_supported).to.have.members([
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'password',
      'implicit',
    ]);
    expect(as.token_endpoint_auth_methods_supported).to.include.members([
      'client_secret_basic',
      'none',
      'private_key_jwt',
      'client_secret_jwt',
    ]);
    expect(as.token_endpoint_auth_signing_alg_values_supported).to.include('ES256').and.not.include('none');
    expect(as.scopes_supported).to.include.members(['openid', 'profile', 'email', 'offline_access']);
    expect(as.id_token_signing_alg_values_supported).to.deep.equal(['RS256', 'ES256']);
  });

  it('runs the code flow with PKCE for a confidential client (client_secret_basic) and validates the ID token', async function () {
    const client: oauth.Client = { client_id: WEB.id };
    const { params, verifier, nonce } = await codeFlow(client, WEB_CB, 'openid profile email offline_access');
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(WEB.secret),
      params,
      WEB_CB,
      verifier,
      insecure,
    );
    expect(response.headers.get('cache-control')).to.equal('no-store');
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: nonce,
      requireIdToken: true,
    });
    expect(tokens.token_type).to.equal('bearer');
    expect(tokens.expires_in).to.equal(3600);
    expect(tokens.scope).to.equal('openid profile email offline_access');
    expect(tokens.refresh_token).to.be.a('string');
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims).to.include({ iss: server.issuer, sub: user.id, aud: WEB.id, nonce });
    expect(claims.auth_time).to.be.a('number');
    // oauth4webapi v3 validates nonce, iss, aud, exp and iat of a token-endpoint ID token but
    // neither its signature nor at_hash: both are checked here with jose and SHA-256.
    const verified = await verifyIdToken(tokens.id_token!, WEB.id);
    expect(verified.at_hash).to.equal(halfHash(tokens.access_token));
    expect(verified.c_hash).to.equal(halfHash(params.get('code')!));
    expect(verified.amr).to.deep.equal(['pwd']);
  });

  it('runs the code flow with PKCE for a public client (none)', async function () {
    const client: oauth.Client = { client_id: SPA.id, token_endpoint_auth_method: 'none' };
    const { params, verifier, nonce } = await codeFlow(client, SPA_CB, 'openid profile offline_access');
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, SPA_CB, verifier, insecure),
      { expectedNonce: nonce, requireIdToken: true },
    );
    expect(oauth.getValidatedIdTokenClaims(tokens)).to.include({ sub: user.id, aud: SPA.id, nonce });
    expect(tokens.refresh_token).to.be.a('string');
    const verified = await verifyIdToken(tokens.id_token!, SPA.id);
    expect(verified.at_hash).to.equal(halfHash(tokens.access_token));
  });

  it('refreshes with rotation; presenting a rotated token revokes the whole family', async function () {
    const client: oauth.Client = { client_id: WEB.id };
    const auth = oauth.ClientSecretBasic(WEB.secret);
    const { params, verifier, nonce } = await codeFlow(client, WEB_CB, 'openid profile offline_access');
    const first = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, WEB_CB, verifier, insecure),
      { expectedNonce: nonce },
    );
    const rt1 = first.refresh_token!;
    const second = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, rt1, insecure),
    );
    const rt2 = second.refresh_token!;
    expect(rt2).to.be.a('string').and.not.equal(rt1);
    expect(second.access_token).to.not.equal(first.access_token);
    expect(oauth.getValidatedIdTokenClaims(second)).to.include({ sub: user.id, aud: WEB.id });

    // The new refresh token works…
    const third = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, rt2, insecure),
    );
    const rt3 = third.refresh_token!;
    // …the rotated one is refused…
    let error: unknown;
    try {
      await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, auth, rt1, insecure),
      );
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(oauth.ResponseBodyError);
    expect((error as oauth.ResponseBodyError).error).to.equal('invalid_grant');
    expect((error as oauth.ResponseBodyError).status).to.equal(400);

    // …and the reuse took the family with it: the newest refresh token and every access token.
    for (const token of [rt3, third.access_token, second.access_token, first.access_token]) {
      const info = await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, auth, token, insecure),
      );
      expect(info).to.deep.equal({ active: false });
    }
  });

  it('gets a client credentials token with client_secret_basic', async function () {
    const machine: oauth.Client = { client_id: MACHINE.id };
    const tokens = await oauth.processClientCredentialsResponse(
      as,
      machine,
      await oauth.clientCredentialsGrantRequest(
        as,
        machine,
        oauth.ClientSecretBasic(MACHINE.secret),
        { scope: 'reports.read' },
        insecure,
      ),
    );
    expect(tokens).to.include({ token_type: 'bearer', scope: 'reports.read', expires_in: 3600 });
    expect(tokens.refresh_token).to.equal(undefined);
    expect(tokens.id_token).to.equal(undefined);
  });

  it('gets a client credentials token with private_key_jwt (the library signs the assertion)', async function () {
    const pk: oauth.Client = { client_id: PKJWT.id };
    const signed = await oauth.processClientCredentialsResponse(
      as,
      pk,
      await oauth.clientCredentialsGrantRequest(
        as,
        pk,
        oauth.PrivateKeyJwt({ key: server.key.privateKey, kid: 'pkjwt-key-1' }),
        {},
        insecure,
      ),
    );
    expect(signed).to.include({ token_type: 'bearer', scope: 'reports.read', expires_in: 3600 });
  });

  it('introspects an active token with its fields, and after revocation as {"active":false}', async function () {
    const client: oauth.Client = { client_id: WEB.id };
    const auth = oauth.ClientSecretBasic(WEB.secret);
    const { params, verifier, nonce } = await codeFlow(client, WEB_CB, 'openid profile');
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, WEB_CB, verifier, insecure),
      { expectedNonce: nonce },
    );
    // OIDC request without offline_access: no refresh token (OIDC Core §11).
    expect(tokens.refresh_token).to.equal(undefined);
    const info = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure),
    );
    const now = Math.floor(Date.now() / 1000);
    expect(info).to.include({
      active: true,
      client_id: WEB.id,
      sub: user.id,
      username: user.username,
      scope: 'openid profile',
      token_type: 'bearer',
      iss: server.issuer,
      aud: WEB.id,
    });
    expect(info.exp! - info.iat!).to.equal(3600);
    expect(info.iat).to.be.within(now - 30, now + 1);
    expect(info.jti).to.be.a('string');

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, auth, tokens.access_token, insecure),
    );
    const after = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure),
    );
    expect(after).to.deep.equal({ active: false });
  });

  it('revokes a refresh token, which takes its access tokens with it', async function () {
    const client: oauth.Client = { client_id: WEB.id };
    const auth = oauth.ClientSecretBasic(WEB.secret);
    const { params, verifier, nonce } = await codeFlow(client, WEB_CB, 'openid offline_access');
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, WEB_CB, verifier, insecure),
      { expectedNonce: nonce },
    );
    const revoked = await oauth.revocationRequest(as, client, auth, tokens.refresh_token!, {
      ...insecure,
      additionalParameters: { token_type_hint: 'refresh_token' },
    });
    expect(revoked.status).to.equal(200);
    expect(await revoked.clone().text()).to.equal('');
    await oauth.processRevocationResponse(revoked);
    for (const token of [tokens.refresh_token!, tokens.access_token]) {
      const info = await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, auth, token, insecure),
      );
      expect(info.active).to.equal(false);
    }
    // The refresh token no longer refreshes.
    const refreshed = await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure);
    expect(refreshed.status).to.equal(400);
    expect(((await refreshed.json()) as { error: string }).error).to.equal('invalid_grant');
  });
});
