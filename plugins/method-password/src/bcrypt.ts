/**
 * bcrypt (Provos and Mazières, 1999) for checking imported `$2a$`/`$2b$`/`$2y$` hashes (Auth0,
 * Keycloak's bcrypt providers, most web frameworks). Check only: new hashes are argon2id.
 *
 * Blowfish's initial state is the fractional part of pi in hex: computed here once (Machin's
 * formula with BigInt, a few milliseconds) instead of 1,042 constants copied into the source.
 * The self-check below (first and last word) guards it.
 */
import { timingSafeEqual } from 'node:crypto';

const WORDS = 18 + 4 * 256;
let initial: Uint32Array | null = null;

/** P-array (18 words) then the four S-boxes (256 words each): pi's hex digits after the point. */
function blowfishInit(): Uint32Array {
  if (initial) return initial;
  const bits = BigInt(WORDS * 32);
  const guard = 64n;
  const one = 1n << (bits + guard);
  const arctanInverse = (x: bigint): bigint => {
    let term = one / x;
    let sum = term;
    const xx = x * x;
    for (let k = 1n; term !== 0n; k++) {
      term /= xx;
      sum += (k % 2n === 1n ? -term : term) / (2n * k + 1n);
    }
    return sum;
  };
  const pi = 4n * (4n * arctanInverse(5n) - arctanInverse(239n));
  const fraction = (pi - 3n * one) >> guard;
  const words = new Uint32Array(WORDS);
  for (let i = 0; i < WORDS; i++) words[i] = Number((fraction >> (bits - 32n * BigInt(i + 1))) & 0xffffffffn);
  if (words[0] !== 0x243f6a88 || words[WORDS - 1] !== 0x3ac372e6) throw new Error('Blowfish constants are wrong');
  initial = words;
  return words;
}

interface State {
  p: Uint32Array;
  s: Uint32Array;
}

function encipher(st: State, block: Uint32Array, at: number): void {
  const { p, s } = st;
  let l = block[at]!;
  let r = block[at + 1]!;
  l ^= p[0]!;
  for (let i = 1; i <= 16; i += 2) {
    r ^=
      (((s[l >>> 24]! + s[256 | ((l >>> 16) & 0xff)]!) ^ s[512 | ((l >>> 8) & 0xff)]!) + s[768 | (l & 0xff)]!) ^ p[i]!;
    l ^=
      (((s[r >>> 24]! + s[256 | ((r >>> 16) & 0xff)]!) ^ s[512 | ((r >>> 8) & 0xff)]!) + s[768 | (r & 0xff)]!) ^
      p[i + 1]!;
  }
  block[at] = (r ^ p[17]!) >>> 0;
  block[at + 1] = l >>> 0;
}

/** Reads the next 32-bit big-endian word of `data`, cyclically. */
function streamWord(data: Uint8Array, pos: { i: number }): number {
  let word = 0;
  for (let k = 0; k < 4; k++) {
    word = (word << 8) | data[pos.i]!;
    pos.i = (pos.i + 1) % data.length;
  }
  return word >>> 0;
}

/** Blowfish's key schedule, with the salt mixed in when given (bcrypt's ExpandKey). */
function expandKey(st: State, key: Uint8Array, salt: Uint8Array | null): void {
  const keyPos = { i: 0 };
  for (let i = 0; i < 18; i++) st.p[i] = (st.p[i]! ^ streamWord(key, keyPos)) >>> 0;
  const saltPos = { i: 0 };
  const block = new Uint32Array(2);
  const fill = (target: Uint32Array, count: number) => {
    for (let i = 0; i < count; i += 2) {
      if (salt) {
        block[0] = block[0]! ^ streamWord(salt, saltPos);
        block[1] = block[1]! ^ streamWord(salt, saltPos);
      }
      encipher(st, block, 0);
      target[i] = block[0]!;
      target[i + 1] = block[1]!;
    }
  };
  fill(st.p, 18);
  fill(st.s, 1024);
}

const ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** bcrypt's base64 (its own alphabet, no padding) to `length` bytes; null on a stray character. */
function decode(text: string, length: number): Uint8Array | null {
  const out = new Uint8Array(length);
  let acc = 0;
  let accBits = 0;
  let n = 0;
  for (const ch of text) {
    const v = ALPHABET.indexOf(ch);
    if (v < 0) return null;
    acc = (acc << 6) | v;
    accBits += 6;
    if (accBits >= 8) {
      accBits -= 8;
      if (n < length) out[n++] = (acc >>> accBits) & 0xff;
    }
    acc &= (1 << accBits) - 1;
  }
  return n === length ? out : null;
}

export const BCRYPT = /^\$2[aby]\$(\d\d)\$([./A-Za-z0-9]{22})([./A-Za-z0-9]{31})$/;

/** The cost of a well-formed bcrypt hash, or null. */
export function bcryptCost(hash: string): number | null {
  const m = BCRYPT.exec(hash);
  return m && decode(m[2]!, 16) && decode(m[3]!, 23) ? Number(m[1]) : null;
}

/** Rounds between two yields to the event loop (about 3 ms of work on the test machine). */
const ROUNDS_PER_SLICE = 32;

/**
 * The 23 bytes bcrypt derives from `password` with this cost and 16-byte salt. The work runs on
 * the event loop in slices, so other requests are served between them (cost 10: ~95 ms in all).
 */
export async function bcryptDigest(password: string, cost: number, salt: Uint8Array): Promise<Uint8Array> {
  const words = blowfishInit();
  const st: State = { p: words.slice(0, 18), s: words.slice(18) };
  // The password's UTF-8 bytes and a NUL, at most 72 bytes ($2b$'s rule; $2a$ and $2y$ agree below 256).
  const key = new Uint8Array([...Buffer.from(password, 'utf8'), 0]).subarray(0, 72);
  expandKey(st, key, salt);
  for (let round = 0; round < 2 ** cost; round++) {
    expandKey(st, key, null);
    expandKey(st, salt, null);
    if (round % ROUNDS_PER_SLICE === ROUNDS_PER_SLICE - 1) await new Promise((resolve) => setImmediate(resolve));
  }
  const text = Buffer.from('OrpheanBeholderScryDoubt', 'latin1');
  const block = new Uint32Array(6);
  for (let i = 0; i < 6; i++) block[i] = text.readUInt32BE(i * 4);
  for (let i = 0; i < 64; i++) for (let j = 0; j < 6; j += 2) encipher(st, block, j);
  const out = Buffer.alloc(24);
  for (let i = 0; i < 6; i++) out.writeUInt32BE(block[i]!, i * 4);
  return out.subarray(0, 23);
}

/** Whether `password` matches a bcrypt hash (constant-time comparison of the digests). */
export async function bcryptVerify(hash: string, password: string): Promise<boolean> {
  const m = BCRYPT.exec(hash);
  const salt = m && decode(m[2]!, 16);
  const expected = m && decode(m[3]!, 23);
  if (!m || !salt || !expected) return false;
  return timingSafeEqual(await bcryptDigest(password, Number(m[1]), salt), expected);
}
