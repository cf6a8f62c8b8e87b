/**
 * JWTs signed by node:crypto, inline and through the `jwtSigning` service's in-process default,
 * checked with jose (an independent verifier). The signing threads are the worker-threads plugin's
 * (plugins/worker-threads/test).
 */
import { expect } from 'chai';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { inProcessSigning, signJwt, signJwtWith, type JwtSigner } from '../../core/dist/oauth/jws.js';

const signJwtInProcess = (signer: JwtSigner, header: Record<string, unknown>, payload: Record<string, unknown>) =>
  signJwtWith(inProcessSigning, signer, header, payload);

const signers: JwtSigner[] = [
  { alg: 'ES256', kid: 'ec-1', key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey },
  { alg: 'RS256', kid: 'rsa-1', key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey },
  { alg: 'PS256', kid: 'rsa-2', key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey },
  { alg: 'EdDSA', kid: 'ed-1', key: generateKeyPairSync('ed25519').privateKey },
];

describe('JWS signing (node:crypto, verified with jose)', () => {
  for (const signer of signers) {
    it(`${signer.alg}: inline and service signatures verify, with typ, alg and kid in the header`, async () => {
      const publicKey = createPublicKey(signer.key);
      for (const sign of [signJwt, signJwtInProcess]) {
        for (const typ of ['at+jwt', 'JWT']) {
          const token = await sign(signer, { typ }, { sub: 'u1', n: typ });
          const { payload, protectedHeader } = await jwtVerify(token, publicKey, { algorithms: [signer.alg] });
          expect(protectedHeader).to.deep.equal({ typ, alg: signer.alg, kid: signer.kid });
          expect(payload).to.deep.equal({ sub: 'u1', n: typ });
        }
      }
    });
  }

  it('a header may add fields but never change alg or kid', async () => {
    const [signer] = signers as [JwtSigner];
    const token = signJwt(signer, { typ: 'logout+jwt', alg: 'none', kid: 'forged', cty: 'x' }, { sub: 'u' });
    expect(decodeProtectedHeader(token)).to.deep.equal({ typ: 'logout+jwt', cty: 'x', alg: 'ES256', kid: 'ec-1' });
    // A plain header afterwards is not the extended one of before.
    expect(decodeProtectedHeader(signJwt(signer, { typ: 'logout+jwt' }, {}))).to.deep.equal({
      typ: 'logout+jwt',
      alg: 'ES256',
      kid: 'ec-1',
    });
  });
});
