import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { HashJob } from '@gatehouse-auth/core';

type Answer = { value: string | boolean } | { error: string };

// The thread hashes synchronously (@node-rs/argon2's *Sync): it has nothing else to do, and the
// hash's 19 MiB stay in this thread's malloc arena, reused by its next hash. A string that is
// not an argon2 PHC string verifies as false, as node-argon2's verify() answered.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const argon2 = require(workerData.module);
const ARGON2ID = 2;
const parsable = (hash) => { try { argon2.parseOptions(hash); return true; } catch { return false; } };
parentPort.on('message', (job) => {
  try {
    if (job.op === 'hash') {
      parentPort.postMessage({ value: argon2.hashSync(job.secret, { ...job.cost, algorithm: ARGON2ID }) });
    } else {
      parentPort.postMessage({ value: parsable(job.hash) && argon2.verifySync(job.hash, job.secret) });
    }
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) });
  }
});
`;

interface Job {
  job: HashJob;
  resolve(value: string | boolean): void;
  reject(err: Error): void;
}

/** One worker thread and the job it is running (one at a time). */
class HashingThread {
  readonly worker: Worker;
  current: Job | null = null;
  dead = false;

  constructor(module: string, idle: () => void) {
    // execArgv: [] because the source is CommonJS: an inherited --input-type=module would break it.
    this.worker = new Worker(THREAD_SOURCE, { eval: true, execArgv: [], workerData: { module } });
    this.worker.unref(); // kept alive only while it runs a job (see run)
    this.worker.on('message', (answer: Answer) => {
      const job = this.finish();
      if ('error' in answer) job?.reject(new Error(`argon2: ${answer.error}`));
      else job?.resolve(answer.value);
      idle();
    });
    const fail = (err: unknown) => {
      if (this.dead) return;
      this.dead = true;
      this.finish()?.reject(err instanceof Error ? err : new Error(`hashing thread exited (${String(err)})`));
      idle();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', fail);
  }

  run(job: Job): void {
    this.current = job;
    this.worker.ref(); // a CLI awaiting a hash must not exit under it
    this.worker.postMessage(job.job);
  }

  private finish(): Job | null {
    const job = this.current;
    this.current = null;
    if (!this.dead) this.worker.unref();
    return job;
  }
}

/**
 * Password and code hashing on worker threads of their own, one job per thread at a time.
 * node-argon2 ran each hash on one of libuv's four pool threads, and glibc kept each thread's
 * 19 MiB argon2 buffer in that thread's arena after the hash: a busy server held 4 × 19 MiB more
 * than it hashed with (RSS 43 → 121 MiB after 48 hashes, decision 57). Here as many threads as
 * hashes may run at once (cores − 1, the CPU-heavy-work limit) each keep one. A thread that dies
 * fails its job and is replaced by the next one.
 */
export class HashingThreads {
  private readonly threads: HashingThread[] = [];
  private readonly queue: Job[] = [];
  private readonly module = createRequire(import.meta.url).resolve('@node-rs/argon2');

  constructor(private readonly size = Math.max(1, availableParallelism() - 1)) {}

  run(job: HashJob): Promise<string | boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.next();
    });
  }

  /** Jobs running and waiting (tests, gauges). */
  get load(): { running: number; waiting: number } {
    return { running: this.threads.filter((t) => t.current).length, waiting: this.queue.length };
  }

  private next(): void {
    for (let i = 0; i < this.threads.length; i++) if (this.threads[i]!.dead) this.threads.splice(i--, 1);
    while (this.queue.length > 0) {
      let thread = this.threads.find((t) => !t.current);
      if (!thread && this.threads.length < this.size) {
        try {
          thread = new HashingThread(this.module, () => this.next());
        } catch (err) {
          for (const job of this.queue.splice(0)) job.reject(err as Error);
          return;
        }
        this.threads.push(thread);
      }
      if (!thread) return; // every thread is busy: the first to answer takes the next job
      thread.run(this.queue.shift()!);
    }
  }

  /** Ends the threads (tests; a server's threads end with it). */
  async close(): Promise<void> {
    await Promise.all(this.threads.splice(0).map((t) => t.worker.terminate()));
  }
}

/** The process's hashing threads of each size (one, unless configs differ), started with the first hash. */
const shared = new Map<number, HashingThreads>();
export function hashingThreads(size: number): HashingThreads {
  let threads = shared.get(size);
  if (!threads) shared.set(size, (threads = new HashingThreads(size)));
  return threads;
}
