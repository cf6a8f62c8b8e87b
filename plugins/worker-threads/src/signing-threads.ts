import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { KeyObject } from 'node:crypto';
import type { JwtSigning, SigningArgs } from '@gatehouse-auth/core';

type ToThread =
  { type: 'key'; id: number; args: SigningArgs } | { type: 'sign'; items: [keyId: number, input: string][] };
type Signed = { sig: string } | { error: string };

// The thread signs synchronously: it has nothing else to do, and a batch is one message each way.
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { sign } = require('node:crypto');
const keys = new Map();
parentPort.on('message', (m) => {
  if (m.type === 'key') return void keys.set(m.id, m.args);
  parentPort.postMessage(m.items.map(([id, input]) => {
    try {
      const [digest, key] = keys.get(id);
      return { sig: sign(digest, Buffer.from(input), key).toString('base64url') };
    } catch (err) {
      return { error: String(err && err.message || err) };
    }
  }));
});
`;

interface Pending {
  resolve(sig: string): void;
  reject(err: Error): void;
}

/** One worker thread: the keys it was given, and its batches in flight (answers come in order). */
class SigningThread {
  readonly worker: Worker;
  readonly keys = new Set<number>();
  readonly inFlight: Pending[][] = [];
  dead = false;

  /** `idle`: called when the thread has answered its batches (or ended): the next batch may go. */
  constructor(idle: () => void) {
    this.worker = new Worker(THREAD_SOURCE, { eval: true, execArgv: [] }); // CommonJS source: no inherited --input-type
    this.worker.unref(); // never what keeps a process alive
    this.worker.on('message', (answers: Signed[]) => {
      const batch = this.inFlight.shift() ?? [];
      answers.forEach((a, i) => ('sig' in a ? batch[i]?.resolve(a.sig) : batch[i]?.reject(new Error(a.error))));
      if (this.inFlight.length === 0) idle();
    });
    const fail = (err: unknown) => {
      if (this.dead) return;
      this.dead = true;
      const error = err instanceof Error ? err : new Error(`signing thread exited (${String(err)})`);
      for (const batch of this.inFlight.splice(0)) for (const p of batch) p.reject(error);
      idle();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', fail);
  }

  get load(): number {
    return this.inFlight.length;
  }
}

/**
 * Signatures on dedicated worker threads, in batches. node:crypto's own asynchronous sign() puts
 * each signature on libuv's pool as a job of its own: on a loaded 2-core machine, queueing and
 * waking a pool thread cost the event loop 25–40 µs per job, as much as an ES256 signature
 * itself. Here the signatures asked for in one turn of the event loop go to a thread as one
 * message, and come back as one.
 *
 * A thread has at most one batch in flight: while every thread is busy, signatures wait in the
 * queue and go as one batch when a thread answers (it would have reached them no sooner: a
 * thread signs its messages one after the other). Each message costs both threads a wake-up
 * (about 10 µs of CPU each when idle, 30 µs on the event loop under load, issue 30), so under
 * load fewer, larger batches are what saves CPU.
 */
export class SigningThreads implements JwtSigning {
  private readonly threads: SigningThread[] = [];
  private readonly keyIds = new WeakMap<KeyObject, number>();
  private nextKeyId = 1;
  private queue: { key: KeyObject; args: SigningArgs; input: string; pending: Pending }[] = [];
  private flushScheduled = false;

  constructor(private readonly size = Math.max(1, Math.min(4, availableParallelism()))) {}

  /** The base64url signature of `input` under `args` (keyed by `key`, sent to a thread once). */
  sign(key: KeyObject, args: SigningArgs, input: string): Promise<string> {
    return new Promise((resolve, reject) => {
      this.queue.push({ key, args, input, pending: { resolve, reject } });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.queue.length === 0) return;
    let thread: SigningThread | null;
    try {
      thread = this.idleThread();
    } catch (err) {
      const queue = this.queue;
      this.queue = [];
      for (const q of queue) q.pending.reject(err as Error);
      return;
    }
    if (!thread) return; // every thread is busy: the first to answer takes the queue
    const queue = this.queue;
    this.queue = [];
    const items: [number, string][] = [];
    for (const { key, args, input } of queue) {
      let id = this.keyIds.get(key);
      if (id === undefined) this.keyIds.set(key, (id = this.nextKeyId++));
      if (!thread.keys.has(id)) {
        thread.worker.postMessage({ type: 'key', id, args } satisfies ToThread);
        thread.keys.add(id);
      }
      items.push([id, input]);
    }
    thread.inFlight.push(queue.map((q) => q.pending));
    thread.worker.postMessage({ type: 'sign', items } satisfies ToThread);
  }

  /** A thread with no batch in flight (started if there are fewer than `size`), or null; a dead thread is replaced. */
  private idleThread(): SigningThread | null {
    for (let i = 0; i < this.threads.length; i++) if (this.threads[i]!.dead) this.threads.splice(i--, 1);
    const idle = this.threads.find((t) => t.load === 0);
    if (idle) return idle;
    if (this.threads.length < this.size) {
      const thread = new SigningThread(() => this.flush());
      this.threads.push(thread);
      return thread;
    }
    return null;
  }

  /** Ends the threads (tests; a server's threads are unref'd and end with it). */
  async close(): Promise<void> {
    await Promise.all(this.threads.splice(0).map((t) => t.worker.terminate()));
  }
}

/** The process's signing threads of each size (one, unless configs differ), started with the first signature. */
const shared = new Map<number, SigningThreads>();
export function signingThreads(size: number): SigningThreads {
  let threads = shared.get(size);
  if (!threads) shared.set(size, (threads = new SigningThreads(size)));
  return threads;
}
