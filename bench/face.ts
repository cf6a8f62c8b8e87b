/**
 * The FACE method's cost per photo, and the distances behind its threshold:
 *
 *   npx tsc -b plugins/method-face && node --import tsx bench/face.ts [--rounds N]
 *
 * Starts the face engine from the built package (as the server runs it: a worker thread, the
 * WASM backend), warms it up, then describes every test photo of
 * plugins/method-face/test/fixtures.ts `--rounds` times (default 3), each followed by the match
 * a verification does (the distance to five enrolled descriptors). Prints the median and p95 per
 * kind of photo and their ratio to the goal of 200 ms, then the same-person and different-person
 * distances against the default threshold.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { FaceEngine, faceDistance, type DescribeResult } from '@gatehouse-auth/method-face';
import { faceFixtures, VARIANTS, type Person } from '../plugins/method-face/test/fixtures.js';

const GOAL_MS = 200;
const THRESHOLD = 0.65;

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const rounds = Math.max(1, Number(values.rounds) || 3);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const fixed = (v: number, digits = 0) => v.toFixed(digits);

const fixtures = faceFixtures();
const kinds = ['original', ...VARIANTS] as const;
type Kind = (typeof kinds)[number];

const started = performance.now();
const engine = await FaceEngine.start();
const startMs = performance.now() - started;

const descriptorOf = (result: DescribeResult, what: string): number[] => {
  if (!result.ok) throw new Error(`${what}: ${result.reason}`);
  return result.descriptor;
};

// Warm-up: the first runs of each network compile and allocate.
for (const person of fixtures.persons.slice(0, 3)) await engine.describe(person.original);

// Five enrolled faces, as a user at the default max_faces_per_user would have.
const enrolled: number[][] = [];
for (const person of fixtures.persons.slice(0, 5))
  enrolled.push(descriptorOf(await engine.describe(person.original), person.label));

const times = new Map<string, number[]>();
const timed = async (kind: string, photo: Buffer): Promise<DescribeResult> => {
  const t0 = performance.now();
  const result = await engine.describe(photo);
  if (result.ok) Math.min(...enrolled.map((e) => faceDistance(result.descriptor, e)));
  const ms = performance.now() - t0;
  times.set(kind, [...(times.get(kind) ?? []), ms]);
  return result;
};

const descriptors = new Map<Person, Record<Kind, number[]>>();
for (let round = 0; round < rounds; round++) {
  for (const person of fixtures.persons) {
    const mine = {} as Record<Kind, number[]>;
    for (const kind of kinds) mine[kind] = descriptorOf(await timed(kind, person[kind]), `${person.label} ${kind}`);
    descriptors.set(person, mine);
  }
  await timed('collage (several faces)', fixtures.severalFaces);
  await timed('gradient (no face)', fixtures.noFace);
}
const rss = process.memoryUsage().rss;
await engine.close();

const rows: string[][] = [];
const all: number[] = [];
for (const [kind, list] of times) {
  const sorted = [...list].sort((a, b) => a - b);
  if (kinds.includes(kind as Kind)) all.push(...list);
  const median = percentile(sorted, 0.5);
  rows.push([kind, String(list.length), fixed(median), fixed(percentile(sorted, 0.95)), fixed(median / GOAL_MS, 2)]);
}
const sortedAll = all.sort((a, b) => a - b);
const median = percentile(sortedAll, 0.5);
rows.push([
  'all single-face photos',
  String(all.length),
  fixed(median),
  fixed(percentile(sortedAll, 0.95)),
  fixed(median / GOAL_MS, 2),
]);

const cpus = os.cpus();
console.log(
  `FACE bench: ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, Node ${process.version}; ` +
    `engine start ${fixed(startMs)} ms, RSS ${fixed(rss / 2 ** 20)} MiB; ${rounds} round(s)\n`,
);
printTable(['photo', 'n', 'median ms', 'p95 ms', 'median / 200 ms'], rows);

// Distances: every variant against its original; every pair of different women.
const persons = [...descriptors.entries()];
const same = VARIANTS.map((kind) => {
  const d = persons.map(([, mine]) => faceDistance(mine.original, mine[kind]));
  return [kind, fixed(Math.min(...d), 3), fixed(Math.max(...d), 3), String(d.filter((v) => v > THRESHOLD).length)];
});
let closest = { distance: Infinity, pair: '' };
let closestAny = Infinity;
let differentAbove = 0;
let pairs = 0;
for (let i = 0; i < persons.length; i++) {
  for (let j = i + 1; j < persons.length; j++) {
    const [a, da] = persons[i]!;
    const [b, db] = persons[j]!;
    const d = faceDistance(da.original, db.original);
    pairs++;
    if (d > THRESHOLD) differentAbove++;
    if (d < closest.distance) closest = { distance: d, pair: `${a.label} / ${b.label}` };
    for (const x of kinds) for (const y of kinds) closestAny = Math.min(closestAny, faceDistance(da[x], db[y]));
  }
}
console.log(`\nSame person (${persons.length} faces), distance to the original:\n`);
printTable(['variant', 'min', 'max', `over ${THRESHOLD}`], same);
console.log(
  `\nDifferent persons: ${pairs} pairs of originals, all above ${THRESHOLD}: ${differentAbove === pairs}; ` +
    `closest ${fixed(closest.distance, 3)} (${closest.pair}); closest over all variants ${fixed(closestAny, 3)}`,
);
console.log(`Whole bench: ${fixed((performance.now() - started) / 1000, 1)} s.`);

function printTable(header: string[], body: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  console.log([line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n'));
}
