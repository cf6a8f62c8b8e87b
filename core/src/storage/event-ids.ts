import { randomBytes } from 'node:crypto';

/** Started at random (below 2^41), so two processes' counters do not run in step. */
let counter = randomBytes(6).readUIntBE(0, 6) % 2 ** 41;

/**
 * An event id that sorts, as text, in the order this process made it: a UUIDv7 (RFC 9562 §5.7)
 * of the event's time, with a counter in its first 42 random bits (§6.2, method 1). Events
 * stored in the same millisecond then list in the order they were written (the FDS verdicts
 * before the verification they led to) under `ORDER BY at DESC, id DESC`. Across nodes the rows
 * of one millisecond come from unrelated requests: their order there is arbitrary, as before.
 */
export function eventId(at: number): string {
  counter += 1;
  const time = at.toString(16).padStart(12, '0');
  const randA = Math.floor(counter / 2 ** 30) % 2 ** 12;
  // rand_b: the variant (binary 10), the counter's low 30 bits, then 32 random bits.
  const randB = (2n << 62n) | (BigInt(counter % 2 ** 30) << 32n) | BigInt(randomBytes(4).readUInt32BE(0));
  const b = randB.toString(16);
  return `${time.slice(0, 8)}-${time.slice(8)}-7${randA.toString(16).padStart(3, '0')}-${b.slice(0, 4)}-${b.slice(4)}`;
}
