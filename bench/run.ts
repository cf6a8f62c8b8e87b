/**
 * `npm run bench`: Gatehouse against node-oidc-provider under the same load, then Gatehouse
 * alone on PostgreSQL. Prints one table and writes bench/results/<timestamp>.json.
 *
 * Flags: --connections N (32), --duration S (8), --quick (2 s runs, fewer users and codes),
 * --only a,b,… (a subset of scenarios; default a–g, i (FACE) and j (whole logins)), --rounds N (2)
 * and --load autocannon|wrk|both for a–c and e, --cpu-prof (profile the Gatehouse SQLite process
 * into bench/results/profiles/; read it with `node bench/profile-top.ts <file>`).
 *
 * Scenario h (growth: introspection with 1,000 stored tokens, then with 1,000,000) is opt-in,
 * `--only h`, because seeding the rows takes a minute or more; --growth-rows N (1,000,000) and
 * --seed-budget S (300) bound it.
 *
 * --peer bench|default|none picks the peer's configuration (lib/peer-config.ts; `default` is its
 * README's quick start) or leaves it out (Gatehouse alone, for comparing Gatehouse builds). With
 * a, b or e, the physical limit (bench/limit-server.ts: node:http answering a fixed token) is
 * measured too, and each scenario is reported as a fraction of it. --server-latency asks each
 * server for its own view of every timed run (lib/server-latency.ts) and prints it beside the
 * generator's p99.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { killAllChildren, request as requestReply, startServer, type ServerChild } from './lib/children.js';
import { API_SCOPE, CODE_CLIENT, JWT_CLIENT, OPAQUE_CLIENT, TOTP_CLIENT } from './lib/clients.js';
import { runLogins } from './lib/logins.js';
import { runWrk, wrkInstalled } from './lib/wrk.js';
import {
  Browser,
  codeByLogin,
  createUser,
  enrolPassword,
  enrolTotp,
  inParallel,
  pkcePair,
  startLogin,
  type BenchUser,
} from './lib/gatehouse-flows.js';
import { runLoad, type LoadOptions, type LoadSummary } from './lib/load.js';
import { createBenchDatabase, POSTGRES_ADMIN_URL, type BenchDatabase } from './lib/postgres.js';
import { mintCodes } from './lib/mint-codes.js';
import { PEER_CONFIGURATIONS, type PeerMode } from './lib/peer-config.js';
import { failures, latencyTable, machine, ratio, table, waitsTable, type ScenarioResult } from './lib/report.js';
import type { ServerLatency } from './lib/server-latency.js';
import type { SeedReply, SeedRequest } from './lib/seed-tokens.js';
import {
  clientCredentials,
  codeExchange,
  codeExchangeBody,
  FailureTally,
  introspection,
  introspectionInTurn,
  opaqueToken,
  passwordPair,
  totpPicker,
  verificationPair,
  type Load,
  type ServerKind,
  type TotpUser,
} from './lib/scenarios.js';

/** h: the stored tokens of the baseline measurement. */
const GROWTH_SMALL = 1000;

const { values: flags } = parseArgs({
  options: {
    connections: { type: 'string', default: '32' },
    duration: { type: 'string', default: '8' },
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '2' },
    load: { type: 'string', default: 'both' },
    only: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    peer: { type: 'string', default: 'bench' },
    'growth-rows': { type: 'string', default: '1000000' },
    'seed-budget': { type: 'string', default: '300' },
    'server-latency': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  console.log(`usage: npm run bench -- [--connections N] [--duration S] [--quick] [--only a,b,…] [--cpu-prof]
                          [--growth-rows N] [--seed-budget S] [--rounds N] [--load autocannon|wrk|both] [--server-latency]
  --rounds N   a–c, e: N alternating rounds per side (Gatehouse, peer, Gatehouse, peer…; 1 with --quick),
               the ratio of every round and their spread printed
  --load       a–c, e with autocannon, wrk (1 thread), or both (the default when wrk is installed)
  --peer       bench (default): oidc-provider as configured for the bench (a raised store, resource
               indicators); default: as its README's quick start runs it (opaque tokens, no e);
               none: Gatehouse alone (to compare builds by their CPU per request)
  --server-latency  each server's own view of each timed run (request → response p99, event loop
               delay, GC pauses, requests per loop turn) beside the generator's p99, in a second table
  scenarios (default a,b,c,d,e,f,g,i,j):
    a  client credentials, JWT (ES256)       b  client credentials, opaque
    c  introspection of an opaque token      d  TOTP initiation + verification pairs
    e  authorization code + PKCE exchange    f  a–c on PostgreSQL (Gatehouse alone)
    g  introspection idle, then under a concurrent password load
    h  growth (opt-in: --only h): introspection with ${GROWTH_SMALL} stored tokens, then with
       --growth-rows (1000000) seeded into a separate Gatehouse; seeding stops after --seed-budget s (300)
    i  FACE: describe + match per photo, against the 200 ms goal (bench/face.ts; one round with --quick)
    j  whole logins: authorize → PASSWORD → TOTP → code → tokens, logins/s and p99 (Keycloak's sizing
       guide: 15 password logins/s per vCPU)`);
  process.exit(0);
}
const connections = Number(flags.connections);
const duration = flags.quick ? 2 : Number(flags.duration);
if (!Number.isInteger(connections) || connections < 1 || connections > 1024) throw new Error('--connections: 1..1024');
if (!(duration > 0 && duration <= 300)) throw new Error('--duration: seconds, at most 300');
const rounds = flags.quick ? 1 : Number(flags.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 10) throw new Error('--rounds: 1..10');
if (!['autocannon', 'wrk', 'both'].includes(String(flags.load))) throw new Error('--load: autocannon, wrk or both');
if (!['bench', 'default', 'none'].includes(String(flags.peer))) throw new Error('--peer: bench, default or none');
const peerMode = flags.peer === 'none' ? null : (flags.peer as PeerMode);
// The servers the bench starts read it (lib/server-latency.ts); without the flag they attach nothing.
if (flags['server-latency']) process.env.BENCH_SERVER_LATENCY = '1';
if (flags.load === 'wrk' && !wrkInstalled()) throw new Error('--load wrk: wrk is not installed (Debian package wrk)');
// Both generators by default when wrk is installed (a–c, e; the other scenarios are autocannon's).
const generators: ('autocannon' | 'wrk')[] =
  flags.load === 'autocannon'
    ? ['autocannon']
    : flags.load === 'wrk'
      ? ['wrk']
      : wrkInstalled()
        ? ['autocannon', 'wrk']
        : ['autocannon'];
const only = new Set((flags.only ?? 'a,b,c,d,e,f,g,i,j').split(',').map((s) => s.trim()));
const unknown = [...only].filter((s) => !'abcdefghij'.includes(s) || s.length !== 1);
if (unknown.length) throw new Error(`--only: unknown scenario ${unknown.join(', ')} (a–j; see --help)`);
const growthRows = Number(flags['growth-rows']);
const seedBudgetSeconds = Number(flags['seed-budget']);
if (!Number.isInteger(growthRows) || growthRows < 10_000 || growthRows > 20_000_000)
  throw new Error('--growth-rows: 10000..20000000');
if (!(seedBudgetSeconds > 0 && seedBudgetSeconds <= 3600)) throw new Error('--seed-budget: seconds, at most 3600');
const params = {
  connections,
  durationSeconds: duration,
  quick: flags.quick,
  scenarios: [...only].sort(),
  // Each user gives two pairs per 30 s step window (see totpPicker): enough for about 600 pairs/s.
  totpUsers: flags.quick ? 600 : 4000,
  passwordUsers: 8,
  passwordConnections: 8,
  // Browsers logging in at once in scenario j: enough to keep both cores busy with argon2.
  loginConnections: 8,
  /** e: codes minted per server before each run (more than either answers in `duration`), and for its warm-up. */
  codesPerRun: 8000 * duration,
  warmupCodes: 500,
  warmupSeconds: 1,
  rounds,
  generators,
  serverLatency: flags['server-latency'],
  peer: peerMode ? { mode: peerMode, configuration: PEER_CONFIGURATIONS[peerMode] } : null,
  /** h: stored tokens for the small measurement, the large one, and the time allowed for seeding. */
  growthSmallRows: GROWTH_SMALL,
  growthRows,
  seedBudgetSeconds,
};

const here = path.dirname(fileURLToPath(import.meta.url));
const resultsDir = path.join(here, 'results');
const rows: ScenarioResult[] = [];
const problems: string[] = [];
let isolation: Record<string, unknown> | null = null;
let growth: GrowthResult | null = null;

/** h, one probe: the same load with few and with many stored tokens. */
interface GrowthComparison {
  small: { rps: number; mean: number; p50: number; p99: number };
  large: { rps: number; mean: number; p50: number; p99: number };
  meanRatio: number;
  p50Ratio: number;
  p99Ratio: number;
  rpsRatio: number;
}

interface GrowthResult {
  smallRows: number;
  largeRows: number;
  seedSeconds: number;
  seedRowsPerSecond: number;
  seedTruncated: boolean;
  realToken: GrowthComparison | null;
  seededTokensInTurn: GrowthComparison | null;
  target: number;
  met: boolean | null;
}
let interrupted = false;
process.once('SIGINT', () => {
  interrupted = true;
  console.error('bench: interrupted, stopping the servers');
  killAllChildren();
});

const log = (message: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
const check = () => {
  if (interrupted) throw new Error('interrupted');
};

/** A timed run after a short untimed warm-up (JIT, connection pools, caches). */
async function measure(
  load: Omit<LoadOptions, 'durationSeconds' | 'connections'>,
  opts: { warmup?: boolean; connections?: number } = {},
): Promise<LoadSummary> {
  check();
  const conns = opts.connections ?? connections;
  if (opts.warmup !== false) await runLoad({ ...load, connections: conns, durationSeconds: params.warmupSeconds });
  check();
  return timed(load.url, () => runLoad({ ...load, connections: conns, durationSeconds: duration }));
}

/**
 * The timed runs on the monotonic clock, which V8's CPU profiles use too: `--cpu-prof` writes
 * them next to the profile so bench/profile-top.ts reads exactly the loaded seconds.
 */
const timedRuns: { url: string; label: string; startUs: number; endUs: number; requests: number }[] = [];
let currentLabel = '';
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * The server whose run is being timed (set by inRounds): its CPU time over the run, all threads
 * (signing threads, libuv's pool) included, per request. Unlike req/s, this barely moves when
 * the host is noisy, so it shows a change that the rounds' spread would hide. With
 * --server-latency, also the server's own latency, loop delay and GC pauses over the run.
 */
let currentServer: ServerChild | undefined;
const CLOCK_TICKS_PER_S = 100; // USER_HZ on Linux
function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    // /proc/<pid>/stat: fields 14 and 15 (utime, stime) after the parenthesised command name.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return null; // not Linux
  }
}

/**
 * The server's peak resident memory (VmHWM) since `resetPeakRss`, in MiB; null off Linux. Writing
 * 5 to clear_refs resets the high-water mark to the current RSS (Linux ≥ 4.0), so each timed run
 * reports its own peak, not the process's lifetime one.
 */
function resetPeakRss(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // not Linux, or not ours to reset: the peak is then the process's lifetime peak
  }
}
function peakRssMiB(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib ? Number(kib) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * The CPU time of each thread of a process (ms, by thread id), from /proc/<pid>/task; empty off
 * Linux. Node names all its threads `node`, so they are told apart by when they started: see
 * `threadsAtStart`.
 */
function threadCpuMs(pid: number | undefined): Map<number, number> {
  const out = new Map<number, number>();
  if (pid === undefined) return out;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        out.set(Number(tid), ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S);
      } catch {
        // the thread ended
      }
    }
  } catch {
    // not Linux
  }
  return out;
}

/**
 * The threads each server had when it reported ready: besides the main thread, V8's platform
 * threads (GC helpers, the optimizing compiler) and libuv's pool (and tsx's loader, idle). The
 * threads started later are worker threads: Gatehouse's signing threads and its checkpointer.
 */
const threadsAtStart = new Map<number, Set<number>>();
function rememberThreads(server: ServerChild): void {
  const pid = server.process.pid;
  if (pid !== undefined) threadsAtStart.set(pid, new Set(threadCpuMs(pid).keys()));
}

/** ms of CPU between two snapshots: the main thread, the threads there at start, those started later. */
function threadSplit(pid: number, before: Map<number, number>, after: Map<number, number>) {
  const early = threadsAtStart.get(pid) ?? new Set<number>();
  const split = { main: 0, helpers: 0, workers: 0 };
  for (const [tid, ms] of after) {
    const spent = ms - (before.get(tid) ?? 0);
    if (tid === pid) split.main += spent;
    else if (early.has(tid)) split.helpers += spent;
    else split.workers += spent;
  }
  return split;
}

async function timed(url: string, run: () => Promise<LoadSummary>): Promise<LoadSummary> {
  const startUs = monotonicUs();
  const server = currentServer;
  const pid = server?.process.pid;
  if (server && flags['server-latency'])
    await requestReply(server, { type: 'latency-start' }, 'latency-started', 10_000);
  const cpuBefore = processCpuMs(pid);
  const threadsBefore = threadCpuMs(pid);
  resetPeakRss(pid);
  const result = await run();
  timedRuns.push({ url, label: currentLabel, startUs, endUs: monotonicUs(), requests: result.requests });
  const cpuAfter = processCpuMs(pid);
  if (cpuBefore !== null && cpuAfter !== null && result.requests > 0)
    result.cpuUsPerRequest = ((cpuAfter - cpuBefore) * 1000) / result.requests;
  if (pid !== undefined && threadsBefore.size && result.requests > 0) {
    const split = threadSplit(pid, threadsBefore, threadCpuMs(pid));
    const per = (ms: number) => Number(((ms * 1000) / result.requests).toFixed(1));
    result.cpuSplitUs = { main: per(split.main), helpers: per(split.helpers), workers: per(split.workers) };
  }
  const peak = peakRssMiB(pid);
  if (peak !== null) result.peakRssMiB = peak;
  if (server && flags['server-latency']) {
    const s = (result.server = await requestReply<ServerLatency>(server, { type: 'latency-stop' }, 'latency', 10_000));
    log(
      `  server-side: p99 ${s.request.p99} ms (client ${result.p99}; handling ${s.handling.p99}), loop delay p99 ` +
        `${s.loopDelay.p99} / max ${s.loopDelay.max} ms, GC max ${s.gc.maxMs} / total ${s.gc.totalMs} ms, ` +
        `requests per turn p50 ${s.perTurn.p50} / max ${s.perTurn.max}`,
    );
    if (s.timings)
      log(
        `  server waits (p50 / p99 / max ms, count): ${Object.entries(s.timings)
          .map(([name, t]) => `${name} ${t.p50} / ${t.p99} / ${t.max} (${t.count})`)
          .join(', ')}`,
      );
  }
  return result;
}

function row(id: string, title: string, unit: ScenarioResult['unit'] = 'req/s'): ScenarioResult {
  const r: ScenarioResult = { id, title, unit, gatehouse: null, peer: null, notes: [] };
  rows.push(r);
  return r;
}

/** Runs `fn` for one side of a row; a failure is recorded, never fatal for the other scenarios. */
async function side(r: ScenarioResult, kind: ServerKind, fn: () => Promise<LoadSummary>): Promise<void> {
  try {
    log(`${r.title}: ${kind}`);
    currentLabel = `${r.title}: ${kind}`;
    r[kind] = await fn();
    const failed = failures(r[kind]);
    if (failed) r.notes.push(`${kind}: ${failed}`);
  } catch (err) {
    if (interrupted) throw err;
    const message = `${r.title} (${kind}): ${(err as Error).message}`;
    r.notes.push(`${kind}: not measured: ${(err as Error).message}`);
    problems.push(message);
    log(`FAILED ${message}`);
  }
}

/** The client-credentials and introspection rows (a–c) for one Gatehouse, with the peer when given. */
async function tokenScenarios(
  gatehouse: ServerChild,
  peer: ServerChild | null,
  which: Set<string>,
  suffix: string,
  prefix: string,
) {
  const servers: [ServerKind, ServerChild][] = [
    ['gatehouse', gatehouse],
    ...(peer ? [['peer', peer] as [ServerKind, ServerChild]] : []),
  ];
  const tokens = new Map<ServerKind, string>();
  const scenarios: [string, string, (server: ServerChild, kind: ServerKind) => Promise<Load>][] = [
    ['a', 'client credentials, JWT (ES256)', async (server, kind) => clientCredentials(server, kind, JWT_CLIENT)],
    ['b', 'client credentials, opaque', async (server, kind) => clientCredentials(server, kind, OPAQUE_CLIENT)],
    [
      'c',
      'introspection (opaque, active)',
      async (server, kind) => {
        if (!tokens.has(kind)) tokens.set(kind, await activeToken(server, kind));
        return introspection(server, kind, tokens.get(kind)!);
      },
    ],
  ];
  for (const generator of generators) {
    const tag = generator === 'wrk' ? ' [wrk]' : '';
    for (const [letter, title, loadOf] of scenarios) {
      if (!which.has(letter)) continue;
      const r = row(
        `${prefix}${letter}${generator === 'wrk' ? '-wrk' : ''}`,
        `${prefix}${letter}. ${title}${suffix}${tag}`,
      );
      await inRounds(r, servers, async (server, kind) => measureWith(generator, await loadOf(server, kind)));
    }
  }
}

/**
 * Measures each side `rounds` times, alternating (Gatehouse, peer, Gatehouse, peer…) so that a
 * noisy host's drift hits both; keeps each side's mean throughput (latencies of its median
 * round) and notes the ratio of every round, whose spread the table prints.
 */
async function inRounds(
  r: ScenarioResult,
  servers: [ServerKind, ServerChild][],
  run: (server: ServerChild, kind: ServerKind) => Promise<LoadSummary>,
): Promise<void> {
  const results: Record<ServerKind, LoadSummary[]> = { gatehouse: [], peer: [] };
  for (let round = 0; round < params.rounds; round++) {
    for (const [kind, server] of servers) {
      await side(r, kind, async () => {
        currentServer = server;
        const result = await run(server, kind).finally(() => (currentServer = undefined));
        results[kind].push(result);
        return result;
      });
    }
  }
  for (const kind of ['gatehouse', 'peer'] as const) {
    const list = results[kind];
    if (list.length === 0) continue;
    const median = [...list].sort((x, y) => x.rps - y.rps)[Math.floor(list.length / 2)]!;
    const cpus = list.map((x) => x.cpuUsPerRequest).filter((x) => x !== undefined);
    r[kind] = {
      ...median,
      rps: Math.round(list.reduce((sum, x) => sum + x.rps, 0) / list.length),
      // The mean over the rounds, as the note prints it (the latencies stay the median round's).
      ...(cpus.length ? { cpuUsPerRequest: cpus.reduce((a, b) => a + b, 0) / cpus.length } : {}),
    };
  }
  const cpu = (list: LoadSummary[]) => list.map((x) => x.cpuUsPerRequest).filter((x) => x !== undefined);
  const [gCpu, pCpu] = [cpu(results.gatehouse), cpu(results.peer)];
  if (gCpu.length && pCpu.length) {
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    r.notes.push(
      `server CPU per request (all its threads): gatehouse ${mean(gCpu).toFixed(0)} µs, peer ${mean(pCpu).toFixed(0)} µs: ${(mean(pCpu) / mean(gCpu)).toFixed(2)}× less`,
    );
  } else if (gCpu.length) {
    r.notes.push(
      `server CPU per request (all its threads): ${gCpu.map((x) => x.toFixed(1)).join(', ')} µs by round (mean ${(gCpu.reduce((a, b) => a + b, 0) / gCpu.length).toFixed(1)})`,
    );
  }
  for (const kind of ['gatehouse', 'peer'] as const) {
    const splits = results[kind].map((x) => x.cpuSplitUs).filter((x) => x !== undefined);
    if (!splits.length) continue;
    const avg = (pick: (x: (typeof splits)[0]) => number) =>
      (splits.reduce((sum, x) => sum + pick(x), 0) / splits.length).toFixed(1);
    r.notes.push(
      `${kind}: CPU per request by thread: main ${avg((x) => x.main)} µs, V8 platform and libuv threads ` +
        `(GC helpers, compiler, pool) ${avg((x) => x.helpers)} µs, worker threads (signing, checkpoints) ${avg((x) => x.workers)} µs`,
    );
  }
  const peak = (list: LoadSummary[]) => Math.max(0, ...list.map((x) => x.peakRssMiB ?? 0));
  if (peak(results.gatehouse) > 0) {
    const peer = peak(results.peer) > 0 ? `, peer ${peak(results.peer).toFixed(0)} MiB` : '';
    r.notes.push(`peak RSS during the runs: gatehouse ${peak(results.gatehouse).toFixed(0)} MiB${peer}`);
  }
  const pairs = results.gatehouse.map((g, i) => [g, results.peer[i]] as const).filter(([, p]) => p && p.rps > 0);
  if (pairs.length > 1) {
    const ratios = pairs.map(([g, p]) => g.rps / p!.rps);
    r.spread = [Math.min(...ratios), Math.max(...ratios)].map((x) => Number(x.toFixed(2))) as [number, number];
    r.notes.push(`ratio by round: ${ratios.map((x) => x.toFixed(2)).join(', ')}`);
  }
}

/** One measurement with the given load generator (wrk after autocannon's warm-up run). */
async function measureWith(generator: 'autocannon' | 'wrk', load: Load): Promise<LoadSummary> {
  if (generator === 'autocannon') return measure(load);
  check();
  await runLoad({ ...load, connections, durationSeconds: params.warmupSeconds });
  check();
  return timed(load.url, () => runWrk(load, { connections, durationSeconds: duration }));
}

/** A token that introspects active (checked once, so the run measures the real answer). */
async function activeToken(server: ServerChild, kind: ServerKind): Promise<string> {
  const token = await opaqueToken(server, kind);
  const load = introspection(server, kind, token);
  const res = await fetch(new URL(load.path!, server.issuer), {
    method: 'POST',
    headers: load.headers,
    body: load.body as string,
  });
  const body = (await res.json()) as { active?: boolean };
  if (res.status !== 200 || body.active !== true)
    throw new Error(`${server.name}: the token does not introspect active`);
  return token;
}

/** j: whole logins (two stages, code, tokens) by `connections` browsers in a closed loop. */
async function loginsScenario(gatehouse: ServerChild) {
  const r = row('j', 'j. whole logins (PASSWORD + TOTP → tokens)', 'logins/s');
  r.notes.push("peer: n/a (Keycloak's published sizing: 15 password logins/s per vCPU, so 30 on 2 cores)");
  await side(r, 'gatehouse', async () => {
    const base = gatehouse.issuer;
    // Each user gives about two logins per 30 s step window (totpPicker).
    const count = Math.min(1000, Math.max(40, Math.ceil(duration * 40)));
    log(`enrolling ${count} users with a password and TOTP (admin API)`);
    const users: TotpUser[] = [];
    await inParallel(count, 8, async (i) => {
      check();
      const user = await createUser(base, `login-${i}`);
      await enrolPassword(base, user);
      const { secret, step } = await enrolTotp(base, user);
      users.push({ username: user.username, secret, nextStep: step + 1 });
    });
    const picker = totpPicker(users);
    currentServer = gatehouse;
    const summary = await timed(base, async (): Promise<LoadSummary> => {
      const result = await runLogins({
        base,
        nextCode: picker.next,
        connections: params.loginConnections,
        durationSeconds: duration,
      });
      const failed = Object.entries(result.failures).map(([why, n]) => `${why} ×${n}`);
      if (failed.length) r.notes.push(`gatehouse: failed logins: ${failed.join(', ')}`);
      r.notes.push(`gatehouse: ${result.logins} logins by ${params.loginConnections} browsers`);
      const failures = Object.values(result.failures).reduce((a, b) => a + b, 0);
      return {
        rps: Math.round(result.perSecond * 10) / 10,
        p50: result.p50,
        mean: result.p50,
        p90: result.p99,
        p99: result.p99,
        max: result.p99,
        requests: result.logins + failures,
        ok: result.logins,
        non2xx: 0,
        errors: failures,
        timeouts: 0,
        durationSeconds: result.durationSeconds,
        connections: params.loginConnections,
      };
    }).finally(() => (currentServer = undefined));
    // A "request" of j is one login attempt.
    if (summary.cpuUsPerRequest !== undefined)
      r.notes.push(
        `gatehouse: server CPU ${(summary.cpuUsPerRequest / 1000).toFixed(1)} ms per login attempt (all threads)`,
      );
    if (summary.peakRssMiB !== undefined) r.notes.push(`gatehouse: peak RSS ${summary.peakRssMiB.toFixed(0)} MiB`);
    return summary;
  });
}

/** Statements the Gatehouse child ran so far. */
async function sqlCount(server: ServerChild): Promise<number> {
  return (await requestReply<{ statements: number }>(server, { type: 'sql-count' }, 'sql-count', 10_000)).statements;
}

/** d: TOTP pairs on Gatehouse; users enrolled through the admin API first. */
async function totpScenario(gatehouse: ServerChild) {
  const r = row('d', 'd. TOTP initiation + verification', 'pairs/s');
  r.notes.push('peer: n/a (node-oidc-provider has no verification API)');
  await side(r, 'gatehouse', async () => {
    const base = gatehouse.issuer;
    log(`enrolling ${params.totpUsers} users with TOTP (admin API)`);
    const users: TotpUser[] = [];
    const started = Date.now();
    await inParallel(params.totpUsers, 8, async (i) => {
      check();
      const user = await createUser(base, `totp-${i}`);
      const { secret, step } = await enrolTotp(base, user);
      // The enrolment spent its step: the next usable one is the step after.
      users.push({ username: user.username, secret, nextStep: step + 1 });
    });
    log(`enrolled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const flows = await Promise.all(
      Array.from({ length: connections }, () => startLogin(new Browser(base), TOTP_CLIENT.id, pkcePair().challenge)),
    );
    const picker = totpPicker(users);
    const failed = new FailureTally();
    const load = verificationPair(
      gatehouse,
      'TOTP',
      flows,
      () => {
        const next = picker.next();
        return { username: next.username, fields: { pass_code: next.code } };
      },
      failed,
    );
    // No warm-up: it would spend the users' time steps.
    const statementsBefore = await sqlCount(gatehouse);
    const result = await measure(load, { warmup: false });
    const pairs = result.requests / 2;
    if (pairs > 0) {
      const perPair = ((await sqlCount(gatehouse)) - statementsBefore) / pairs;
      r.notes.push(`gatehouse: ${perPair.toFixed(1)} SQL statements per pair (with the four FDS rules)`);
    }
    if (picker.exhausted)
      r.notes.push(
        `gatehouse: ${picker.exhausted} pairs found no unused TOTP step left (the bench ran out of codes; they fail by construction)`,
      );
    const why = failed.summary();
    if (why) r.notes.push(`gatehouse: failed responses by step and status: ${why}`);
    return result;
  });
}

/**
 * e: code exchange. Before each run, each server mints that run's codes through its own models in
 * its own process (untimed), and a warm-up spends a few hundred more; a run stops when the codes
 * are used up or the time is over. Gatehouse's user signs in through the front channel once and
 * redeems that code first, so the minted codes are the ones a real login leaves.
 */
async function codeScenario(gatehouse: ServerChild, peer: ServerChild | null) {
  const { verifier, challenge } = pkcePair();
  const subjects = new Map<ServerKind, string>([['peer', 'bench-user']]);
  const mintSeconds: number[] = [];
  const subjectOf = async (server: ServerChild, kind: ServerKind) => {
    if (!subjects.has(kind)) {
      const user = await createUser(server.issuer, 'code-bench');
      await enrolPassword(server.issuer, user);
      const code = await codeByLogin(new Browser(server.issuer), server.issuer, CODE_CLIENT.id, challenge, user);
      const load = codeExchange(server, kind, []);
      const res = await fetch(new URL(load.path!, server.issuer), {
        method: 'POST',
        headers: load.headers,
        body: codeExchangeBody(code, verifier),
      });
      if (res.status !== 200)
        throw new Error(`${server.name}: the front channel's code was not redeemed (${res.status})`);
      subjects.set(kind, user.id);
    }
    return subjects.get(kind)!;
  };
  const bodiesFor = async (server: ServerChild, kind: ServerKind, count: number) => {
    const subject = await subjectOf(server, kind);
    const { codes, elapsedMs } = await mintCodes(server, { count, codeChallenge: challenge, subject });
    mintSeconds.push(elapsedMs / 1000);
    return codes.map((code) => codeExchangeBody(code, verifier));
  };
  for (const generator of generators) {
    const tag = generator === 'wrk' ? ' [wrk]' : '';
    const r = row(`e${generator === 'wrk' ? '-wrk' : ''}`, `e. authorization code + PKCE exchange${tag}`);
    if (peer && peerMode === 'default')
      r.notes.push("peer: not run: the quick start's store (1,000 entries) evicts the codes minted before a run");
    const servers: [ServerKind, ServerChild][] = [['gatehouse', gatehouse]];
    if (peer && peerMode !== 'default') servers.push(['peer', peer]);
    await inRounds(r, servers, async (server, kind) => {
      const warm = await bodiesFor(server, kind, params.warmupCodes);
      check();
      await runLoad({ ...codeExchange(server, kind, warm), amount: warm.length, connections, durationSeconds: 5 });
      const bodies = await bodiesFor(server, kind, params.codesPerRun);
      check();
      return timed(server.issuer, () =>
        generator === 'wrk'
          ? runWrk(codeExchange(server, kind, bodies), { connections, durationSeconds: duration, bodies })
          : runLoad({
              ...codeExchange(server, kind, bodies),
              // A few spare codes: autocannon may prepare a request per connection it never sends.
              amount: Math.max(1, bodies.length - connections),
              connections,
              durationSeconds: duration,
            }),
      );
    });
    r.notes.push(
      `${params.codesPerRun} codes minted per run by each server through its own models, before the run; ` +
        `minting took ${Math.min(...mintSeconds).toFixed(1)}–${Math.max(...mintSeconds).toFixed(1)} s (untimed)`,
    );
  }
}

/**
 * The physical limit (bench/limit-server.ts): a node:http server answering b's request with a
 * fixed token, nothing else, under the same load and generators. a, b and e are then reported as
 * a fraction of it: their throughput, and its CPU per request over theirs.
 */
async function limitScenario(): Promise<void> {
  check();
  const limit = await startServer('limit', 'limit-server.ts');
  rememberThreads(limit);
  try {
    for (const generator of generators) {
      const tag = generator === 'wrk' ? ' [wrk]' : '';
      const r = row(
        `limit${generator === 'wrk' ? '-wrk' : ''}`,
        `L. physical limit: node:http answering a fixed token${tag}`,
      );
      r.notes.push("not Gatehouse: b's request, read and answered with a fixed token (Gatehouse's headers, b's size)");
      await inRounds(r, [['gatehouse', limit]], async (server, kind) =>
        measureWith(generator, clientCredentials(server, kind, OPAQUE_CLIENT)),
      );
      const cpu = r.gatehouse?.cpuUsPerRequest;
      if (!r.gatehouse) continue;
      for (const letter of ['a', 'b', 'e']) {
        const scenario = rows.find((x) => x.id === `${letter}${generator === 'wrk' ? '-wrk' : ''}`);
        if (!scenario) continue;
        const parts = (['gatehouse', 'peer'] as const).flatMap((kind) => {
          const s = scenario[kind];
          if (!s) return [];
          const rate = `${((s.rps / r.gatehouse!.rps) * 100).toFixed(0)}% of its req/s`;
          const perRequest =
            cpu !== undefined && s.cpuUsPerRequest !== undefined
              ? `, ${((cpu / s.cpuUsPerRequest) * 100).toFixed(0)}% of its CPU per request (${cpu.toFixed(0)} / ${s.cpuUsPerRequest.toFixed(0)} µs)`
              : '';
          return [`${kind} ${rate}${perRequest}`];
        });
        if (parts.length) scenario.notes.push(`against the physical limit (L): ${parts.join('; ')}`);
      }
    }
  } finally {
    await limit.stop();
  }
}

/** g: introspection p99 idle, then under a concurrent PASSWORD verification load. */
async function isolationScenario(gatehouse: ServerChild) {
  const idleRow = row('g-idle', 'g. introspection, idle (for g)');
  const loadedRow = row('g-loaded', `g. introspection under ${params.passwordConnections}-connection password load`);
  const passwordRow = row('g-password', 'g. the password load itself (PASSWORD pairs)', 'pairs/s');
  try {
    const base = gatehouse.issuer;
    const users: BenchUser[] = [];
    await inParallel(params.passwordUsers, 4, async (i) => {
      const user = await createUser(base, `pw-${i}`);
      await enrolPassword(base, user);
      users.push(user);
    });
    const flows = await Promise.all(
      Array.from({ length: params.passwordConnections }, () =>
        startLogin(new Browser(base), CODE_CLIENT.id, pkcePair().challenge),
      ),
    );
    const token = await activeToken(gatehouse, 'gatehouse');
    const probe = introspection(gatehouse, 'gatehouse', token);
    await side(idleRow, 'gatehouse', () => measure(probe));
    await side(loadedRow, 'gatehouse', async () => {
      const background = runLoad({
        ...passwordPair(
          gatehouse,
          flows,
          users.map((u) => u.username),
        ),
        connections: params.passwordConnections,
        durationSeconds: duration + 2,
      });
      // Let the password load reach its steady state before the probe starts.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const loaded = await timed(probe.url, () => runLoad({ ...probe, connections, durationSeconds: duration }));
      passwordRow.gatehouse = await background;
      const failed = failures(passwordRow.gatehouse);
      if (failed) passwordRow.notes.push(`gatehouse: ${failed}`);
      return loaded;
    });
    for (const r of [idleRow, loadedRow, passwordRow]) r.notes.push('peer: n/a (Gatehouse only)');
    if (idleRow.gatehouse && loadedRow.gatehouse) {
      const p99Ratio = Number((loadedRow.gatehouse.p99 / Math.max(idleRow.gatehouse.p99, 1)).toFixed(2));
      isolation = {
        idleP99: idleRow.gatehouse.p99,
        loadedP99: loadedRow.gatehouse.p99,
        ratio: p99Ratio,
        target: 2,
        met: p99Ratio <= 2,
        passwordPairsPerSecond: passwordRow.gatehouse ? Math.round(passwordRow.gatehouse.rps / 2) : null,
      };
    }
  } catch (err) {
    if (interrupted) throw err;
    problems.push(`g: ${(err as Error).message}`);
    log(`FAILED g: ${(err as Error).message}`);
  }
}

/** Asks a Gatehouse child to seed oauth_tokens up to `target` rows (bench-only IPC, see lib/seed-tokens.ts). */
async function seed(server: ServerChild, target: number, budgetSeconds: number): Promise<SeedReply> {
  const request: SeedRequest = {
    type: 'seed',
    target,
    clientId: OPAQUE_CLIENT.id,
    scope: API_SCOPE,
    budgetMs: budgetSeconds * 1000,
    sample: 1000,
  };
  const reply = await requestReply<SeedReply>(server, request, 'seeded', (budgetSeconds + 120) * 1000);
  if (reply.error) throw new Error(`seeding failed: ${reply.error}`);
  const seconds = reply.elapsedMs / 1000;
  log(
    `seeded ${reply.inserted.toLocaleString('en')} rows in ${seconds.toFixed(1)} s ` +
      `(${Math.round(reply.inserted / Math.max(seconds, 0.001)).toLocaleString('en')} rows/s); ` +
      `oauth_tokens holds ${reply.rows.toLocaleString('en')}${reply.truncated ? ' (budget spent before the target)' : ''}`,
  );
  return reply;
}

/** The ratio large/small of one measure of two runs, 2 decimals. */
const times = (large: number, small: number) => Number((large / Math.max(small, 0.01)).toFixed(2));

/**
 * h: introspection latency with 1,000 stored tokens, then with --growth-rows (1,000,000), in a
 * Gatehouse of its own (fresh SQLite file) so the seeding slows no other scenario. Two probes
 * each time: one real token (issued by the token endpoint, as in c) and 1,000 seeded tokens in
 * turn (lookups spread over the table and its index, not one hot path through the B-tree).
 */
async function growthScenario(tmp: string): Promise<void> {
  check();
  const server = await startServer('gatehouse-growth', 'gatehouse-server.ts', {
    env: { BENCH_DATABASE_URL: `sqlite:${path.join(tmp, 'growth.db')}` },
  });
  try {
    log(`Gatehouse (growth, SQLite) at ${server.issuer}`);
    const token = await activeToken(server, 'gatehouse');
    const fmt = (n: number) => n.toLocaleString('en');
    const small = await seed(server, GROWTH_SMALL, 60);
    const probes = (rows: number, sample: string[]) => ({
      real: row(`h-real-${rows}`, `h. introspection, one real token, ${fmt(rows)} tokens stored`),
      spread: row(`h-spread-${rows}`, `h. introspection, ${sample.length} seeded tokens in turn, ${fmt(rows)} stored`),
    });
    const run = async (p: ReturnType<typeof probes>, sample: string[]) => {
      await side(p.real, 'gatehouse', () => measure(introspection(server, 'gatehouse', token)));
      await side(p.spread, 'gatehouse', () => measure(introspectionInTurn(server, sample)));
      for (const r of [p.real, p.spread]) r.notes.push('peer: n/a (Gatehouse alone, its own database)');
    };
    // A fresh process: without a longer warm-up (JIT, caches) the baseline would be the slow
    // run and growth would look free (a first try measured 1,000 rows slower than 100,000).
    log('warming the growth server up (5 s, untimed)');
    await runLoad({ ...introspection(server, 'gatehouse', token), connections, durationSeconds: 3 });
    await runLoad({ ...introspectionInTurn(server, small.sample), connections, durationSeconds: 2 });
    const before = probes(small.rows, small.sample);
    await run(before, small.sample);

    check();
    log(`seeding oauth_tokens up to ${fmt(growthRows)} rows (≤${seedBudgetSeconds} s)`);
    const large = await seed(server, growthRows, seedBudgetSeconds);
    const after = probes(large.rows, large.sample);
    await run(after, large.sample);

    const compare = (a: ScenarioResult, b: ScenarioResult): GrowthComparison | null =>
      a.gatehouse && b.gatehouse
        ? {
            small: { rps: a.gatehouse.rps, mean: a.gatehouse.mean, p50: a.gatehouse.p50, p99: a.gatehouse.p99 },
            large: { rps: b.gatehouse.rps, mean: b.gatehouse.mean, p50: b.gatehouse.p50, p99: b.gatehouse.p99 },
            meanRatio: times(b.gatehouse.mean, a.gatehouse.mean),
            p50Ratio: times(b.gatehouse.p50, a.gatehouse.p50),
            p99Ratio: times(b.gatehouse.p99, a.gatehouse.p99),
            rpsRatio: times(b.gatehouse.rps, a.gatehouse.rps),
          }
        : null;
    const real = compare(before.real, after.real);
    const spread = compare(before.spread, after.spread);
    growth = {
      smallRows: small.rows,
      largeRows: large.rows,
      seedSeconds: Number(((small.elapsedMs + large.elapsedMs) / 1000).toFixed(1)),
      seedRowsPerSecond: Math.round(large.inserted / Math.max(large.elapsedMs / 1000, 0.001)),
      seedTruncated: large.truncated,
      realToken: real,
      seededTokensInTurn: spread,
      target: 1.5,
      // The issue's measure is latency: p50 and p99 of the real token each within 1.5×.
      met: real ? real.p50Ratio <= 1.5 && real.p99Ratio <= 1.5 : null,
    };
  } catch (err) {
    if (interrupted) throw err;
    problems.push(`h: ${(err as Error).message}`);
    log(`FAILED h: ${(err as Error).message}`);
  } finally {
    await server.stop();
  }
}

/** The growth result under the table. */
function printGrowth(g: GrowthResult): void {
  const line = (name: string, c: GrowthComparison | null) =>
    c
      ? `  ${name}: p50 ${c.small.p50} → ${c.large.p50} ms (${c.p50Ratio}×), p99 ${c.small.p99} → ${c.large.p99} ms ` +
        `(${c.p99Ratio}×), mean ${c.small.mean} → ${c.large.mean} ms (${c.meanRatio}×), ` +
        `${c.small.rps} → ${c.large.rps} req/s (${c.rpsRatio}×)`
      : `  ${name}: not measured`;
  console.log(
    `\nGrowth (h): ${g.smallRows.toLocaleString('en')} → ${g.largeRows.toLocaleString('en')} stored tokens ` +
      `(seeded in ${g.seedSeconds} s, ${g.seedRowsPerSecond.toLocaleString('en')} rows/s${g.seedTruncated ? ', budget spent before the target' : ''})\n` +
      `${line('one real token', g.realToken)}\n${line('1,000 seeded tokens in turn', g.seededTokensInTurn)}\n` +
      `  target: latency within ${g.target}× (real token, p50 and p99): ${g.met === null ? 'not measured' : g.met ? 'met' : 'missed'}`,
  );
}

/**
 * Names the profile of the Gatehouse main thread and writes the timed runs against it next to it
 * (`<profile>.windows.json`). Under tsx, Node also profiles the module loader's thread (thread
 * id ≠ 0), idle after start-up: reading that file shows a mostly idle process that was busy.
 */
function reportProfile(dir: string, server: ServerChild): void {
  const pid = String(server.process.pid);
  const files = readdirSync(dir).filter(
    (f) => f.startsWith('CPU.') && f.endsWith('.cpuprofile') && f.split('.')[3] === pid,
  );
  const main = files.find((f) => f.split('.')[4] === '0');
  if (!main) return log(`no CPU profile of process ${pid} found in ${dir}`);
  const windows = timedRuns.filter((w) => w.url === server.issuer);
  writeFileSync(path.join(dir, `${main}.windows.json`), `${JSON.stringify(windows, null, 2)}\n`);
  log(`CPU profile of the Gatehouse main thread: ${path.join(dir, main)} (${windows.length} timed runs beside it)`);
  const others = files.filter((f) => f !== main);
  if (others.length) log(`other threads' profiles (tsx's module loader, not the server): ${others.join(', ')}`);
}

/** Makes the first signing key and checks both servers answer, before anything is timed. */
async function warmUp(gatehouse: ServerChild): Promise<void> {
  // The first JWT on a new database makes the first signing key (it once failed with 500): make it
  // untimed, and check that JWTs are issued before anything is measured.
  await fetch(new URL('/.well-known/jwks.json', gatehouse.issuer));
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const load = clientCredentials(gatehouse, 'gatehouse', JWT_CLIENT);
    const res = await fetch(new URL(load.path!, gatehouse.issuer), {
      method: 'POST',
      headers: load.headers,
      body: load.body as string,
    });
    if (res.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('Gatehouse does not issue JWT access tokens');
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const tmp = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-'));
  let pgDatabase: BenchDatabase | null = null;
  const profileDir = path.join(resultsDir, 'profiles');
  try {
    log(`parameters: ${connections} connections, ${duration} s per run${flags.quick ? ' (quick)' : ''}`);
    // Scenarios on the shared SQLite Gatehouse and the peer; f and h start servers of their own.
    if ([...only].some((s) => 'abcdegj'.includes(s))) {
      const sqlite = await startServer('gatehouse', 'gatehouse-server.ts', {
        env: { BENCH_DATABASE_URL: `sqlite:${path.join(tmp, 'gatehouse.db')}` },
        execArgv: flags['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
      });
      rememberThreads(sqlite);
      const peer = peerMode
        ? await startServer('peer', 'peer-server.ts', { env: { BENCH_PEER_CONFIG: peerMode } })
        : null;
      if (peer) rememberThreads(peer);
      log(
        `Gatehouse (SQLite) at ${sqlite.issuer}, ${peer ? `node-oidc-provider (${peerMode}) at ${peer.issuer}` : 'no peer'}`,
      );
      await warmUp(sqlite);

      await tokenScenarios(sqlite, peer, only, '', '');
      if (only.has('d')) await totpScenario(sqlite);
      if (only.has('e')) await codeScenario(sqlite, peer);
      if (['a', 'b', 'e'].some((s) => only.has(s))) await limitScenario();
      if (only.has('g')) await isolationScenario(sqlite);
      if (only.has('j')) await loginsScenario(sqlite);
      await sqlite.stop();
      await peer?.stop();
      if (flags['cpu-prof']) reportProfile(profileDir, sqlite);
    }

    if (only.has('f')) {
      check();
      try {
        pgDatabase = await createBenchDatabase();
      } catch (err) {
        problems.push(`f: PostgreSQL at ${POSTGRES_ADMIN_URL} is not available: ${(err as Error).message}`);
        log(`SKIPPED f: ${(err as Error).message}`);
      }
      if (pgDatabase) {
        const postgres = await startServer('gatehouse-postgres', 'gatehouse-server.ts', {
          env: { BENCH_DATABASE_URL: pgDatabase.url },
        });
        log(`Gatehouse (PostgreSQL) at ${postgres.issuer}`);
        await warmUp(postgres);
        await tokenScenarios(postgres, null, new Set(['a', 'b', 'c']), ', PostgreSQL', 'f');
        for (const r of rows.filter((x) => x.id.startsWith('f')))
          r.notes.push('peer: n/a (Gatehouse alone on PostgreSQL)');
        await postgres.stop();
      }
    }

    if (only.has('h')) await growthScenario(tmp);

    const finishedAt = new Date();
    const output = {
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      machine: machine(),
      parameters: params,
      scenarios: rows.map((r) => ({ ...r, ratio: ratio(r) })),
      isolation,
      growth,
      problems,
    };
    mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);

    const m = output.machine;
    console.log(`\n${m.cpuCount} × ${m.cpuModel}, ${m.totalMemoryGiB} GiB, Node ${m.node}, ${m.platform}`);
    console.log(`${connections} connections, ${duration} s per run; latency over every response of the run\n`);
    console.log(table(rows));
    const notes = rows.flatMap((r) => r.notes.map((n) => `- ${r.title}: ${n}`));
    if (params.peer) notes.unshift(`- the peer: ${params.peer.configuration}`);
    if (notes.length) console.log(`\n${notes.join('\n')}`);
    if (flags['server-latency'])
      console.log(
        `\nInside the servers (--server-latency; the median round):\n${latencyTable(rows)}\n\n` +
          `Where Gatehouse's handling waits (call → settled, p50 / p99 / max ms (count)):\n${waitsTable(rows)}`,
      );
    if (isolation) {
      const i = isolation as { idleP99: number; loadedP99: number; ratio: number; met: boolean };
      console.log(
        `\nIsolation (g): introspection p99 ${i.idleP99} ms idle → ${i.loadedP99} ms under password load = ${i.ratio}× (target ≤ 2×: ${i.met ? 'met' : 'missed'})`,
      );
    }
    if (growth) printGrowth(growth);
    if (problems.length) console.log(`\nProblems:\n${problems.map((p) => `- ${p}`).join('\n')}`);
    console.log(`\nResults: ${path.relative(process.cwd(), file)}`);
    // FACE runs last, alone on the machine: its own program, as the face engine is a worker of its own.
    if (only.has('i')) {
      console.log('\nFACE (i):');
      execFileSync(
        process.execPath,
        ['--import', 'tsx', path.join(here, 'face.ts'), '--rounds', flags.quick ? '1' : '3'],
        {
          stdio: 'inherit',
        },
      );
    }
  } finally {
    killAllChildren();
    if (pgDatabase)
      await pgDatabase.drop().catch((err: unknown) => console.error('bench: could not drop the database', err));
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(interrupted ? 130 : 0),
  (err: unknown) => {
    console.error('bench failed:', err);
    killAllChildren();
    process.exit(1);
  },
);
