import type { Clock, SharedCounters } from '@gatehouse-auth/plugin-api';
import { num, type Sql } from '../storage/sql.js';
import { sha256 } from '../util/crypto.js';
import { WindowLimiter } from '../http/rate-limit.js';

export type { SharedCounters } from '@gatehouse-auth/plugin-api';

/**
 * What the core's limits count with: the `sharedCounters` service (decision 72) looked up at the
 * first hit (a request, so after every plugin registered), keys hashed whichever store keeps them.
 */
export function currentCounters(current: () => SharedCounters): Pick<SharedCounters, 'hit'> {
  let counters: SharedCounters | undefined;
  return { hit: (key, windowMs) => (counters ??= current()).hit(storedKey(key), windowMs) };
}

/** The `rate_windows` table: an upsert that restarts an ended window and counts in a live one. */
export class DatabaseCounters implements SharedCounters {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async hit(key: string, windowMs: number): Promise<{ count: number; resetsAt: number }> {
    const now = this.clock.now().getTime();
    const [row] = await this.sql.write<{ count: unknown; expires_at: unknown }>(
      `INSERT INTO rate_windows (key, count, expires_at) VALUES (:key, 1, :end)
       ON CONFLICT (key) DO UPDATE SET
         count = CASE WHEN rate_windows.expires_at <= :now THEN 1 ELSE rate_windows.count + 1 END,
         expires_at = CASE WHEN rate_windows.expires_at <= :now THEN :end ELSE rate_windows.expires_at END
       RETURNING count, expires_at`,
      { key, now, end: now + windowMs },
    );
    return { count: num(row!.count), resetsAt: num(row!.expires_at) };
  }

  async close(): Promise<void> {}
}

/** Keys may hold addresses and user ids: stored hashed, and short. */
export function storedKey(key: string): string {
  const colon = key.indexOf(':');
  return `${colon > 0 ? key.slice(0, Math.min(colon, 40)) : 'k'}:${sha256(key)}`;
}

/**
 * A per-key limit held across nodes. This node's own count goes first: a key it already refuses
 * costs no round trip (its count never exceeds the shared one).
 */
export class SharedLimit {
  private readonly local: WindowLimiter;

  constructor(
    private readonly counters: Pick<SharedCounters, 'hit'>,
    private readonly name: string,
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly clock: Clock,
  ) {
    this.local = new WindowLimiter(limit, windowMs, () => clock.now().getTime());
  }

  /** Counts one hit: null when allowed, else the seconds until the key may try again. */
  async hit(key: string): Promise<number | null> {
    const local = this.local.hit(key);
    if (local !== null) return local;
    const { count, resetsAt } = await this.counters.hit(`${this.name}:${key}`, this.windowMs);
    if (count <= this.limit) return null;
    return Math.max(1, Math.ceil((resetsAt - this.clock.now().getTime()) / 1000));
  }
}
