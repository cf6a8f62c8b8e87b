import { ApiError } from '../errors.js';

/**
 * Runs at most `capacity` tasks at once; up to `maxWaiting` more wait in order, and beyond that
 * a task is refused at once (503) instead of queueing without bound.
 */
export class Limiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly capacity: number,
    readonly maxWaiting = Number.POSITIVE_INFINITY,
  ) {}

  /** Tasks running and waiting now (the metrics' gauges). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.capacity) {
      if (this.waiting.length >= this.maxWaiting) {
        throw new ApiError(503, 'TEMPORARILY_UNAVAILABLE', 'the server is busy; try again shortly');
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}
