/**
 * What a server sees of a timed run, beside the load generator's latency (`npm run bench --
 * --server-latency`, which starts the servers with BENCH_SERVER_LATENCY=1; without it nothing is
 * attached). Between `{ type: 'latency-start' }` and `{ type: 'latency-stop' }` (both answered over
 * IPC), in the server's own process:
 * - each request's time to its response's 'finish' from its arrival, taken as the first 'request'
 *   event of its loop turn: the sockets read in one turn were all readable when it began, and a
 *   server that answers within the read callback (the peer) would otherwise not count the wait
 *   behind the turn's other requests; and from its own 'request' event (its handling). Both in
 *   HDR histograms (perf_hooks.createHistogram); this listener runs before the app's;
 * - the event loop's delay (monitorEventLoopDelay, 1 ms timer);
 * - the main thread's GC pauses, by kind (a PerformanceObserver on 'gc');
 * - the requests that began in one loop turn (counted until that turn's check phase);
 * - any `timer(name)` a server adds (Gatehouse: its SQL statements and signatures, see
 *   lib/server-timings.ts): each call's time from its start to its promise settling.
 * A request waiting in the kernel's socket buffer while the previous turn runs is not in its time:
 * the loop's delay shows that wait; a client p99 above both is the client's own (its thread
 * waiting for a core).
 */
import type http from 'node:http';
import {
  constants,
  createHistogram,
  monitorEventLoopDelay,
  performance,
  PerformanceObserver,
  type PerformanceEntry,
  type RecordableHistogram,
} from 'node:perf_hooks';

interface Pauses {
  count: number;
  totalMs: number;
  maxMs: number;
}

/** The reply to `latency-stop`: milliseconds, over the window since `latency-start`. */
export interface ServerLatency {
  type: 'latency';
  windowMs: number;
  requests: number;
  /** The first 'request' event of the request's loop turn → response 'finish'. */
  request: { p50: number; p90: number; p99: number; p999: number; max: number };
  /** The request's own 'request' event → response 'finish'. */
  handling: { p50: number; p99: number; max: number };
  loopDelay: { p50: number; p99: number; max: number };
  gc: Pauses & { byKind: Record<string, Pauses> };
  /** Requests whose 'request' event came in the same loop turn (a count, not ms). */
  perTurn: { p50: number; p99: number; max: number };
  /** The server's own timers (`timer(name)`), by name: calls begun in the window, start → settled. */
  timings?: Record<string, Timing>;
}

export interface Timing {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

const ms = (ns: number) => Number((ns / 1e6).toFixed(2));
const round = (x: number) => Number(x.toFixed(2));

/** Whether a timed run's window is open (between `latency-start` and `latency-stop`). */
let recording = false;
const timers = new Map<string, RecordableHistogram>();

/**
 * A histogram of durations named `name`, reset and reported with the rest; returns `time`, which
 * records the time from its call to `done`'s settling, when a window is open at the call. Use it
 * only when BENCH_SERVER_LATENCY=1 (`latencyEnabled()`).
 */
export function timer(name: string): <T>(done: () => Promise<T>) => Promise<T> {
  const histogram = createHistogram();
  timers.set(name, histogram);
  return (done) => {
    if (!recording) return done();
    const start = performance.now();
    const record = () => histogram.record(Math.max(1, Math.round((performance.now() - start) * 1e6)));
    const promise = done();
    promise.then(record, record);
    return promise;
  };
}

/** Whether the bench asked for the servers' own view (--server-latency). */
export const latencyEnabled = () => process.env.BENCH_SERVER_LATENCY === '1' && !!process.send;

/** Attaches the recorder to `server` and answers the bench's messages, when BENCH_SERVER_LATENCY=1. */
export function recordServerLatency(server: http.Server): void {
  if (!latencyEnabled()) return;
  const requests = createHistogram();
  const handling = createHistogram();
  const perTurn = createHistogram();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  let gcs: PerformanceEntry[] = [];
  const gcObserver = new PerformanceObserver((list) => gcs.push(...list.getEntries()));
  let since = 0;
  let inTurn = 0;
  let turnStart = 0;
  const endTurn = () => {
    perTurn.record(inTurn);
    inTurn = 0;
  };
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!recording) return;
    const start = performance.now();
    if (inTurn++ === 0) {
      turnStart = start;
      setImmediate(endTurn);
    }
    const arrived = turnStart;
    res.once('finish', () => {
      const end = performance.now();
      requests.record(Math.max(1, Math.round((end - arrived) * 1e6)));
      handling.record(Math.max(1, Math.round((end - start) * 1e6)));
    });
  });
  process.on('message', (message: { type?: string }) => {
    if (message?.type === 'latency-start') {
      requests.reset();
      handling.reset();
      perTurn.reset();
      for (const histogram of timers.values()) histogram.reset();
      loop.reset();
      gcs = [];
      since = performance.now();
      loop.enable();
      gcObserver.observe({ entryTypes: ['gc'] });
      recording = true;
      process.send!({ type: 'latency-started' });
    } else if (message?.type === 'latency-stop') {
      recording = false;
      loop.disable();
      gcs.push(...gcObserver.takeRecords());
      gcObserver.disconnect();
      const pauses = (list: PerformanceEntry[]): Pauses => ({
        count: list.length,
        totalMs: round(list.reduce((sum, e) => sum + e.duration, 0)),
        maxMs: round(Math.max(0, ...list.map((e) => e.duration))),
      });
      const byKind: Record<string, PerformanceEntry[]> = {};
      for (const e of gcs) {
        const kind = GC_KINDS[(e as unknown as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other';
        (byKind[kind] ??= []).push(e);
      }
      const reply: ServerLatency = {
        type: 'latency',
        windowMs: round(performance.now() - since),
        requests: requests.count,
        request: {
          p50: ms(requests.percentile(50)),
          p90: ms(requests.percentile(90)),
          p99: ms(requests.percentile(99)),
          p999: ms(requests.percentile(99.9)),
          max: ms(requests.max),
        },
        handling: { p50: ms(handling.percentile(50)), p99: ms(handling.percentile(99)), max: ms(handling.max) },
        loopDelay: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) },
        gc: {
          ...pauses(gcs),
          byKind: Object.fromEntries(Object.entries(byKind).map(([kind, list]) => [kind, pauses(list)])),
        },
        perTurn: { p50: perTurn.percentile(50), p99: perTurn.percentile(99), max: perTurn.max },
      };
      if (timers.size)
        reply.timings = Object.fromEntries(
          [...timers].map(([name, h]) => [
            name,
            { count: h.count, p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) },
          ]),
        );
      process.send!(reply);
    }
  });
}
