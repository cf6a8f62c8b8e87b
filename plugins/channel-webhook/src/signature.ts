import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header names of a Gatehouse webhook request. */
export const TIMESTAMP_HEADER = 'X-Gatehouse-Timestamp';
export const SIGNATURE_HEADER = 'X-Gatehouse-Signature';
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/**
 * The signature header value: `v1=` and the hex HMAC-SHA256, keyed with the shared secret, of
 * `<timestamp>.<raw body>`. Signing the timestamp lets receivers refuse replays of old requests.
 */
export function signPayload(secret: string, timestamp: string | number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`;
}

/**
 * Checks an `X-Gatehouse-Signature` header against the raw request body, in constant time.
 * Pass `toleranceSeconds` to also refuse timestamps further than that from `now` (replays).
 *
 * @example
 * const ok = verifySignature(secret, req.headers['x-gatehouse-timestamp'], rawBody,
 *   req.headers['x-gatehouse-signature'], { toleranceSeconds: 300 });
 */
export function verifySignature(
  secret: string,
  timestamp: string | number | undefined,
  body: string | Buffer,
  header: string | undefined,
  opts: { toleranceSeconds?: number; now?: Date } = {},
): boolean {
  if (timestamp === undefined || header === undefined) return false;
  const stamp = String(timestamp);
  if (!/^\d{1,12}$/.test(stamp)) return false;
  if (opts.toleranceSeconds !== undefined) {
    const nowSeconds = Math.floor((opts.now ?? new Date()).getTime() / 1000);
    if (Math.abs(nowSeconds - Number(stamp)) > opts.toleranceSeconds) return false;
  }
  const expected = Buffer.from(signPayload(secret, stamp, Buffer.isBuffer(body) ? body.toString('utf8') : body));
  const given = Buffer.from(header.trim());
  // Lengths are public (always v1= plus 64 hex digits); only the content must be compared in constant time.
  return given.length === expected.length && timingSafeEqual(given, expected);
}
