import { constants, sign, type KeyObject } from 'node:crypto';

/** The JWS algorithms Gatehouse signs with (RFC 7518 §3, RFC 8037). */
export const SIGNING_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

const b64 = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');

/** One signature with node:crypto, as RFC 7518 defines it for `alg`. */
function signature(alg: string, input: Buffer, key: KeyObject): Buffer {
  switch (alg) {
    case 'RS256':
      return sign('sha256', input, key);
    case 'PS256':
      // RFC 7518 §3.5: MGF1 with SHA-256, a salt as long as the hash.
      return sign('sha256', input, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
    case 'ES256':
      return sign('sha256', input, { key, dsaEncoding: 'ieee-p1363' });
    case 'EdDSA':
      return sign(null, input, key);
    default:
      throw new Error(`signing algorithm ${alg} is not supported`);
  }
}

/**
 * A JWT as a compact JWS (RFC 7515 §7.1), signed synchronously by node:crypto. jose signs
 * through WebCrypto, a thread-pool round trip per token that cost the token endpoint a fifth
 * of its throughput; tokens are still verified with jose everywhere, tests included.
 */
export function signJwt(
  signer: { alg: string; kid: string; key: KeyObject },
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
): string {
  // alg and kid last: a caller's header may add fields (typ), never change what signed it.
  const input = `${b64({ ...header, alg: signer.alg, kid: signer.kid })}.${b64(payload)}`;
  return `${input}.${signature(signer.alg, Buffer.from(input), signer.key).toString('base64url')}`;
}
