import { sign, type KeyObject } from 'node:crypto';

/** The ECDSA algorithms Gatehouse signs with, and their hashes (RFC 7518 §3.4). */
const HASH: Record<string, string> = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' };

const b64 = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');

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
  const hash = HASH[signer.alg];
  if (!hash) throw new Error(`signing algorithm ${signer.alg} is not supported`);
  // alg and kid last: a caller's header may add fields (typ), never change what signed it.
  const input = `${b64({ ...header, alg: signer.alg, kid: signer.kid })}.${b64(payload)}`;
  const signature = sign(hash, Buffer.from(input), { key: signer.key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}
