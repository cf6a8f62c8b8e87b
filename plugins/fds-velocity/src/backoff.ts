/**
 * Seconds a factor must rest after its newest failure: nothing for the first `free` consecutive
 * failures, then `base`, doubling with each further failure, never more than `max`.
 */
export function backoffSeconds(consecutive: number, free: number, base: number, max: number): number {
  if (consecutive === 0 || consecutive < free) return 0;
  // Past 2^31 the wait is far beyond any sane max; clamping the exponent keeps the number finite.
  const exponent = Math.min(consecutive - free, 31);
  return Math.min(base * 2 ** exponent, max);
}

/** Whole seconds left until `from + waitSeconds`, rounded up; 0 once that moment has passed. */
export function secondsLeft(from: Date, waitSeconds: number, now: Date): number {
  const remainingMs = from.getTime() + waitSeconds * 1000 - now.getTime();
  return remainingMs > 0 ? Math.ceil(remainingMs / 1000) : 0;
}
