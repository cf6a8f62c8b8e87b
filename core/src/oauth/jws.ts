import { constants, sign, type KeyObject } from 'node:crypto';
import type { JwtSigning, SigningArgs } from '@gatehouse-auth/plugin-api';

/** A signing key: its id and algorithm (both in the JWS header) and the private key for node:crypto. */
export interface JwtSigner {
  alg: string;
  kid: string;
  key: KeyObject;
}

const b64 = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');

/** What node:crypto's sign() takes for `alg` (RFC 7518): the digest, and the key with its options. */
function signingArgs(alg: string, key: KeyObject): SigningArgs {
  switch (alg) {
    case 'RS256':
      return ['sha256', key];
    case 'PS256':
      // RFC 7518 §3.5: MGF1 with SHA-256, a salt as long as the hash.
      return ['sha256', { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }];
    case 'ES256':
      return ['sha256', { key, dsaEncoding: 'ieee-p1363' }];
    case 'EdDSA':
      return [null, key];
    default:
      throw new Error(`signing algorithm ${alg} is not supported`);
  }
}

/**
 * The encoded protected header, alg and kid last so a caller's header never changes them. Kept
 * per key (one key has one kid and alg) and `typ` (the headers Gatehouse signs differ in nothing
 * else): one JSON and Base64 encoding less per token.
 */
const encodedHeaders = new WeakMap<KeyObject, Map<string, string>>();
function encodedHeader(signer: JwtSigner, header: Record<string, unknown>): string {
  const keys = Object.keys(header);
  const cacheable = keys.length === 0 || (keys.length === 1 && typeof header.typ === 'string');
  if (!cacheable) return b64({ ...header, alg: signer.alg, kid: signer.kid });
  let byTyp = encodedHeaders.get(signer.key);
  if (!byTyp) encodedHeaders.set(signer.key, (byTyp = new Map()));
  const typ = (header.typ as string | undefined) ?? '';
  let encoded = byTyp.get(typ);
  if (encoded === undefined) {
    encoded = b64({ ...header, alg: signer.alg, kid: signer.kid });
    byTyp.set(typ, encoded);
  }
  return encoded;
}

/** The JWS signing input (RFC 7515 §7.1). */
const signingInput = (signer: JwtSigner, header: Record<string, unknown>, payload: Record<string, unknown>) =>
  `${encodedHeader(signer, header)}.${b64(payload)}`;

/**
 * A JWT as a compact JWS, signed synchronously by node:crypto on the calling thread (for the
 * rare tokens: logout tokens). Tokens are verified with jose everywhere, tests included.
 */
export function signJwt(signer: JwtSigner, header: Record<string, unknown>, payload: Record<string, unknown>): string {
  const input = signingInput(signer, header, payload);
  const [digest, key] = signingArgs(signer.alg, signer.key);
  return `${input}.${sign(digest, Buffer.from(input), key).toString('base64url')}`;
}

/**
 * The `jwtSigning` service's default (decision 77): node:crypto on the event loop. An ES256
 * signature is about 45 µs, RSA about 1 ms: `@gatehouse-auth/worker-threads` moves them to
 * other cores, in batches (decision 31).
 */
export const inProcessSigning: JwtSigning = {
  sign: async (_key, [digest, key], input) => sign(digest, Buffer.from(input), key).toString('base64url'),
};

/**
 * The same, signed by `signing` (the token endpoint's signatures). Plain node:crypto, not jose:
 * jose signs through WebCrypto, whose per-call overhead cost the token endpoint a fifth of its
 * throughput (decision 11).
 */
export async function signJwtWith(
  signing: JwtSigning,
  signer: JwtSigner,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
): Promise<string> {
  const input = signingInput(signer, header, payload);
  return `${input}.${await signing.sign(signer.key, signingArgs(signer.alg, signer.key), input)}`;
}
