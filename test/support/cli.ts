import { spawn, type ChildProcess } from 'node:child_process';
import { CLI, REPO_ROOT } from './paths.js';

/** What a finished CLI run printed and how it exited. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
}

/**
 * The environment of a CLI run: the test runner's, minus every variable that would change the
 * config under test (PORT, DATABASE_URL, ...), plus `extra`.
 */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ['PORT', 'DATABASE_URL', 'ISSUER', 'LOG_LEVEL', 'GATEHOUSE_CONFIG', 'NODE_OPTIONS'])
    delete env[key];
  return { ...env, ...extra };
}

/** Spawns `node core/cli/dist/main.js ...args`. */
export function spawnCli(args: string[], opts: CliOptions = {}): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: cliEnv(opts.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs the CLI to completion (killed after `timeoutMs`, default 15 s). */
export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const child = spawnCli(args, opts);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 15_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The lines of a stream's text, without the trailing empty one. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line, i, all) => line !== '' || i < all.length - 1);
}
