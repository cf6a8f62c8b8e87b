/**
 * Issue 13: ID tokens in the algorithm each app asks for (RS256 by default, as OIDC Core §15.1
 * expects; ES256, PS256, EdDSA), each algorithm with its own key in the JWKS; at_hash with the
 * algorithm's hash; discovery lists what is configured; a config naming an unconfigured
 * algorithm is refused at start-up.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { parseConfig } from '@gatehouse-auth/core';
import { Browser } from './support.js';
import { DEMO_APP, DEMO_SPA, fullLogin, redeemDemo, startDemoServer, type DemoServer } from './demo-server.js';

describe('ID token signing algorithms per app (issue 13)', function () {
  let server: DemoServer;

  before(async function () {
    server = await startDemoServer({
      configure(config) {
        config.oauth.signing_algs = ['RS256', 'ES256', 'PS256', 'EdDSA'];
        config.apps.find((a) => a.client_id === 'demo-app')!.id_token_signed_response_alg = 'EdDSA';
        config.apps.find((a) => a.client_id === 'demo-spa')!.id_token_signed_response_alg = 'PS256';
      },
    });
  });
  after(() => server?.close());

  const jwks = async () => (await (await fetch(server.url('/.well-known/jwks.json'))).json()) as JSONWebKeySet;

  it('the JWKS has one key per configured algorithm; discovery lists them', async function () {
    const keys = (await jwks()).keys;
    expect(keys.map((k) => k.alg).sort()).to.deep.equal(['ES256', 'EdDSA', 'PS256', 'RS256']);
    expect(keys.find((k) => k.alg === 'EdDSA')).to.include({ kty: 'OKP', crv: 'Ed25519' });
    const meta = (await (await fetch(server.url('/.well-known/openid-configuration'))).json()) as Record<
      string,
      unknown
    >;
    expect(meta.id_token_signing_alg_values_supported).to.deep.equal(['RS256', 'ES256', 'PS256', 'EdDSA']);
  });

  for (const [client, alg, hash] of [
    [DEMO_APP, 'EdDSA', 'sha512'],
    [DEMO_SPA, 'PS256', 'sha256'],
  ] as const) {
    it(`${client.id} gets ${alg} ID tokens that verify against the JWKS, at_hash with ${hash}`, async function () {
      const browser = new Browser(server);
      const { auth, code } = await fullLogin(browser, server, client);
      const tokens = await redeemDemo(server, client, code, auth.verifier);
      const idToken = tokens.id_token as string;
      expect(decodeProtectedHeader(idToken).alg).to.equal(alg);
      const { payload } = await jwtVerify(idToken, createLocalJWKSet(await jwks()), {
        issuer: server.issuer,
        audience: client.id,
        algorithms: [alg],
      });
      const digest = createHash(hash)
        .update(tokens.access_token as string)
        .digest();
      expect(payload.at_hash).to.equal(digest.subarray(0, digest.length / 2).toString('base64url'));
      // A JWT access token keeps its own algorithm (ES256 by default); demo-spa's are opaque.
      const access = tokens.access_token as string;
      if (access.split('.').length === 3) expect(decodeProtectedHeader(access).alg).to.equal('ES256');
    });
  }

  it('an app asking for an algorithm the server keeps no key for is refused at start-up', function () {
    const app = { client_id: 'x', id_token_signed_response_alg: 'PS256' };
    expect(() => parseConfig({ apps: [app] }, {})).to.throw(/PS256 is not among oauth.signing_algs/);
    expect(() => parseConfig({ apps: [{ ...app, id_token_signed_response_alg: 'HS256' }] }, {})).to.throw();
  });
});
