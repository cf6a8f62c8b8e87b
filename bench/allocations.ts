/**
 * Bytes allocated per request on Gatehouse's main thread, per token scenario, and where:
 * `node --import tsx bench/allocations.ts [--only a,b,c] [--requests 20000] [--top 25]`.
 * Allocation is the lever for both CPU and p99 under load (docs/performance.md, round five's
 * profile): every byte a request allocates is work for the young generation's collector. Unlike
 * requests per second, the figure barely moves with the machine's load, so a change can be
 * judged here even on a busy machine. The server is bench/gatehouse-server.ts on SQLite, as in
 * `npm run bench`; the sampling profiler (bench/lib/heap-sampling.ts) costs time, not bytes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { request, startServer, type ServerChild } from './lib/children.js';
import { JWT_CLIENT, OPAQUE_CLIENT } from './lib/clients.js';
import type { AllocationSummary } from './lib/heap-sampling.js';
import { runLoad } from './lib/load.js';
import { clientCredentials, introspection, opaqueToken } from './lib/scenarios.js';

const { values: flags } = parseArgs({
  options: {
    only: { type: 'string', default: 'a,b,c' },
    requests: { type: 'string', default: '20000' },
    top: { type: 'string', default: '25' },
  },
});
const requests = Number(flags.requests);
const top = Number(flags.top);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'gh-alloc-'));
const server = await startServer('gatehouse', 'gatehouse-server.ts', {
  env: { BENCH_DATABASE_URL: `sqlite:${path.join(tmp, 'gatehouse.db')}` },
});
try {
  const scenarios: Record<string, () => Promise<ReturnType<typeof clientCredentials>>> = {
    a: async () => clientCredentials(server, 'gatehouse', JWT_CLIENT),
    b: async () => clientCredentials(server, 'gatehouse', OPAQUE_CLIENT),
    c: async () => introspection(server, 'gatehouse', await opaqueToken(server, 'gatehouse')),
  };
  for (const letter of flags.only.split(',').map((s) => s.trim())) {
    const load = await scenarios[letter]?.();
    if (!load) throw new Error(`--only: ${letter} is not a, b or c`);
    await measure(server, letter, load);
  }
} finally {
  await server.stop();
  rmSync(tmp, { recursive: true, force: true });
}

async function measure(server: ServerChild, letter: string, load: ReturnType<typeof clientCredentials>) {
  // Warm: compiled code, caches filled, the first signing key made.
  await runLoad({ ...load, connections: 8, durationSeconds: 10, amount: 3000 });
  await request(server, { type: 'heap-start' }, 'heap-started');
  const run = await runLoad({ ...load, connections: 8, durationSeconds: 120, amount: requests });
  const summary = await request<AllocationSummary>(server, { type: 'heap-stop' }, 'heap-summary');
  if (run.non2xx || run.errors) throw new Error(`${letter}: ${run.non2xx} non-2xx answers, ${run.errors} errors`);
  const perRequest = (bytes: number) => (bytes / run.requests / 1024).toFixed(2);
  console.log(`\n${letter}: ${run.requests} requests, ${perRequest(summary.totalBytes)} KB allocated per request`);
  for (const site of summary.top.slice(0, top)) {
    console.log(`  ${perRequest(site.bytes).padStart(6)} KB  ${site.where}`);
  }
}
