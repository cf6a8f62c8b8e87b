import type { Clock, Invalidation } from '@gatehouse-auth/plugin-api';
import type { Logger } from 'pino';
import type { Sql } from '../storage/sql.js';
import { randomToken } from '../util/crypto.js';
import type { ActiveTokenCache } from './token-cache.js';

const POLL_PAGE = 1000;

/**
 * Revocations that reach a SQLite node's token cache through the database (decision 0089). The
 * peer bus carries a revocation to the processes it connects (a cluster's workers), but not to a
 * command run from a shell on the same file (`gatehouse apps delete`): its revocation was in the
 * database while every node kept answering the app's cached tokens as active for up to
 * `max_age_seconds`. So on SQLite every revocation is also written to `token_invalidations`,
 * and each node reads, every `poll_seconds`, the rows after the last it read. SQLite has one
 * writer at a time, so ids commit in order and "after the last id" misses nothing. PostgreSQL
 * nodes and commands share the peer bus's LISTEN/NOTIFY channel and need none of this.
 */
export class InvalidationLog {
  /** This process's rows, which its own cache applied when it wrote them. */
  private readonly origin = randomToken(12);
  private last = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;

  constructor(
    private readonly deps: {
      sql: Sql;
      clock: Clock;
      cache: ActiveTokenCache;
      logger: Logger;
      /** 0: off. */
      pollMs: number;
      /** No cache entry is older: a row past it has nothing left to drop. */
      keepMs: number;
    },
  ) {}

  private get enabled(): boolean {
    return this.deps.sql.dialect === 'sqlite' && this.deps.pollMs > 0;
  }

  /** Writes a revocation for the other processes on this file (after it is in the database). */
  async record(what: Invalidation): Promise<void> {
    if (!this.enabled) return;
    await this.deps.sql.write(
      'INSERT INTO token_invalidations (origin, data, expires_at) VALUES (:origin, :data, :expiresAt)',
      {
        origin: this.origin,
        data: JSON.stringify(what),
        expiresAt: this.deps.clock.now().getTime() + this.deps.keepMs,
      },
    );
  }

  /**
   * From the newest row on: what came before is in the database the cache reads from. A file not
   * migrated yet (a test that migrates after building) has no rows: every row is new then.
   */
  async start(): Promise<void> {
    if (!this.enabled || this.timer) return;
    const newest = await this.deps.sql
      .one<{ id: number | null }>('SELECT MAX(id) AS id FROM token_invalidations')
      .catch(() => null);
    this.last = Number(newest?.id ?? 0);
    this.timer = setInterval(() => {
      this.polling ??= this.poll()
        .catch((err: unknown) => this.failed(err))
        .finally(() => (this.polling = undefined));
    }, this.deps.pollMs);
    this.timer.unref();
  }

  private warnedAt = 0;

  /** Until a read succeeds, the cache holds nothing it might serve after a revocation. */
  private failed(err: unknown): void {
    this.deps.cache.clear();
    const now = this.deps.clock.now().getTime();
    if (now - this.warnedAt < 60_000) return;
    this.warnedAt = now;
    this.deps.logger.warn({ err }, 'reading token revocations failed: the token cache is emptied until it works');
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.polling;
  }

  /** Applies the rows after the last one read (other processes' only), in pages, until none is left. */
  async poll(): Promise<void> {
    for (;;) {
      const rows = await this.deps.sql.select<{ id: number; origin: string; data: string }>(
        'SELECT id, origin, data FROM token_invalidations WHERE id > :last ORDER BY id LIMIT :page',
        { last: this.last, page: POLL_PAGE },
      );
      for (const row of rows) {
        if (row.origin !== this.origin) this.deps.cache.invalidate(JSON.parse(row.data) as Invalidation);
        this.last = Number(row.id);
      }
      // More revocations a second than a page must not leave the reader behind for good.
      if (rows.length < POLL_PAGE) return;
    }
  }
}
