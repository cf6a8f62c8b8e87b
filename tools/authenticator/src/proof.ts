/**
 * The Device-Proof of docs/devices.md, written from that page alone (this package does not use
 * the server's code): a compact JWS over the call, its body and the server's challenge.
 */
import { createHash, randomBytes } from 'node:crypto';
import { CompactSign, type CryptoKey, type KeyObject } from 'jose';

export type DeviceAlg = 'ES256' | 'EdDSA';

/** A file part of a multipart call (a face photo). */
export interface FilePart {
  name: string;
  bytes: Uint8Array;
  type: string;
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => byCodeUnits(a, b));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** One `name=value\n` line per field, sorted by name; objects as sorted JSON, files as their SHA-256. */
export function canonicalBody(fields: Record<string, unknown>, files: FilePart[] = []): string {
  const lines: [string, string][] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined || value === null || value === '') continue;
    lines.push([name, typeof value === 'object' ? sortedJson(value) : String(value)]);
  }
  for (const f of files) lines.push([f.name, `sha256:${createHash('sha256').update(f.bytes).digest('hex')}`]);
  lines.sort(([a], [b]) => byCodeUnits(a, b));
  return lines.map(([name, value]) => `${name}=${value}\n`).join('');
}

export interface ProofInput {
  key: CryptoKey | KeyObject;
  alg: DeviceAlg;
  deviceId: string;
  issuer: string;
  /** The public path of the call, e.g. /verification-srv/devices/pushes. */
  path: string;
  body: string;
  nonce?: string;
  /** Claims a biometric unlock of the key. */
  uv?: boolean;
  /** Seconds since the epoch (default: now). */
  iat?: number;
}

export async function deviceProof(input: ProofInput): Promise<string> {
  const claims = {
    aud: input.issuer,
    htm: 'POST',
    htu: input.path,
    iat: input.iat ?? Math.floor(Date.now() / 1000),
    jti: randomBytes(18).toString('base64url'),
    ...(input.nonce !== undefined ? { nonce: input.nonce } : {}),
    bh: createHash('sha256').update(input.body).digest('base64url'),
    ...(input.uv ? { uv: true } : {}),
  };
  return new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: input.alg, typ: 'device-proof+jwt', kid: input.deviceId })
    .sign(input.key);
}
