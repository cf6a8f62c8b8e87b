import type { JsonObject } from '@gatehouse-auth/plugin-api';
import { createHash } from 'node:crypto';
import { compactVerify, importJWK, type JWK } from 'jose';
import type { AssertionReplayStore } from '../oauth/assertions.js';
import { sha256 } from '../util/crypto.js';

/** The header every device call carries (docs/devices.md, "The proof on every call"). */
export const PROOF_HEADER = 'device-proof';
const PROOF_TYPE = 'device-proof+jwt';
/** How far a proof's `iat` may be from the server's clock. */
const MAX_SKEW_SECONDS = 60;

/** What a proof is checked against: the key, and what the server expects it to sign. */
export interface ProofKey {
  deviceId: string;
  publicKey: JsonObject;
  alg: 'ES256' | 'EdDSA';
  biometric: boolean;
}

export interface ProofExpectation {
  /** The request's path. */
  htu: string;
  /** The binding code or the push's challenge; null where none applies (the inbox). */
  nonce: string | null;
  /** The canonical body (`canonicalBody`). */
  body: string;
}

export type ProofResult = { ok: true; uv: boolean } | { ok: false; reason: string };

/**
 * The canonical form of a request body that a proof signs: one `name=value` line per field,
 * sorted by name. Empty and null values are left out (the server never sees them); an object
 * counts as its JSON with sorted keys; a file part as the SHA-256 of its bytes.
 */
export function canonicalBody(body: Record<string, unknown>, files: { fieldName: string; buffer: Buffer }[] = []) {
  const lines: [string, string][] = [];
  for (const [name, value] of Object.entries(body)) {
    if (value === null || value === undefined || value === '') continue;
    lines.push([name, typeof value === 'object' ? sortedJson(value) : String(value)]);
  }
  for (const f of files) lines.push([f.fieldName, `sha256:${createHash('sha256').update(f.buffer).digest('hex')}`]);
  lines.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return lines.map(([name, value]) => `${name}=${value}\n`).join('');
}

function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The algorithm a public JWK is for, or null when it is no key Gatehouse accepts. */
export function keyAlgorithm(jwk: unknown): 'ES256' | 'EdDSA' | null {
  if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk)) return null;
  const k = jwk as Record<string, unknown>;
  // A private member means the app sent its secret: refuse rather than store it.
  if ('d' in k || 'p' in k || 'q' in k) return null;
  const b64 = (v: unknown, bytes: number) =>
    typeof v === 'string' && /^[A-Za-z0-9_-]+$/.test(v) && Buffer.from(v, 'base64url').length === bytes;
  if (k.kty === 'EC' && k.crv === 'P-256' && b64(k.x, 32) && b64(k.y, 32)) return 'ES256';
  if (k.kty === 'OKP' && k.crv === 'Ed25519' && b64(k.x, 32)) return 'EdDSA';
  return null;
}

/** The public members only, as stored. */
export function publicJwk(jwk: Record<string, unknown>): JsonObject {
  return jwk.kty === 'EC'
    ? { kty: 'EC', crv: jwk.crv as string, x: jwk.x as string, y: jwk.y as string }
    : { kty: 'OKP', crv: jwk.crv as string, x: jwk.x as string };
}

/**
 * Checks a device proof: signed by the device's key for this server, this call, this body and
 * (where there is one) this challenge; fresh, and never seen before. `uv` says the proof claims
 * a biometric unlock, which only a biometric-bound key may.
 */
export async function checkDeviceProof(
  proof: string | undefined,
  key: ProofKey,
  expect: ProofExpectation,
  ctx: { issuer: string; now: Date; replay: AssertionReplayStore },
): Promise<ProofResult> {
  if (!proof || proof.length > 8192) return { ok: false, reason: 'proof_missing' };
  let payload: Record<string, unknown>;
  try {
    const verified = await compactVerify(proof, await importJWK(key.publicKey as JWK, key.alg), {
      algorithms: [key.alg],
    });
    if (verified.protectedHeader.typ !== PROOF_TYPE) return { ok: false, reason: 'proof_type' };
    if (verified.protectedHeader.kid !== key.deviceId) return { ok: false, reason: 'proof_kid' };
    payload = JSON.parse(new TextDecoder().decode(verified.payload)) as Record<string, unknown>;
    if (!payload || typeof payload !== 'object') return { ok: false, reason: 'proof_payload' };
  } catch {
    return { ok: false, reason: 'proof_signature' };
  }
  const now = Math.floor(ctx.now.getTime() / 1000);
  if (payload.aud !== ctx.issuer) return { ok: false, reason: 'proof_aud' };
  if (payload.htm !== 'POST' || payload.htu !== expect.htu) return { ok: false, reason: 'proof_htu' };
  if (typeof payload.iat !== 'number' || Math.abs(payload.iat - now) > MAX_SKEW_SECONDS)
    return { ok: false, reason: 'proof_stale' };
  if ((payload.nonce ?? null) !== expect.nonce) return { ok: false, reason: 'proof_nonce' };
  if (payload.bh !== sha256(expect.body)) return { ok: false, reason: 'proof_body' };
  const uv = payload.uv === true;
  if (uv && !key.biometric) return { ok: false, reason: 'uv_without_biometric_key' };
  const jti = payload.jti;
  if (typeof jti !== 'string' || jti.length < 16 || jti.length > 128) return { ok: false, reason: 'proof_jti' };
  // Last, so a proof failing any other check does not spend its jti.
  const fresh = await ctx.replay.use(`device-proof:${key.deviceId}`, jti, new Date((now + MAX_SKEW_SECONDS) * 1000));
  if (!fresh) return { ok: false, reason: 'proof_replay' };
  return { ok: true, uv };
}
