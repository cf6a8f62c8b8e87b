/**
 * The top self-time functions of a V8 CPU profile (from `npm run bench -- --cpu-prof`):
 * `node --import tsx bench/profile-top.ts <file.cpuprofile> [count]`. Only the bench's timed runs
 * count (from `<file>.windows.json`, written by the bench), else the longest run of busy seconds.
 * Also sums self and inclusive time per package (node_modules/<name>) and for Gatehouse's own
 * code, to see where a request's time goes. With the bench's windows, it also splits each timed
 * scenario's main-thread time into the stages of a token request (body, client authentication,
 * mint, signature hand-off, SQL, reply, node:http, GC…), in µs per request: see `stageOf`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, countArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (!file) {
  console.error('usage: node --import tsx bench/profile-top.ts <file.cpuprofile> [count]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const count = Number(countArg ?? 30);

// The profile spans start-up and set-up too. The bench writes its timed runs against this
// server beside the profile (<file>.windows.json, monotonic µs like the profile's clock): when
// present, only samples inside them count. Otherwise the longest run of busy seconds (> 30%)
// stands in for the load, which may include start-up and set-up next to it.
const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
const times: number[] = [];
let clock = 0;
for (const delta of profile.timeDeltas) times.push((clock += delta));

interface Window {
  label: string;
  startUs: number;
  endUs: number;
  /** Requests answered in the run (bench runs since issue 30). */
  requests?: number;
}
const windowsFile = `${file}.windows.json`;
const windows: Window[] = existsSync(windowsFile) ? (JSON.parse(readFileSync(windowsFile, 'utf8')) as Window[]) : [];
const inWindow = (i: number) => {
  const at = profile.startTime + times[i]!;
  return windows.some((w) => at >= w.startUs && at < w.endUs);
};
let loadedSample: (i: number) => boolean;
let how: string;
if (windows.length && profile.samples.some((_, i) => inWindow(i))) {
  loadedSample = inWindow;
  const seconds = windows.reduce((sum, w) => sum + (w.endUs - w.startUs), 0) / 1e6;
  how = `the bench's ${windows.length} timed run(s), ${seconds.toFixed(1)} s: ${windows.map((w) => w.label).join('; ')}`;
} else {
  const busyPerSecond = new Map<number, { busy: number; all: number }>();
  profile.samples.forEach((id, i) => {
    const second = Math.floor(times[i]! / 1e6);
    const entry = busyPerSecond.get(second) ?? { busy: 0, all: 0 };
    entry.all += profile.timeDeltas[i] ?? 0;
    if (!idleIds.has(id)) entry.busy += profile.timeDeltas[i] ?? 0;
    busyPerSecond.set(second, entry);
  });
  // The longest run of consecutive busy seconds: the load (start-up is a shorter run before it).
  const busy = [...busyPerSecond]
    .filter(([, e]) => e.busy / e.all > 0.3)
    .map(([second]) => second)
    .sort((a, b) => a - b);
  let best: number[] = [];
  let run: number[] = [];
  for (const second of busy) {
    run = run.length && run[run.length - 1] === second - 1 ? [...run, second] : [second];
    if (run.length > best.length) best = run;
  }
  const loaded = new Set(best);
  loadedSample = (i) => loaded.has(Math.floor(times[i]! / 1e6));
  how = windows.length
    ? `${best.length} seconds busier than 30% (the timed runs in ${windowsFile} match no sample: another clock?)`
    : `${best.length} seconds busier than 30% (no ${path.basename(windowsFile)}: start-up may be included)`;
}
// A profile of another thread (tsx's module loader, thread id ≠ 0 in the name) is not the server.
const threadId = path.basename(file).split('.')[4];
if (threadId !== undefined && threadId !== '0')
  console.log(`note: thread ${threadId} of its process, not the main thread (tsx's module loader?)`);

// Self time per node in those seconds: each sample's time delta goes to the node it hit.
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => {
  if (loadedSample(i)) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...selfUs.values()].reduce((a, b) => a + b, 0) || 1;

const where = (url: string) => {
  if (!url) return '(native)';
  const p = url.replace(/^file:\/\//, '');
  const rel = path.relative(process.cwd(), p);
  return rel.startsWith('..') ? p : rel;
};
const packageOf = (url: string) => {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) return 'node: core';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.includes('/core/')) return 'gatehouse core';
  if (url.includes('/plugins/')) return 'gatehouse plugins';
  return where(url);
};

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  if (!us) continue;
  const f = node.callFrame;
  const key = `${f.functionName || '(anonymous)'}  ${where(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  const pkg = packageOf(f.url);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
}

// Inclusive time: a sample counts once for every package on its stack (where a request's time goes).
const parentOf = new Map<number, number>();
for (const node of profile.nodes as (ProfileNode & { children?: number[] })[]) {
  for (const child of node.children ?? []) parentOf.set(child, node.id);
}
const nodeById = new Map(profile.nodes.map((n) => [n.id, n]));
const inclusive = new Map<string, number>();
profile.samples.forEach((id, i) => {
  if (!loadedSample(i) || idleIds.has(id)) return;
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const f = nodeById.get(at)!.callFrame;
    if (f.url) seen.add(packageOf(f.url));
    if (f.functionName === 'prepareStackTrace' || f.functionName === 'prepareStackTraceWithSourceMaps') {
      seen.add('(stack traces with source maps)');
    }
  }
  for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
});

const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;
const idleUs = [...selfUs].filter(([id]) => idleIds.has(id)).reduce((a, [, us]) => a + us, 0);
console.log(`${file}: ${(total / 1e6).toFixed(1)} s under load, of ${(clock / 1e6).toFixed(1)} s sampled`);
console.log(`window: ${how}`);
console.log(`main thread idle in that window: ${((idleUs / total) * 100).toFixed(1)}%`);
console.log(`\nTop ${count} functions by self time:`);
for (const [key, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, count)) console.log(`${pct(us)}  ${key}`);
console.log('\nSelf time by package:');
for (const [pkg, us] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${pct(us)}  ${pkg}`);
console.log('\nInclusive time by package (a sample counts for every package on its stack):');
for (const [pkg, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${pct(us)}  ${pkg}`);

/**
 * The stage of a token request a stack belongs to. First the anchors, anywhere on the stack (an
 * INSERT's native call under the group commit is the group commit's; a postMessage under the
 * signing threads' flush is the signature hand-off), then the innermost frame that a rule names
 * (a JSON.stringify under sendReply counts as the reply).
 */
const ANCHORS: [string, (f: ProfileNode['callFrame']) => boolean][] = [
  ['SQL: group commit (the INSERTs/UPDATEs, BEGIN, COMMIT)', (f) => f.functionName === 'flushWrites'],
  ['SQL: the code and its grant (SELECT)', (f) => f.functionName === 'findCode'],
  ['signature: batches posted to the signing threads', (f) => /signing-threads/.test(f.url)],
];
const STAGES: [string, (f: ProfileNode['callFrame']) => boolean][] = [
  ['GC (main thread)', (f) => f.functionName === '(garbage collector)'],
  ['idle', (f) => f.functionName === '(idle)'],
  ['V8 (program: outside JS, not attributed)', (f) => f.functionName === '(program)'],
  ['SQL: statement lookup and binding, other statements', (f) => /\/storage\/|better-sqlite3/.test(f.url)],
  ['JWT: header and payload encoding', (f) => /\/oauth\/jws/.test(f.url)],
  ['token mint (TokenService: values, rows, hashes)', (f) => /\/oauth\/tokens\.|\/util\/crypto/.test(f.url)],
  ['client authentication', (f) => /\/oauth\/client-auth/.test(f.url)],
  ['body read and form parse', (f) => /\/oauth\/form|\/http\/body/.test(f.url)],
  ['parameter schema (zod)', (f) => /api-spec|node_modules\/zod/.test(f.url)],
  ['reply: JSON and headers object (sendReply)', (f) => f.functionName === 'sendReply'],
  ['request id and access log', (f) => /\/http\/logging/.test(f.url)],
  ['fast-path dispatch, client address', (f) => /fast-routes|proxy-addr|forwarded/.test(f.url)],
  ['grant handler (plugin)', (f) => /plugins\/grant-|\/oauth\/services/.test(f.url)],
  [
    'token endpoint (endpoints.ts: proof, facts, logger)',
    (f) => /\/oauth\/endpoints|\/verification\/context/.test(f.url),
  ],
  ['node:http: parse the request, write the response head', (f) => /node:_http_|node:internal\/http/.test(f.url)],
  [
    'node: sockets and streams (reads, the socket write)',
    (f) => /node:net|node:internal\/stream|node:stream|node:internal\/streams/.test(f.url),
  ],
  [
    'signature: answers from the signing threads (message events)',
    (f) => /worker|node:internal\/per_context\/messageport/.test(f.url),
  ],
  ['timers and immediates', (f) => /node:internal\/timers/.test(f.url)],
  ['promises and microtasks', (f) => /task_queues/.test(f.url) || f.functionName === 'runMicrotasks'],
];

function stageOf(sampleId: number): string {
  for (let at: number | undefined = sampleId; at !== undefined; at = parentOf.get(at)) {
    const f = nodeById.get(at)!.callFrame;
    for (const [name, test] of ANCHORS) if (test(f)) return name;
  }
  for (let at: number | undefined = sampleId; at !== undefined; at = parentOf.get(at)) {
    const f = nodeById.get(at)!.callFrame;
    for (const [name, test] of STAGES) if (test(f)) return name;
  }
  return 'other';
}

if (windows.length && windows.some((w) => w.requests)) {
  const labels = [...new Set(windows.map((w) => w.label))];
  for (const label of labels) {
    const mine = windows.filter((w) => w.label === label);
    const requests = mine.reduce((sum, w) => sum + (w.requests ?? 0), 0);
    if (!requests) continue;
    const stageUs = new Map<string, number>();
    let sampled = 0;
    profile.samples.forEach((id, i) => {
      const at = profile.startTime + times[i]!;
      if (!mine.some((w) => at >= w.startUs && at < w.endUs)) return;
      const us = profile.timeDeltas[i] ?? 0;
      sampled += us;
      const stage = stageOf(id);
      stageUs.set(stage, (stageUs.get(stage) ?? 0) + us);
    });
    const busy = sampled - (stageUs.get('idle') ?? 0);
    console.log(
      `\nStages of ${label}: ${requests} requests, main thread ${(busy / requests || 0).toFixed(1)} µs busy per request ` +
        `(profiled: the profiler's own cost included), ${(((stageUs.get('idle') ?? 0) / Math.max(sampled, 1)) * 100).toFixed(1)}% idle`,
    );
    for (const [stage, us] of [...stageUs].filter(([name]) => name !== 'idle').sort((a, b) => b[1] - a[1]))
      console.log(
        `${(us / requests).toFixed(1).padStart(7)} µs  ${((us / Math.max(busy, 1)) * 100).toFixed(1).padStart(5)}%  ${stage}`,
      );
  }
}
