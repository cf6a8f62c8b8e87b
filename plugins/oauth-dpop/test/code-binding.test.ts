/**
 * RFC 9449 §10: the authorization code bound to a DPoP key, by `dpop_jkt` at /authorize or by a
 * DPoP proof at the PAR endpoint (§10.1, with @gatehouse-auth/oauth-par). oauth4webapi drives
 * both; the code is redeemed only with a proof of that key (a refusal leaves it unused).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import * as oauth from 'oauth4webapi';
import {
  Browser,
  SPA,
  SPA_CB,
  authorizePath,
  locationOf,
  loginWithPassword,
  obtainCode,
  pkcePair,
  startServer,
  type OAuthServer,
  type TestUser,
} from '../../../test/oauth/support.js';

const PLUGIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const spa: oauth.Client = { client_id: SPA.id };

describe('@gatehouse-auth/oauth-dpop: the authorization code bound to a key (RFC 9449 §10)', function () {
  let server: OAuthServer;
  let user: TestUser;
  let as: oauth.AuthorizationServer;

  before(async function () {
    server = await startServer({ plugins: [{ path: PLUGIN }, { name: '@gatehouse-auth/oauth-par' }] });
    user = await server.user('dpopjkt');
    const issuer = new URL(server.issuer);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  });
  after(() => server?.close());

  const handle = async () => oauth.DPoP(spa, await oauth.generateKeyPair('ES256'));

  /** Redeems the code with `dpop`'s proofs (or none), retrying once on use_dpop_nonce. */
  async function redeem(callback: URL, state: string, verifier: string, dpop?: oauth.DPoPHandle, nonce?: string) {
    const params = oauth.validateAuthResponse(as, spa, callback, state);
    const request = () =>
      oauth
        .authorizationCodeGrantRequest(as, spa, oauth.None(), params, SPA_CB, verifier, {
          ...(dpop ? { DPoP: dpop } : {}),
          ...insecure,
        })
        .then((res) => oauth.processAuthorizationCodeResponse(as, spa, res, nonce ? { expectedNonce: nonce } : {}));
    try {
      return await request();
    } catch (err) {
      if (!oauth.isDPoPNonceError(err)) throw err;
      return request();
    }
  }

  /** The refusal a redemption gets, as oauth4webapi reports it. */
  async function refusal(promise: Promise<unknown>): Promise<{ error: string; description: string }> {
    try {
      await promise;
    } catch (err) {
      expect(err).to.be.instanceOf(oauth.ResponseBodyError);
      const e = err as oauth.ResponseBodyError;
      return { error: e.error, description: e.error_description ?? '' };
    }
    throw new Error('the redemption succeeded');
  }

  it('dpop_jkt at /authorize: another key or no proof is invalid_grant (the code stays good); its key redeems it', async function () {
    const key = await handle();
    const jkt = await key.calculateThumbprint();
    const got = await obtainCode(server, user, {
      clientId: SPA.id,
      redirectUri: SPA_CB,
      scope: 'openid',
      extra: { dpop_jkt: jkt },
    });
    expect(await refusal(redeem(got.callback, got.state, got.verifier, await handle()))).to.deep.equal({
      error: 'invalid_grant',
      description: 'the DPoP proof is not of the key the code is bound to',
    });
    expect(await refusal(redeem(got.callback, got.state, got.verifier))).to.deep.equal({
      error: 'invalid_grant',
      description: 'a DPoP proof of the key the code is bound to is required',
    });
    const tokens = await redeem(got.callback, got.state, got.verifier, key, got.nonce);
    expect(tokens.token_type).to.equal('dpop');
  });

  it('a malformed dpop_jkt is invalid_request, redirected', async function () {
    const { challenge } = pkcePair();
    const res = await new Browser(server).get(
      authorizePath({
        response_type: 'code',
        client_id: SPA.id,
        redirect_uri: SPA_CB,
        scope: 'openid',
        state: 'bad-jkt',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        dpop_jkt: 'not-a-thumbprint',
      }),
    );
    const back = locationOf(res, server);
    expect(back.searchParams.get('error')).to.equal('invalid_request');
    expect(back.searchParams.get('error_description')).to.equal('malformed dpop_jkt');
  });

  describe('with pushed authorization requests (§10.1)', function () {
    async function pushed(dpop: oauth.DPoPHandle | undefined, extra: Record<string, string> = {}) {
      const { verifier, challenge } = pkcePair();
      const state = `par-${verifier.slice(0, 6)}`;
      const push = () =>
        oauth.pushedAuthorizationRequest(
          as,
          spa,
          oauth.None(),
          {
            response_type: 'code',
            redirect_uri: SPA_CB,
            scope: 'openid',
            state,
            code_challenge: challenge,
            code_challenge_method: 'S256',
            ...extra,
          },
          { ...(dpop ? { DPoP: dpop } : {}), ...insecure },
        );
      let res = await push();
      if (res.status === 400 && ((await res.clone().json()) as { error?: string }).error === 'use_dpop_nonce')
        res = await push();
      return { res, verifier, state };
    }

    it('a proof at the PAR endpoint binds the code to its key', async function () {
      const key = await handle();
      const { res, verifier, state } = await pushed(key);
      const { request_uri } = await oauth.processPushedAuthorizationResponse(as, spa, res);
      const browser = new Browser(server);
      const login = locationOf(await browser.get(authorizePath({ client_id: SPA.id, request_uri })), server);
      const callback = locationOf(await loginWithPassword(browser, server, login, user), server);
      expect(await refusal(redeem(callback, state, verifier, await handle()))).to.include({ error: 'invalid_grant' });
      const tokens = await redeem(callback, state, verifier, key);
      expect(tokens.token_type).to.equal('dpop');
    });

    it('dpop_jkt beside a proof of another key: 400 invalid_request', async function () {
      const other = await (await handle()).calculateThumbprint();
      const { res } = await pushed(await handle(), { dpop_jkt: other });
      expect(res.status).to.equal(400);
      expect(await res.json()).to.deep.equal({
        error: 'invalid_request',
        error_description: 'dpop_jkt is not the key of the DPoP proof',
      });
    });

    it('a proof made for another URL (the token endpoint): 400 invalid_dpop_proof', async function () {
      const key = await oauth.generateKeyPair('ES256');
      const { SignJWT, exportJWK } = await import('jose');
      const proof = await new SignJWT({
        htm: 'POST',
        htu: server.url('/oauth/token'),
        iat: Math.floor(Date.now() / 1000),
        jti: `jti-${Date.now()}`,
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(key.publicKey) })
        .sign(key.privateKey);
      const { challenge } = pkcePair();
      const res = await fetch(server.url('/oauth/par'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', DPoP: proof },
        body: new URLSearchParams({
          client_id: SPA.id,
          response_type: 'code',
          redirect_uri: SPA_CB,
          scope: 'openid',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        }).toString(),
      });
      expect(res.status).to.equal(400);
      expect(((await res.json()) as { error?: string }).error).to.equal('invalid_dpop_proof');
    });
  });
});
