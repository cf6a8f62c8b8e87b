import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Caps how far V8 lets the old generation grow between full collections (decision 55), and runs
 * one full collection now (decision 60). V8 reads the flag when a full collection computes the
 * next limit; the limit in force until then was computed during start-up with V8's own factor
 * (up to 4× what survived). A load that promotes slowly, like whole logins, reached the next
 * collection only after 40 s and tens of MB of garbage, so the cap took effect too late.
 * The collection costs 10–30 ms once, while the server starts.
 */
export function capHeapGrowth(percent: number): void {
  if (percent <= 0) return;
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
  // `gc` appears only in a context made while --expose-gc is on: never on the app's own global.
  v8.setFlagsFromString('--expose-gc');
  let gc: unknown;
  try {
    gc = vm.runInNewContext('typeof gc === "function" ? gc : undefined');
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
  if (typeof gc === 'function') (gc as () => void)();
}
