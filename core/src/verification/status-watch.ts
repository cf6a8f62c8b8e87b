import type { StatusStore, VerificationStatus } from './statuses.js';

/** Long polls waiting at once on one node; past this a request is answered at once (the page then polls). */
const MAX_WAITERS = 2000;
/** How often a waiting request looks again: a change made by another node is seen within this. */
const RECHECK_MS = 1000;

/**
 * Long polling of a verification status (the login page waiting on a push): a request holds
 * until the status is no longer in the state the page knows, or its time is up. A change made
 * on this node wakes it at once; one made on another node is seen at the next recheck.
 */
export class StatusWatch {
  private waiting = 0;

  constructor(
    private readonly statuses: StatusStore,
    /** True once the server drains: held requests answer so it can stop. */
    private readonly draining: () => boolean,
  ) {}

  /** The status once it differs from `known` (by `view`), or as it is when `maxMs` runs out. */
  async until(
    id: string,
    known: string,
    view: (status: VerificationStatus) => string,
    maxMs: number,
  ): Promise<VerificationStatus | null> {
    let status = await this.statuses.find(id);
    if (!status || view(status) !== known || maxMs <= 0 || this.waiting >= MAX_WAITERS) return status;
    const key = status.key;
    const deadline = Date.now() + maxMs;
    this.waiting++;
    try {
      while (status && view(status) === known && Date.now() < deadline && !this.draining()) {
        await this.nextChange(key, Math.min(RECHECK_MS, deadline - Date.now()));
        status = await this.statuses.find(id);
      }
      return status;
    } finally {
      this.waiting--;
    }
  }

  private nextChange(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.statuses.changes.off('change', onChange);
        resolve();
      };
      const onChange = (changed: string) => {
        if (changed === key) done();
      };
      const timer = setTimeout(done, ms);
      this.statuses.changes.on('change', onChange);
    });
  }
}
