import os from 'node:os';
import type { LoadSummary } from './load.js';

/** One row of the table: a scenario on both servers (either may be absent). */
export interface ScenarioResult {
  id: string;
  title: string;
  /** What the req/s column counts (requests, verification pairs, or whole logins). */
  unit: 'req/s' | 'pairs/s' | 'logins/s';
  gatehouse: LoadSummary | null;
  peer: LoadSummary | null;
  /** Why a side is missing or what to keep in mind when reading the row. */
  notes: string[];
  /** The lowest and highest ratio over alternating rounds, when there were several. */
  spread?: [number, number];
}

export function machine() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpuCount: cpus.length,
    totalMemoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

/** Gatehouse/peer throughput, or null when one side was not measured. */
export function ratio(row: ScenarioResult): number | null {
  if (!row.gatehouse || !row.peer || row.peer.rps === 0) return null;
  return Number((row.gatehouse.rps / row.peer.rps).toFixed(2));
}

/** Throughput in the row's unit: a pair is two requests. */
function rate(summary: LoadSummary, unit: ScenarioResult['unit']): number {
  return unit === 'pairs/s' ? Math.round(summary.rps / 2) : summary.rps;
}

/** The table as Markdown (also readable in a terminal). */
export function table(rows: ScenarioResult[]): string {
  const ms = (v: number) => `${v} ms`;
  const side = (s: LoadSummary | null, unit: ScenarioResult['unit']) =>
    s ? [`${rate(s, unit)}${unit === 'req/s' ? '' : ` ${unit}`}`, ms(s.p50), ms(s.p99)] : ['n/a', 'n/a', 'n/a'];
  const lines = [
    '| scenario | Gatehouse req/s | p50 | p99 | peer req/s | p50 | p99 | ratio |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    const r = ratio(row);
    lines.push(
      `| ${row.title} | ${[...side(row.gatehouse, row.unit), ...side(row.peer, row.unit), r === null ? 'n/a' : `${r}×${row.spread ? ` (${row.spread[0]}–${row.spread[1]})` : ''}`].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

/** Failed responses of a run, worth a note under the table. */
export function failures(s: LoadSummary | null): string | null {
  if (!s) return null;
  const bad = s.non2xx + s.errors + s.timeouts;
  return bad
    ? `${bad} of ${s.requests} responses failed (non-2xx ${s.non2xx}, errors ${s.errors}, timeouts ${s.timeouts})`
    : null;
}

/**
 * --server-latency: per row and server, the generator's p99 beside the server's own (arrival, the
 * first request event of its loop turn, → response finish; and the request's own handling), its
 * event loop's delay, its GC pauses and requests per loop turn.
 */
export function latencyTable(rows: ScenarioResult[]): string {
  const lines = [
    '| scenario | server | client p99 | server p50 | p99 | p99.9 | max | handling p99 | loop delay p99 | max | GC max | GC total (count) | requests/turn p50 | max |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    if (row.unit !== 'req/s') continue; // a login (j) or a pair (d) is several requests
    for (const kind of ['gatehouse', 'peer'] as const) {
      const s = row[kind]?.server;
      if (!s) continue;
      const r = s.request;
      lines.push(
        `| ${row.title} | ${row.id.startsWith('limit') ? 'limit' : kind} | ${row[kind]!.p99} ms | ${r.p50} | ${r.p99} | ${r.p999} | ${r.max} ms | ${s.handling.p99} ms | ` +
          `${s.loopDelay.p99} | ${s.loopDelay.max} ms | ${s.gc.maxMs} ms | ${s.gc.totalMs} ms (${s.gc.count}) | ` +
          `${s.perTurn.p50} | ${s.perTurn.max} |`,
      );
    }
  }
  return lines.join('\n');
}

const TIMERS = ['sql writes', 'sql reads', 'transactions', 'signatures'] as const;

/**
 * --server-latency, Gatehouse only (lib/server-timings.ts): where its handling waits, per row.
 * Each SQL statement (writes, reads), transaction and JWT signature from its call to its promise
 * settling: p50 / p99 / max in ms and the count. The peer and L have no such timers: n/a.
 */
export function waitsTable(rows: ScenarioResult[]): string {
  const lines = [`| scenario | server | ${TIMERS.join(' | ')} |`, `|---|---|${TIMERS.map(() => '---:').join('|')}|`];
  for (const row of rows) {
    if (row.unit !== 'req/s') continue;
    for (const kind of ['gatehouse', 'peer'] as const) {
      const s = row[kind]?.server;
      if (!s) continue;
      const cells = TIMERS.map((name) => {
        const t = s.timings?.[name];
        if (!t) return 'n/a';
        return t.count ? `${t.p50} / ${t.p99} / ${t.max} (${t.count})` : 'none';
      });
      lines.push(`| ${row.title} | ${row.id.startsWith('limit') ? 'limit' : kind} | ${cells.join(' | ')} |`);
    }
  }
  return lines.join('\n');
}
