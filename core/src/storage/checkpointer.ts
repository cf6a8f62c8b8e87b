import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';

/** SQLite's own automatic checkpoint threshold, in WAL pages. */
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;

export interface CheckpointerOptions {
  /** Writes seen before the worker starts (a database that is only read needs none). */
  startAfterWrites: number;
  /** Between the worker's passive passes. */
  intervalMs: number;
  /** WAL pages at which writes pause for one pass, so that the WAL starts over (4,000 ≈ 16 MiB). */
  restartPages: number;
  /** While the worker runs, the writer still checkpoints past this many pages itself (if the worker stalls). */
  fallbackPages: number;
  /** The longest writes are held waiting for that pass. */
  holdMs: number;
}

const DEFAULTS: CheckpointerOptions = {
  startAfterWrites: 500,
  intervalMs: 100,
  restartPages: 4000,
  fallbackPages: 20_000,
  holdMs: 200,
};

/** The writer's side of a restart: resolves once no write is in flight, and holds writes until released. */
export type HoldWrites = () => Promise<() => void>;

/** A passive pass's outcome (SQLite's `wal_checkpoint` row), or why it failed. */
interface PassReport {
  log?: number;
  checkpointed?: number;
  error?: string;
  drained?: boolean;
}

// The worker is CommonJS source run with `eval`, so it works from dist and under tsx alike.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { timeout: 1000 });
const pass = () => {
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    return { log: row.log, checkpointed: row.checkpointed };
  } catch (err) {
    return { error: String((err && err.message) || err) };
  }
};
const tick = () => parentPort.postMessage(pass());
let timer = setInterval(tick, workerData.intervalMs);
parentPort.on('message', (m) => {
  clearInterval(timer);
  if (m === 'drain') {
    parentPort.postMessage({ ...pass(), drained: true });
    // The next pass a full interval on: one now would report the WAL from before it starts over.
    timer = setInterval(tick, workerData.intervalMs);
    return;
  }
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
 *
 * Passive passes alone never let the WAL start over under steady writes: the writer rewinds it
 * only when every frame has been copied, and by the end of a pass new frames have always been
 * appended. The WAL then grew to the fallback (80 MiB), where the writer's own checkpoint stalled
 * the event loop for 70 ms. So past `restartPages` the writes are held (reads go on) for one
 * more pass, which then copies everything, and the next commit rewinds the WAL.
 */
export class BackgroundCheckpointer {
  private readonly opts: CheckpointerOptions;
  private writes = 0;
  private worker: Worker | null = null;
  private stopped = false;
  private exited = false;
  private started = false;
  /** WAL pages when the worker last looked (0 before it starts): the metrics' gauge. */
  walPages = 0;
  /** Pages past which the next hold is tried; doubles while holds leave frames behind (another process writing). */
  private holdAt: number;
  private holding = false;
  private endHold: (() => void) | null = null;
  /** Holds that ended with every frame copied. */
  restarts = 0;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly file: string,
    private readonly holdWrites: HoldWrites | null = null,
    opts: Partial<CheckpointerOptions> = {},
  ) {
    this.opts = { ...DEFAULTS, ...opts };
    this.holdAt = this.opts.restartPages;
  }

  /** Counts a write; starts the worker at the threshold. */
  wrote(): void {
    if (this.worker || this.stopped || ++this.writes < this.opts.startAfterWrites) return;
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        execArgv: [], // CommonJS source: an inherited --input-type=module would break it
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
      this.endHold?.();
      if (!this.stopped && this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
    };
    worker.on('message', (report: PassReport) => {
      if (report.error) return fallBack();
      // The writer leaves checkpoints to the worker once its first pass ran (it takes a while to start).
      if (!this.started && !this.stopped && this.db.open) {
        this.db.pragma(`wal_autocheckpoint = ${this.opts.fallbackPages}`);
        this.started = true;
      }
      this.passed(report);
    });
    worker.on('error', fallBack);
    worker.on('exit', () => {
      this.exited = true;
      fallBack();
    });
    this.worker = worker;
  }

  get running(): boolean {
    return this.worker !== null && !this.stopped;
  }

  private passed(report: PassReport): void {
    const log = report.log ?? 0;
    this.walPages = log;
    if (report.drained) {
      // Every frame copied with no write in flight: the next commit starts the WAL over. If a
      // reader or another process kept a frame back, the next hold is tried twice as far on.
      if (log > 0 && report.checkpointed === log) {
        this.restarts++;
        this.holdAt = this.opts.restartPages;
      } else this.holdAt = Math.min(this.holdAt * 2, this.opts.fallbackPages);
      this.endHold?.();
      return;
    }
    if (log < this.opts.restartPages) this.holdAt = this.opts.restartPages;
    else if (log >= this.holdAt && this.holdWrites && !this.holding) void this.drain(this.holdWrites);
  }

  /** Holds the writes while the worker runs one more pass, then lets them go. */
  private async drain(holdWrites: HoldWrites): Promise<void> {
    this.holding = true;
    const release = await holdWrites();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.opts.holdMs);
      this.endHold = () => {
        clearTimeout(timer);
        resolve();
      };
      if (this.stopped || this.exited || !this.worker) return this.endHold();
      this.worker.postMessage('drain');
    });
    this.endHold = null;
    this.holding = false;
    release();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.endHold?.();
    const worker = this.worker;
    if (!worker || this.exited) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('stop');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
    await worker.terminate();
  }
}
