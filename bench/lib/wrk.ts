/**
 * wrk as a second load generator (Debian package `wrk`): a C client on one thread, so the
 * servers keep more of the two cores than under autocannon, which runs in Node beside them and
 * narrows the differences. Used for the token scenarios (a–c, e) when wrk is installed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LoadOptions, LoadSummary } from './load.js';

export function wrkInstalled(): boolean {
  return spawnSync('sh', ['-c', 'command -v wrk'], { stdio: 'ignore' }).status === 0;
}

/**
 * Lua for one fixed request, or for `bodiesFile`'s lines in turn (single-use inputs, a bogus one
 * once they run out), printing the figures on one line wrk's `done` hands over.
 */
function script(load: Omit<LoadOptions, 'durationSeconds' | 'connections'>, bodiesFile?: string): string {
  const lua = (s: string) => JSON.stringify(s); // ASCII only here (forms, JSON): the escapes agree
  const headers = Object.entries((load.headers ?? {}) as Record<string, string>)
    .map(([k, v]) => `wrk.headers[${lua(k)}] = ${lua(v)}`)
    .join('\n');
  return `wrk.method = ${lua(load.method ?? 'GET')}
${load.body ? `wrk.body = ${lua(String(load.body))}` : ''}
${headers}
${
  bodiesFile
    ? `local bodies = {}
for line in io.lines(${lua(bodiesFile)}) do bodies[#bodies + 1] = line end
local next_body = 0
request = function()
  next_body = next_body + 1
  return wrk.format(nil, nil, nil, bodies[next_body] or "used-up")
end`
    : ''
}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("GHRESULT %d %d %d %d %d %.2f %d %d %d %d\\n",
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`;
}

/** One wrk run (1 thread) against `load`, summarised as autocannon's runs are. */
export async function runWrk(
  load: Omit<LoadOptions, 'durationSeconds' | 'connections'>,
  opts: { connections: number; durationSeconds: number; bodies?: string[] },
): Promise<LoadSummary> {
  const url = new URL(load.path ?? '/', load.url);
  if (url.hostname !== '127.0.0.1') throw new Error(`bench: refusing to send load to ${url.hostname}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'gh-wrk-'));
  try {
    const file = path.join(dir, 'request.lua');
    const bodiesFile = opts.bodies ? path.join(dir, 'bodies.txt') : undefined;
    if (bodiesFile) writeFileSync(bodiesFile, opts.bodies!.join('\n') + '\n');
    writeFileSync(file, script(load, bodiesFile));
    const args = ['-t1', `-c${opts.connections}`, `-d${opts.durationSeconds}s`, '--timeout', '10s', '-s', file];
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', [...args, url.toString()], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`wrk exited ${code}: ${out}`))));
    });
    const line = output.split('\n').find((l) => l.startsWith('GHRESULT '));
    if (!line) throw new Error(`wrk printed no result: ${output}`);
    const [requests, durationUs, status, socket, timeouts, mean, p50, p90, p99, max] = line
      .split(' ')
      .slice(1)
      .map(Number) as [number, number, number, number, number, number, number, number, number, number];
    const seconds = Math.max(durationUs / 1e6, 0.001);
    const ok = requests - status;
    const ms = (us: number) => Math.round(us / 1000);
    return {
      rps: Math.round(ok / seconds),
      p50: ms(p50),
      mean: Number((mean / 1000).toFixed(2)),
      p90: ms(p90),
      p99: ms(p99),
      max: ms(max),
      requests,
      ok,
      non2xx: status,
      errors: socket,
      timeouts,
      durationSeconds: Number(seconds.toFixed(2)),
      connections: opts.connections,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
