import autocannon, { type Options, type Result } from 'autocannon';
import type { ServerLatency } from './server-latency.js';

/** What one timed run measured. */
export interface LoadSummary {
  /** Successful (2xx) responses per second over the run's actual duration. */
  rps: number;
  /** Latency percentiles in milliseconds, over every response of the run. */
  p50: number;
  /** Mean latency in milliseconds (fractional: finer than the whole-millisecond percentiles). */
  mean: number;
  p90: number;
  p99: number;
  max: number;
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationSeconds: number;
  connections: number;
  /** The server's CPU time (all its threads) per request over the run, when the bench could read it. */
  cpuUsPerRequest?: number;
  /** The same split by thread (µs per request): the main thread, V8's and libuv's threads, worker threads. */
  cpuSplitUs?: { main: number; helpers: number; workers: number };
  /** The server's peak resident memory during the run, MiB (Linux). */
  peakRssMiB?: number;
  /** With --server-latency: the server's own view of the run (lib/server-latency.ts). */
  server?: ServerLatency;
}

export interface LoadOptions extends Omit<Options, 'duration' | 'amount'> {
  /** Seconds; the run stops after this long even with `amount` left. */
  durationSeconds: number;
  /** Stop after this many requests (e.g. one per single-use code). */
  amount?: number;
}

/** Refuses any target but the loopback: the bench never sends load elsewhere. */
function assertLoopback(url: string): void {
  const host = new URL(url).hostname;
  if (host !== '127.0.0.1') throw new Error(`bench: refusing to send load to ${host} (127.0.0.1 only)`);
}

/** One autocannon run, bounded by time (and by `amount` when given). */
export function runLoad(options: LoadOptions): Promise<LoadSummary> {
  assertLoopback(options.url);
  const { durationSeconds, amount, path, ...rest } = options;
  // autocannon takes the path of a single request from the URL (a top-level `path` is ignored).
  const url = path ? new URL(path, options.url).toString() : options.url;
  return new Promise<LoadSummary>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const instance = autocannon(
      // With `amount`, autocannon ignores `duration`: the timer below bounds the run instead.
      { timeout: 10, ...rest, url, ...(amount ? { amount } : { duration: durationSeconds }) },
      (err: Error | null, result: Result) => {
        if (timer) clearTimeout(timer);
        if (err) return reject(err);
        resolve(summarize(result, options.connections ?? 10));
      },
    );
    if (amount) timer = setTimeout(() => instance.stop(), durationSeconds * 1000);
  });
}

function summarize(r: Result, connections: number): LoadSummary {
  const ok = r['2xx'];
  const duration = Math.max(r.duration, 0.001);
  return {
    rps: Math.round(ok / duration),
    p50: r.latency.p50,
    mean: Number(r.latency.mean.toFixed(2)),
    p90: r.latency.p90,
    p99: r.latency.p99,
    max: r.latency.max,
    requests: r.requests.total,
    ok,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    durationSeconds: Number(duration.toFixed(2)),
    connections,
  };
}
