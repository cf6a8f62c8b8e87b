/** The longest a provider's Retry-After may make us wait. */
export const MAX_RETRY_AFTER_MS = 10_000;

/** 429 and 5xx are worth another try; other statuses will not change by repeating the request. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Retry-After as milliseconds (delta-seconds or an HTTP date), or null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: Date): number | null {
  if (value === null || value.trim() === '') return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now.getTime());
}

/**
 * How long to wait before retry number `retry` (0 for the first retry): the provider's
 * Retry-After (capped at 10 s) if it sent one, else `backoffMs * 2^retry` plus up to 20% jitter.
 */
export function retryDelayMs(input: {
  retry: number;
  backoffMs: number;
  retryAfterMs: number | null;
  random: number;
}): number {
  if (input.retryAfterMs !== null) return Math.min(input.retryAfterMs, MAX_RETRY_AFTER_MS);
  const base = input.backoffMs * 2 ** input.retry;
  return Math.round(base * (1 + 0.2 * input.random));
}
