import type { Clock } from '@gatehouse-auth/plugin-api';
import type { Logger } from 'pino';
import type { GatehouseConfig } from './config/schema.js';
import type { Sql } from './storage/sql.js';

export interface PurgeOptions {
  /** Rows deleted per statement: small enough that no request waits long for the lock. */
  batchSize: number;
  /** Statements per table and run, so one run is bounded too. */
  maxBatches: number;
  eventRetentionDays: number;
}

/** What expires where. Single-use rows stay until they expire, so a replay is still recognised. */
function targets(
  now: number,
  eventCutoff: number,
): { table: string; key: string; where: string; params: Record<string, number> }[] {
  const expired = { now };
  return [
    { table: 'oauth_codes', key: 'id', where: 'expires_at < :now', params: expired },
    { table: 'oauth_tokens', key: 'id', where: 'expires_at < :now', params: expired },
    // A grant outlives its refresh tokens by a day so a late replay still finds the family.
    { table: 'oauth_grants', key: 'id', where: 'expires_at < :graceNow', params: { graceNow: now - 86_400_000 } },
    { table: 'oauth_assertions', key: 'id', where: 'expires_at < :now', params: expired },
    { table: 'sessions', key: 'id', where: 'expires_at < :now', params: expired },
    { table: 'session_clients', key: 'sid', where: 'expires_at < :now', params: expired },
    { table: 'rate_windows', key: 'key', where: 'expires_at < :now', params: expired },
    { table: 'token_invalidations', key: 'id', where: 'expires_at < :now', params: expired },
    { table: 'exchanges', key: 'id', where: 'expires_at < :now', params: expired },
    { table: 'verification_statuses', key: 'id', where: 'expires_at < :now', params: expired },
    { table: 'login_flows', key: 'id', where: 'expires_at < :now', params: expired },
    { table: 'plugin_records', key: 'key', where: 'expires_at IS NOT NULL AND expires_at < :now', params: expired },
    { table: 'events', key: 'id', where: 'at < :cutoff', params: { cutoff: eventCutoff } },
    // Jobs given up stay a day past their expiry, for whoever investigates.
    { table: 'jobs', key: 'id', where: 'expires_at < :graceNow', params: { graceNow: now - 86_400_000 } },
  ];
}

/**
 * Deletes expired codes, tokens, grants, exchanges, statuses, flows, sessions and records, and
 * events past their retention, in bounded batches with a pause between them. Safe to run on
 * every node at once: each statement is idempotent.
 */
export async function purgeExpired(sql: Sql, clock: Clock, opts: PurgeOptions): Promise<Record<string, number>> {
  const now = clock.now().getTime();
  const removed: Record<string, number> = {};
  for (const t of targets(now, now - opts.eventRetentionDays * 86_400_000)) {
    let total = 0;
    for (let batch = 0; batch < opts.maxBatches; batch++) {
      const rows = await sql.write(
        `DELETE FROM ${t.table} WHERE ${t.where} AND ${t.key} IN
           (SELECT ${t.key} FROM ${t.table} WHERE ${t.where} LIMIT :batchSize)
         RETURNING ${t.key}`,
        { ...t.params, batchSize: opts.batchSize },
      );
      total += rows.length;
      if (rows.length < opts.batchSize) break;
      await new Promise((resolve) => setImmediate(resolve)); // let requests in between batches
    }
    if (total) removed[t.table] = total;
  }
  return removed;
}

/**
 * Runs the purge every `maintenance.purge_interval_seconds` in the background, or not at all when
 * that is 0; stop() waits for a run in progress.
 */
export function startPurgeJob(
  sql: Sql,
  clock: Clock,
  logger: Logger,
  maintenance: GatehouseConfig['maintenance'],
): { stop(): Promise<void> } | null {
  if (maintenance.purge_interval_seconds === 0) return null;
  const opts: PurgeOptions = {
    batchSize: maintenance.purge_batch_size,
    maxBatches: maintenance.purge_max_batches,
    eventRetentionDays: maintenance.event_retention_days,
  };
  let running: Promise<void> | null = null;
  const run = () => {
    if (running) return;
    running = purgeExpired(sql, clock, opts)
      .then((removed) => {
        if (Object.keys(removed).length) logger.info({ removed }, 'purged expired rows');
      })
      .catch((err: unknown) => logger.error({ err }, 'purge failed'))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(run, maintenance.purge_interval_seconds * 1000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
