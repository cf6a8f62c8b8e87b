import { Worker } from 'node:worker_threads';
import {
  resolveOptions,
  type DescribeResult,
  type FaceEngineOptions,
  type ResolvedOptions,
  type WorkerMessage,
} from './types.js';

/**
 * The built worker, also when these sources run under tsx (the tests): a worker thread does not
 * inherit tsx's loader, so the package must be built first (`npx tsc -b plugins/method-face`).
 */
const WORKER = new URL(
  import.meta.url.endsWith('.ts') ? '../../dist/engine/worker.js' : './worker.js',
  import.meta.url,
);

interface Job {
  id: number;
  image: Uint8Array<ArrayBuffer>;
  resolve(result: DescribeResult): void;
  reject(error: Error): void;
  timer?: NodeJS.Timeout;
}

/** One worker thread and the promise that it has loaded the model. */
interface Slot {
  worker: Worker;
  ready: Promise<void>;
}

/** More images wait than the engine takes (`maxQueue`): the caller should answer 503. */
export class FaceEngineBusyError extends Error {
  constructor() {
    super('the face engine is busy');
    this.name = 'FaceEngineBusyError';
  }
}

export interface FaceEngineStats {
  /** Workers started: 1, plus one per restart after a crash or a time-out. */
  workerStarts: number;
  described: number;
}

/**
 * Face descriptors computed in a worker thread, so the decoding and the ~100 ms of inference per
 * image never block the event loop. Images are described one at a time (tfjs runs one model at
 * a time per thread); at most `maxQueue` wait, more are refused at once. The worker is unref'd
 * while idle, so it never keeps the process alive. A worker that crashes, or takes longer than
 * `timeoutMs` on an image, is ended: that image fails, and the next one starts a new worker.
 */
export class FaceEngine {
  readonly options: ResolvedOptions;
  private slot: Slot | undefined;
  private readonly queue: Job[] = [];
  private current: Job | undefined;
  private nextId = 1;
  private closed = false;
  private readonly counts: FaceEngineStats = { workerStarts: 0, described: 0 };

  private constructor(options: ResolvedOptions) {
    this.options = options;
  }

  /** Resolves once the worker has loaded the model. */
  static async start(options?: FaceEngineOptions): Promise<FaceEngine> {
    const engine = new FaceEngine(resolveOptions(options));
    const slot = engine.spawn();
    await slot.ready;
    if (!engine.current) slot.worker.unref();
    return engine;
  }

  get stats(): FaceEngineStats {
    return { ...this.counts };
  }

  /** A JPEG or PNG image to the 1024-number descriptor of its only face. */
  describe(buffer: Uint8Array): Promise<DescribeResult> {
    if (this.closed) return Promise.reject(new Error('the face engine is closed'));
    if (this.queue.length >= this.options.maxQueue) return Promise.reject(new FaceEngineBusyError());
    // A private copy, transferred to the worker: the caller may reuse its buffer.
    const image = new Uint8Array(buffer);
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, image, resolve, reject });
      this.pump();
    });
  }

  /** Ends the worker; pending and later calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    const slot = this.slot;
    this.slot = undefined;
    const error = new Error('the face engine is closed');
    for (const job of this.current ? [this.current, ...this.queue] : this.queue) {
      clearTimeout(job.timer);
      job.reject(error);
    }
    this.current = undefined;
    this.queue.length = 0;
    if (slot) await slot.worker.terminate();
  }

  private pump(): void {
    if (this.current || this.queue.length === 0) return;
    const job = this.queue.shift() as Job;
    this.current = job;
    const slot = this.slot ?? this.spawn();
    slot.ready.then(
      () => {
        if (this.current !== job || this.slot !== slot) return; // failed meanwhile
        slot.worker.ref();
        slot.worker.postMessage({ id: job.id, image: job.image }, [job.image.buffer]);
        const ms = this.options.timeoutMs;
        job.timer = setTimeout(() => this.stop(slot, new Error(`it took over ${ms} ms`)), ms);
      },
      () => undefined, // stop() has failed the job
    );
  }

  private spawn(): Slot {
    const { maxSide, maxPixels } = this.options;
    const worker = new Worker(WORKER, { workerData: { maxSide, maxPixels } });
    this.counts.workerStarts++;
    let markReady!: () => void;
    let failReady!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    ready.catch(() => undefined); // observed by start() or by the job; never unhandled here
    const slot: Slot = { worker, ready };
    this.slot = slot;

    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') markReady();
      else this.settle(slot, message);
    });
    const crash = (error: Error) => {
      failReady(error);
      this.stop(slot, error);
    };
    worker.on('error', crash);
    worker.on('exit', (code) => crash(new Error(`the face worker exited with code ${code}`)));
    return slot;
  }

  /** Ends a worker that crashed or hung: its image fails, the others go on in a new worker. */
  private stop(slot: Slot, error: Error): void {
    if (this.slot !== slot) return; // closed, or already stopped ('error' comes before 'exit')
    this.slot = undefined;
    void slot.worker.terminate();
    const job = this.current;
    this.current = undefined;
    if (job) {
      clearTimeout(job.timer);
      job.reject(new Error(`face describe failed: ${error.message}`, { cause: error }));
    }
    this.pump();
  }

  private settle(slot: Slot, message: Exclude<WorkerMessage, { type: 'ready' }>): void {
    const job = this.current;
    if (this.slot !== slot || !job || job.id !== message.id) return;
    clearTimeout(job.timer);
    this.current = undefined;
    if (message.type === 'result') {
      this.counts.described++;
      job.resolve(message.result);
    } else {
      job.reject(new Error(`face describe failed: ${message.message}`));
    }
    if (this.queue.length === 0) slot.worker.unref();
    else this.pump();
  }
}
