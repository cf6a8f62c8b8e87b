import type http from 'node:http';

/**
 * Requests whose handler has not answered yet. A handler's end is the `res.end` call (every
 * route, the fast routes and the error handler answer through it), not the socket closing: a
 * connection cut at shutdown leaves its handler running — waiting for the hashing queue, say —
 * and that handler still writes to the database when it resumes.
 */
export class InFlightHandlers {
  private readonly open = new Set<http.ServerResponse>();
  private waiters: (() => void)[] = [];

  /** Starts tracking a request; call from the server's 'request' event. */
  track(res: http.ServerResponse): void {
    this.open.add(res);
    const end = res.end;
    res.end = ((...args: Parameters<typeof end>) => {
      this.done(res);
      return end.apply(res, args);
    }) as typeof end;
    // A response node finished without the handler's end (a HEAD auto-reply, say) counts too.
    res.once('finish', () => this.done(res));
  }

  get size(): number {
    return this.open.size;
  }

  /** Resolves true once no handler is running, or false when `timeoutMs` passes first. */
  settled(timeoutMs: number): Promise<boolean> {
    if (this.open.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve(false);
      }, timeoutMs);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(wake);
    });
  }

  private done(res: http.ServerResponse): void {
    if (!this.open.delete(res) || this.open.size > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
