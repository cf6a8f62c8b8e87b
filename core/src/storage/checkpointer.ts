import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';

/** SQLite's own automatic checkpoint threshold, in WAL pages. */
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;
/** While the background checkpointer runs, the writer still checkpoints past this (a bound if it stalls). */
const FALLBACK_AUTOCHECKPOINT = 20_000;

// The worker is CommonJS source run with `eval`, so it works from dist and under tsx alike.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { timeout: 1000 });
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err) });
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Moves WAL checkpoints off the event loop. With SQLite's default, the write that crosses 1,000
 * WAL pages copies them into the database file while a request waits: about a third of the cost
 * of an insert on the token endpoint. Once a database sees steady writes (`startAfterWrites`),
 * a worker thread with its own connection runs passive checkpoints (which never block readers
 * or writers) every `intervalMs`, and the writer's threshold is raised to a bound it reaches
 * only if the worker stalls. If the worker fails, the default comes back.
 */
export class BackgroundCheckpointer {
  private writes = 0;
  private worker: Worker | null = null;
  private stopped = false;
  private exited = false;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly file: string,
    private readonly opts: { startAfterWrites: number; intervalMs: number } = {
      startAfterWrites: 500,
      intervalMs: 250,
    },
  ) {}

  /** Counts a write; starts the worker at the threshold. */
  wrote(): void {
    if (this.worker || this.stopped || ++this.writes < this.opts.startAfterWrites) return;
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          module: createRequire(import.meta.url).resolve('better-sqlite3'),
          file: this.file,
          intervalMs: this.opts.intervalMs,
        },
      });
    } catch {
      this.stopped = true; // SQLite's own checkpoints stay in charge
      return;
    }
    worker.unref();
    const fallBack = () => {
      if (!this.stopped && this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
    };
    worker.on('message', (m: { error?: string }) => {
      if (m.error) fallBack();
    });
    worker.on('error', fallBack);
    worker.on('exit', () => {
      this.exited = true;
      fallBack();
    });
    this.db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT}`);
    this.worker = worker;
  }

  get running(): boolean {
    return this.worker !== null && !this.stopped;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const worker = this.worker;
    if (!worker || this.exited) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('stop');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
    await worker.terminate();
  }
}
