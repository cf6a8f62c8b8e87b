import type { BackgroundJob, Clock, EventLog, JsonObject } from '@gatehouse-auth/plugin-api';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { num, parseJson, type Sql } from '../storage/sql.js';
import type { SecretBox } from '../util/crypto.js';

/** What runs a job of one kind (the contract's, plugins register theirs with `api.job`). */
export type JobHandler = BackgroundJob;

export interface NewJob {
  kind: string;
  payload: JsonObject;
  /** Past this, the job is given up even with attempts left (a code that has expired). */
  expiresAt: Date;
}

interface JobRow {
  id: string;
  kind: string;
  payload: string;
  attempts: unknown;
  max_attempts: unknown;
  expires_at: unknown;
}

/** How long a claimed job is someone's before another node may take it over. */
const LEASE_MS = 60_000;
/** Jobs claimed per pass. */
const BATCH = 20;

/**
 * Durable background jobs: `enqueue` stores the job (payload encrypted) and starts it at once in
 * this process; failures are retried with growing waits (2 s, 4 s, 8 s… at most a minute) by
 * the poller that `start` runs, on any node. Exactly one node runs a job at a time: a claim is
 * a conditional update. A job that succeeded is deleted; one given up stays (status `failed`)
 * until the purge, and both outcomes are events.
 */
export class JobQueue {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly deps: { sql: Sql; clock: Clock; secretBox: SecretBox; events: EventLog; logger: Logger },
  ) {}

  register(handler: JobHandler): void {
    if (this.handlers.has(handler.kind)) throw new Error(`a job handler for "${handler.kind}" is registered already`);
    this.handlers.set(handler.kind, handler);
  }

  /** Stores a job durably and starts it in the background; resolves once stored. */
  async enqueue(job: NewJob): Promise<void> {
    const handler = this.handlers.get(job.kind);
    if (!handler) throw new Error(`no job handler for "${job.kind}"`);
    const now = this.deps.clock.now().getTime();
    await this.deps.sql.exec(
      `INSERT INTO jobs (id, kind, payload, status, attempts, max_attempts, next_at, locked_until, expires_at,
         last_error, created_at)
       VALUES (:id, :kind, :payload, 'pending', 0, :max, :now, NULL, :expires, NULL, :now)`,
      {
        id: randomUUID(),
        kind: job.kind,
        payload: this.deps.secretBox.encrypt(JSON.stringify(job.payload)),
        max: handler.maxAttempts ?? 5,
        now,
        expires: job.expiresAt.getTime(),
      },
    );
    this.kick();
  }

  /** Runs due jobs soon (coalesced: one pass at a time, another if asked during it). */
  kick(): void {
    if (this.pass) {
      this.again = true;
      return;
    }
    this.pass = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.runDue())
      .catch((err: unknown) => this.deps.logger.error({ err }, 'background jobs: a pass failed'))
      .finally(() => {
        this.pass = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Polls for due jobs (retries, other nodes' leftovers) every `intervalMs`. */
  start(intervalMs = 1000): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.kick(), intervalMs);
    this.timer.unref();
  }

  /** Jobs of this process running now (the metrics' gauge). */
  get runningJobs(): number {
    return this.running.size;
  }

  /** Resolves when no pass and no job of this process is running. */
  async idle(): Promise<void> {
    while (this.pass || this.running.size) {
      await this.pass;
      await Promise.allSettled([...this.running]);
    }
  }

  /** Stops polling and waits for jobs in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.idle();
  }

  /** One pass: claims due jobs and runs them concurrently. */
  async runDue(): Promise<void> {
    const now = this.deps.clock.now().getTime();
    const due = await this.deps.sql.select<JobRow>(
      `SELECT id, kind, payload, attempts, max_attempts, expires_at FROM jobs
       WHERE status = 'pending' AND next_at <= :now AND (locked_until IS NULL OR locked_until <= :now)
       ORDER BY next_at LIMIT :batch`,
      { now, batch: BATCH },
    );
    for (const row of due) {
      const claimed = await this.deps.sql.changed(
        `UPDATE jobs SET locked_until = :until, attempts = attempts + 1
         WHERE id = :id AND status = 'pending' AND (locked_until IS NULL OR locked_until <= :now) RETURNING id`,
        { id: row.id, now, until: now + LEASE_MS },
      );
      if (!claimed) continue; // another node took it
      const run = this.runOne(row).finally(() => this.running.delete(run));
      this.running.add(run);
    }
  }

  private async runOne(row: JobRow): Promise<void> {
    const handler = this.handlers.get(row.kind);
    const attempt = num(row.attempts) + 1;
    let payload: JsonObject = {};
    let reason: string | null = null;
    try {
      if (!handler) throw new Error(`no job handler for "${row.kind}"`);
      payload = parseJson<JsonObject>(this.deps.secretBox.decrypt(row.payload));
      if (num(row.expires_at) <= this.deps.clock.now().getTime()) throw new Error('expired before it could run');
      await handler.run(payload);
    } catch (err) {
      reason = (err instanceof Error ? err.message : String(err)).slice(0, 255);
      const now = this.deps.clock.now().getTime();
      const giveUp = attempt >= num(row.max_attempts) || num(row.expires_at) <= now || !handler;
      await this.deps.sql.exec(
        `UPDATE jobs SET status = :status, next_at = :next, locked_until = NULL, last_error = :reason WHERE id = :id`,
        {
          id: row.id,
          status: giveUp ? 'failed' : 'pending',
          next: now + Math.min(60_000, 1000 * 2 ** attempt),
          reason,
        },
      );
      this.deps.logger.warn({ job: row.kind, attempt, giveUp, reason }, 'background job failed');
      if (!giveUp) return;
    }
    if (reason === null) await this.deps.sql.exec('DELETE FROM jobs WHERE id = :id', { id: row.id });
    // The outcome event: `<kind>.done` or `<kind>.failed`, about whom and what the handler says.
    const outcome = reason === null ? 'done' : 'failed';
    const about = handler?.describe?.(payload);
    await this.deps.events.record({ ...about, type: `${row.kind}.${outcome}`, outcome, reason });
  }
}
