/**
 * Password hashes brought from another system (`gatehouse users import`, docs/migration.md):
 * argon2 (Keycloak), bcrypt (Auth0, Keycloak), Firebase's scrypt, standard scrypt and PBKDF2
 * (Keycloak). Each is stored as one self-describing string and checked at sign-in; the method
 * then replaces it with an argon2id hash of the configured cost.
 */
import { createCipheriv, pbkdf2, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { bcryptCost, bcryptVerify } from './bcrypt.js';

const pbkdf2Async = promisify(pbkdf2);
const scryptAsync = promisify(scrypt) as (
  password: Buffer,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/** Bounds on what a file may ask a sign-in to compute (an import is trusted, a typo is not). */
const MAX_BCRYPT_COST = 14;
const MAX_PBKDF2_ITERATIONS = 5_000_000;
const MAX_SCRYPT_LOG_N = 20;
/** scrypt needs 128 * N * r bytes: at most 256 MiB for one sign-in. */
const MAX_SCRYPT_BYTES = 256 * 1024 * 1024;
const scryptFits = (logN: number, r: number) => 128 * 2 ** logN * r <= MAX_SCRYPT_BYTES;

const B64 = /^[A-Za-z0-9+/]+={0,2}$/;
const DIGESTS: Record<string, string> = { sha1: 'sha1', sha256: 'sha256', sha512: 'sha512' };

/** What `import` accepts, normalized to the stored string, or why it is refused. */
export type Parsed = { ok: true; secret: string; kind: string } | { ok: false; message: string };

const refuse = (message: string): Parsed => ({ ok: false, message });

/**
 * The input of one row's `credentials.PASSWORD`:
 * - `{ "hash": "$argon2id$…" | "$2b$…" | "$scrypt$ln=…" | "$pbkdf2-sha256$i=…" }`;
 * - Keycloak's credential as exported: `{ "credentialData": "{…}", "secretData": "{…}" }`;
 * - Firebase: `{ "algorithm": "SCRYPT", "hash", "salt", "signer_key", "salt_separator", "rounds", "mem_cost" }`.
 */
export function parseImported(input: unknown): Parsed {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return refuse('must be an object');
  const o = input as Record<string, unknown>;
  if ('credentialData' in o || 'secretData' in o) return keycloak(o);
  if (typeof o.algorithm === 'string' && o.algorithm.toUpperCase() === 'SCRYPT') return firebase(o);
  // Auth0's bulk-import shape: { algorithm, hash: { value } }.
  const hash = typeof o.hash === 'object' && o.hash !== null ? (o.hash as Record<string, unknown>).value : o.hash;
  if (typeof hash !== 'string') return refuse('needs "hash" (a PHC or bcrypt string), a Keycloak or a Firebase form');
  return phc(hash);
}

function phc(hash: string): Parsed {
  if (/^\$argon2(id|i|d)\$v=\d+\$[mtp]=\d+,[mtp]=\d+,[mtp]=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.test(hash)) {
    return { ok: true, secret: hash, kind: 'argon2' };
  }
  if (hash.startsWith('$2')) {
    const cost = bcryptCost(hash);
    if (cost === null) return refuse('not a bcrypt hash ($2a$, $2b$ or $2y$, cost, 53 characters)');
    if (cost < 4 || cost > MAX_BCRYPT_COST) return refuse(`bcrypt cost ${cost} is outside 4-${MAX_BCRYPT_COST}`);
    return { ok: true, secret: hash, kind: 'bcrypt' };
  }
  const parts = hash.split('$');
  if (parts[1] === 'scrypt') return scryptPhc(parts);
  if (parts[1]?.startsWith('pbkdf2-')) return pbkdf2Phc(parts);
  return refuse('unknown hash format (argon2, bcrypt, scrypt and PBKDF2 are imported)');
}

/** `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (base64, as passlib and the PHC draft write it). */
function scryptPhc(parts: string[]): Parsed {
  const params = phcParams(parts[2]);
  const [salt, key] = [b64(parts[3]), b64(parts[4])];
  const ln = params.ln ?? NaN;
  if (parts.length !== 5 || !salt || !key || key.length < 16 || !(ln >= 1 && ln <= MAX_SCRYPT_LOG_N)) {
    return refuse(`not a scrypt PHC string ($scrypt$ln=N,r=R,p=P$salt$hash, ln at most ${MAX_SCRYPT_LOG_N})`);
  }
  const r = params.r ?? 8;
  const p = params.p ?? 1;
  if (!(r >= 1 && r <= 32 && p >= 1 && p <= 16)) return refuse('scrypt r must be 1-32 and p 1-16');
  if (!scryptFits(ln, r)) return refuse('scrypt parameters need more than 256 MiB');
  return {
    ok: true,
    secret: `$scrypt$ln=${ln},r=${r},p=${p}$${salt.toString('base64')}$${key.toString('base64')}`,
    kind: 'scrypt',
  };
}

/** `$pbkdf2-sha256$i=27500,l=64$<salt>$<hash>`, or passlib's `$pbkdf2-sha256$29000$<salt>$<hash>`. */
function pbkdf2Phc(parts: string[]): Parsed {
  const digest = DIGESTS[parts[1]!.slice('pbkdf2-'.length)];
  const iterations = /^\d+$/.test(parts[2] ?? '') ? Number(parts[2]) : phcParams(parts[2]).i;
  // passlib's adapted base64 writes '.' for '+'.
  const [salt, key] = [b64(parts[3]?.replace(/\./g, '+')), b64(parts[4]?.replace(/\./g, '+'))];
  if (parts.length !== 5 || !digest || !salt || !key) {
    return refuse('not a PBKDF2 string ($pbkdf2-sha256$i=N$salt$hash; sha1, sha256 or sha512)');
  }
  return pbkdf2Secret(digest, iterations, salt, key);
}

function pbkdf2Secret(digest: string, iterations: number | undefined, salt: Buffer, key: Buffer): Parsed {
  if (!iterations || iterations < 1000 || iterations > MAX_PBKDF2_ITERATIONS) {
    return refuse(`PBKDF2 iterations must be 1000-${MAX_PBKDF2_ITERATIONS}`);
  }
  if (key.length < 16) return refuse('the PBKDF2 hash is shorter than 16 bytes');
  return {
    ok: true,
    secret: `$pbkdf2-${digest}$i=${iterations}$${salt.toString('base64')}$${key.toString('base64')}`,
    kind: 'pbkdf2',
  };
}

/**
 * A Keycloak credential as its realm export writes it: `credentialData` and `secretData` are
 * JSON strings (objects are taken too). pbkdf2 (sha1), pbkdf2-sha256 and pbkdf2-sha512 keep a
 * base64 salt and hash; argon2 and bcrypt providers keep a whole PHC or bcrypt string in `value`.
 */
function keycloak(o: Record<string, unknown>): Parsed {
  const credentialData = jsonMember(o.credentialData);
  const secretData = jsonMember(o.secretData);
  if (!credentialData || !secretData) return refuse('Keycloak credentialData and secretData must be JSON objects');
  const algorithm = String(credentialData.algorithm ?? '');
  const value = typeof secretData.value === 'string' ? secretData.value : '';
  if (value.startsWith('$')) return phc(value);
  if (algorithm === 'argon2') return keycloakArgon2(credentialData, secretData);
  const digest = { pbkdf2: 'sha1', 'pbkdf2-sha256': 'sha256', 'pbkdf2-sha512': 'sha512' }[algorithm];
  if (!digest)
    return refuse(`the Keycloak algorithm "${algorithm}" is not imported (pbkdf2, pbkdf2-sha256, pbkdf2-sha512)`);
  const salt = b64(typeof secretData.salt === 'string' ? secretData.salt : undefined);
  const key = b64(value);
  if (!salt || !key) return refuse('Keycloak secretData needs a base64 "value" and "salt"');
  return pbkdf2Secret(digest, Number(credentialData.hashIterations), salt, key);
}

/**
 * Keycloak's argon2 provider keeps the parameters apart (`additionalParameters`: type, version,
 * memory, parallelism, each a list of one string) and a base64 salt and hash: made a PHC string.
 */
function keycloakArgon2(credentialData: Record<string, unknown>, secretData: Record<string, unknown>): Parsed {
  const extra = (credentialData.additionalParameters ?? {}) as Record<string, unknown>;
  const param = (name: string, fallback: string) => {
    const v = extra[name];
    return String(Array.isArray(v) ? v[0] : (v ?? fallback));
  };
  const type = param('type', 'id');
  const version = { '1.3': 19, '1.0': 16 }[param('version', '1.3')];
  const salt = b64(str(secretData.salt));
  const key = b64(str(secretData.value));
  const [m, t, p] = [param('memory', '7168'), String(credentialData.hashIterations ?? '5'), param('parallelism', '1')];
  if (!['id', 'i', 'd'].includes(type) || !version || !salt || !key || ![m, t, p].every((n) => /^\d+$/.test(n))) {
    return refuse(
      'Keycloak argon2 needs type, version, memory, hashIterations, parallelism and a base64 salt and value',
    );
  }
  const nopad = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
  return phc(`$argon2${type}$v=${version}$m=${m},t=${t},p=${p}$${nopad(salt)}$${nopad(key)}`);
}

/**
 * Firebase's scrypt (github.com/firebase/scrypt): scrypt of the password with the user's salt
 * and the project's salt separator (N = 2^mem_cost, r = rounds, p = 1), whose first 32 bytes
 * are an AES-256-CTR key (zero IV) that encrypts the project's signer key; the result is the hash.
 */
function firebase(o: Record<string, unknown>): Parsed {
  const hash = b64(str(o.hash));
  const salt = b64(str(o.salt));
  const signer = b64(str(o.signer_key));
  const separator = b64(str(o.salt_separator));
  const rounds = Number(o.rounds);
  const memCost = Number(o.mem_cost);
  if (!hash || !salt || !signer || !separator) {
    return refuse('Firebase scrypt needs base64 "hash", "salt", "signer_key" and "salt_separator"');
  }
  if (
    !Number.isInteger(rounds) ||
    rounds < 1 ||
    rounds > 32 ||
    !Number.isInteger(memCost) ||
    memCost < 1 ||
    memCost > MAX_SCRYPT_LOG_N
  ) {
    return refuse(`Firebase scrypt needs "rounds" (1-32) and "mem_cost" (1-${MAX_SCRYPT_LOG_N})`);
  }
  if (!scryptFits(memCost, rounds)) return refuse('scrypt parameters need more than 256 MiB');
  const fields = [salt, separator, signer, hash].map((b) => b.toString('base64'));
  return { ok: true, secret: `$firebase-scrypt$r=${rounds},m=${memCost}$${fields.join('$')}`, kind: 'firebase-scrypt' };
}

/** Whether a stored password credential came from an import (argon2id ones too: marked in data). */
export function isImported(credential: { secret: string | null; data: Record<string, unknown> }): boolean {
  return typeof credential.data.imported === 'string' || !credential.secret?.startsWith('$argon2id$');
}

/**
 * Checks `password` against an imported secret; null when it is argon2 (the hasher checks
 * those). Every comparison is of equal-length digests with timingSafeEqual.
 */
export async function verifyImported(secret: string, password: string): Promise<boolean | null> {
  if (secret.startsWith('$argon2')) return null;
  if (secret.startsWith('$2')) return bcryptVerify(secret, password);
  const parts = secret.split('$');
  const bytes = Buffer.from(password, 'utf8');
  if (parts[1] === 'scrypt') {
    const { ln, r, p } = phcParams(parts[2]);
    const [salt, key] = [Buffer.from(parts[3]!, 'base64'), Buffer.from(parts[4]!, 'base64')];
    const derived = await scryptAsync(bytes, salt, key.length, scryptOptions(2 ** ln!, r!, p!));
    return timingSafeEqual(derived, key);
  }
  if (parts[1]?.startsWith('pbkdf2-')) {
    const [salt, key] = [Buffer.from(parts[3]!, 'base64'), Buffer.from(parts[4]!, 'base64')];
    const derived = await pbkdf2Async(bytes, salt, phcParams(parts[2]).i!, key.length, parts[1].slice(7));
    return timingSafeEqual(derived, key);
  }
  if (parts[1] === 'firebase-scrypt') {
    const { r, m } = phcParams(parts[2]);
    const [salt, separator, signer, hash] = parts.slice(3).map((b) => Buffer.from(b, 'base64'));
    const derived = await scryptAsync(bytes, Buffer.concat([salt!, separator!]), 32, scryptOptions(2 ** m!, r!, 1));
    const cipher = createCipheriv('aes-256-ctr', derived, Buffer.alloc(16));
    const computed = Buffer.concat([cipher.update(signer!), cipher.final()]);
    return computed.length === hash!.length && timingSafeEqual(computed, hash!);
  }
  throw new Error('a stored password hash of an unknown format');
}

function scryptOptions(N: number, r: number, p: number) {
  // Node refuses above 32 MiB by default; what the parameters need, with room.
  return { N, r, p, maxmem: 256 * N * r * p + 1024 * 1024 };
}

function phcParams(text: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const pair of (text ?? '').split(',')) {
    const [k, v] = pair.split('=');
    if (k && v !== undefined && /^\d+$/.test(v)) out[k] = Number(v);
  }
  return out;
}

/** Standard or URL-safe base64, padded or not, to bytes; null when it is not base64. */
function b64(text: string | undefined): Buffer | null {
  if (!text) return null;
  const standard = text.replace(/-/g, '+').replace(/_/g, '/');
  if (!B64.test(standard)) return null;
  const bytes = Buffer.from(standard, 'base64');
  return bytes.length ? bytes : null;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function jsonMember(v: unknown): Record<string, unknown> | null {
  let value = v;
  if (typeof v === 'string') {
    try {
      value = JSON.parse(v);
    } catch {
      return null;
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
