import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A server in a child process, on 127.0.0.1. */
export interface ServerChild {
  name: string;
  process: ChildProcess;
  port: number;
  issuer: string;
  /** Asks for a clean shutdown; kills the process if it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<ChildProcess>();

/** Kills every child still running (on error or exit): nothing outlives the bench. */
export function killAllChildren(): void {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  live.clear();
}
process.on('exit', killAllChildren);

/**
 * Forks `script` (a .ts file next to run.ts) under tsx and waits for its `{ type: 'ready' }`
 * message, at most `timeoutMs`.
 */
export async function startServer(
  name: string,
  script: string,
  opts: { env?: Record<string, string>; execArgv?: string[]; timeoutMs?: number } = {},
): Promise<ServerChild> {
  const file = fileURLToPath(new URL(`../${script}`, import.meta.url));
  const child = fork(file, [], {
    execArgv: ['--import', 'tsx', ...(opts.execArgv ?? [])],
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  const ready = await new Promise<{ port: number; issuer: string }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start within ${opts.timeoutMs ?? 60_000} ms`)),
      opts.timeoutMs ?? 60_000,
    );
    child.on('message', (message: { type?: string; port?: number; issuer?: string }) => {
      if (message?.type === 'ready') {
        clearTimeout(timer);
        resolve({ port: message.port!, issuer: message.issuer! });
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before it was ready (code ${code}, signal ${signal})`));
    });
  });
  return {
    name,
    process: child,
    ...ready,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      if (child.connected) child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Sends `message` to a child and waits for the first reply of `replyType` (bounded by `timeoutMs`). */
export function request<T>(child: ServerChild, message: object, replyType: string, timeoutMs = 120_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onMessage = (reply: { type?: string }) => {
      if (reply?.type !== replyType) return;
      clearTimeout(timer);
      child.process.off('message', onMessage);
      resolve(reply as T);
    };
    const timer = setTimeout(() => {
      child.process.off('message', onMessage);
      reject(new Error(`${child.name} did not answer ${replyType} within ${timeoutMs} ms`));
    }, timeoutMs);
    child.process.on('message', onMessage);
    child.process.send(message);
  });
}
