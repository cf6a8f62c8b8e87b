import type { Clock, JsonObject } from '@gatehouse-auth/plugin-api';
import { num, parseJson, type Sql } from '../storage/sql.js';
import { sha256 } from '../util/crypto.js';

/** One initiated method: the `exchange_id` the caller must present with its proof. */
export interface Exchange {
  key: string;
  flowId: string;
  statusKey: string;
  userId: string | null;
  method: string;
  stage: number;
  attempts: number;
  maxAttempts: number;
  state: JsonObject;
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
  revokedReason: string | null;
  /** The device a push went to (device methods). */
  mediumId: string | null;
  /** The status_id, encrypted, for exchanges whose id a device step rotates. */
  statusSeal: string | null;
}

interface ExchangeRow {
  id: string;
  flow_id: string;
  status_id: string;
  user_id: string | null;
  method: string;
  stage: unknown;
  attempts: unknown;
  max_attempts: unknown;
  state: string;
  expires_at: unknown;
  used_at: unknown;
  revoked_at: unknown;
  revoked_reason: string | null;
  medium_id: string | null;
  status_seal: string | null;
}

const toExchange = (r: ExchangeRow): Exchange => ({
  key: r.id,
  flowId: r.flow_id,
  statusKey: r.status_id,
  userId: r.user_id,
  method: r.method,
  stage: num(r.stage),
  attempts: num(r.attempts),
  maxAttempts: num(r.max_attempts),
  state: parseJson<JsonObject>(r.state),
  expiresAt: new Date(num(r.expires_at)),
  usedAt: r.used_at === null ? null : new Date(num(r.used_at)),
  revokedAt: r.revoked_at === null ? null : new Date(num(r.revoked_at)),
  revokedReason: r.revoked_reason,
  mediumId: r.medium_id ?? null,
  statusSeal: r.status_seal ?? null,
});

export interface NewExchange extends Pick<
  Exchange,
  'flowId' | 'statusKey' | 'userId' | 'method' | 'stage' | 'maxAttempts' | 'expiresAt'
> {
  /** The exchange_id handed to the caller (random, ≥256 bits); stored as its hash. */
  id: string;
  mediumId?: string | null;
  statusSeal?: string | null;
  /** The state it starts with (`{}` by default). */
  state?: JsonObject;
}

/**
 * Exchanges are stored under the SHA-256 of their id. Every state change is a conditional
 * update, so single use and attempt limits hold across concurrent requests and nodes.
 */
export class ExchangeStore {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  /**
   * Creates an exchange. A resend (same flow, stage and method) supersedes the live one and
   * inherits its failure count, so re-initiating never resets the attempts.
   */
  async create(input: NewExchange): Promise<Exchange> {
    const now = this.clock.now().getTime();
    const key = sha256(input.id);
    const same = 'flow_id = :flowId AND stage = :stage AND method = :method';
    // One statement: the new exchange inherits the highest failure count of its unused
    // predecessors, and starts burned if that count already spent the budget.
    const [created] = await this.sql.write<ExchangeRow>(
      `INSERT INTO exchanges (id, flow_id, status_id, user_id, method, stage, attempts, max_attempts, state,
         created_at, expires_at, used_at, revoked_at, revoked_reason, medium_id, status_seal)
       SELECT CAST(:key AS VARCHAR(64)), CAST(:flowId AS VARCHAR(64)), CAST(:statusKey AS VARCHAR(64)),
         CAST(:userId AS VARCHAR(36)), CAST(:method AS VARCHAR(32)), CAST(:stage AS INTEGER), p.attempts,
         CAST(:maxAttempts AS INTEGER), CAST(:state AS TEXT), CAST(:now AS BIGINT), CAST(:expires AS BIGINT), NULL,
         CASE WHEN p.attempts >= CAST(:maxAttempts AS INTEGER) THEN CAST(:now AS BIGINT) END,
         CASE WHEN p.attempts >= CAST(:maxAttempts AS INTEGER) THEN 'attempts' END,
         CAST(:mediumId AS VARCHAR(128)), CAST(:statusSeal AS TEXT)
       FROM (SELECT COALESCE(MAX(attempts), 0) AS attempts FROM exchanges WHERE ${same} AND used_at IS NULL) p
       RETURNING *`,
      // (The casts give PostgreSQL's prepared statements a type for each bare parameter.)
      {
        ...input,
        key,
        now,
        expires: input.expiresAt.getTime(),
        mediumId: input.mediumId ?? null,
        statusSeal: input.statusSeal ?? null,
        state: JSON.stringify(input.state ?? {}),
      },
    );
    // Supersede every other live one. Two resends racing may revoke each other; the caller
    // then resends again, which is the safe side.
    await this.sql.exec(
      `UPDATE exchanges SET revoked_at = :now, revoked_reason = 'superseded'
       WHERE ${same} AND used_at IS NULL AND revoked_at IS NULL AND id <> :key`,
      { ...input, key, now },
    );
    return toExchange(created!);
  }

  /** When the flow's stage last initiated this method (ms), or null: the resend interval counts from it. */
  async lastCreatedAt(flowId: string, stage: number, method: string): Promise<number | null> {
    const row = await this.sql.one<{ last: number | string | null }>(
      // An initiation that sent nothing (a refused or failed send) starts no interval.
      `SELECT MAX(created_at) AS last FROM exchanges WHERE flow_id = :flowId AND stage = :stage AND method = :method
         AND (revoked_reason IS NULL OR revoked_reason <> 'initiation_failed')`,
      { flowId, stage, method },
    );
    return row?.last === null || row?.last === undefined ? null : Number(row.last);
  }

  async find(id: string): Promise<Exchange | null> {
    const row = await this.sql.one<ExchangeRow>('SELECT * FROM exchanges WHERE id = :key', { key: sha256(id) });
    return row ? toExchange(row) : null;
  }

  async setState(key: string, state: JsonObject): Promise<void> {
    await this.sql.exec('UPDATE exchanges SET state = :state WHERE id = :key', { key, state: JSON.stringify(state) });
  }

  /** Ties an exchange to the device its push went to. */
  async setMedium(key: string, mediumId: string): Promise<void> {
    await this.sql.exec('UPDATE exchanges SET medium_id = :mediumId WHERE id = :key', { key, mediumId });
  }

  /**
   * Gives a live exchange a new id and retires the old one (a device step answers a new
   * exchange_id). Returns the new key, or null when the exchange was used, revoked, expired or
   * rotated by a concurrent step: the conditional update picks one winner.
   */
  async rotate(key: string, newId: string): Promise<string | null> {
    const now = this.clock.now().getTime();
    const newKey = sha256(newId);
    const rows = await this.sql.write(
      `UPDATE exchanges SET id = :newKey
       WHERE id = :key AND used_at IS NULL AND revoked_at IS NULL AND expires_at > :now
       RETURNING id`,
      { key, newKey, now },
    );
    return rows.length ? newKey : null;
  }

  /** Live exchanges of pushes to one device, oldest first. */
  async liveForMedium(mediumId: string): Promise<Exchange[]> {
    const rows = await this.sql.select<ExchangeRow>(
      `SELECT * FROM exchanges
       WHERE medium_id = :mediumId AND used_at IS NULL AND revoked_at IS NULL AND expires_at > :now
       ORDER BY created_at LIMIT 20`,
      { mediumId, now: this.clock.now().getTime() },
    );
    return rows.map(toExchange);
  }

  /** Revokes every live exchange of one device (it was removed); returns their status keys. */
  async revokeForMedium(mediumId: string, reason: string): Promise<string[]> {
    const rows = await this.sql.write<{ status_id: string }>(
      `UPDATE exchanges SET revoked_at = :now, revoked_reason = :reason
       WHERE medium_id = :mediumId AND used_at IS NULL AND revoked_at IS NULL
       RETURNING status_id`,
      { mediumId, reason, now: this.clock.now().getTime() },
    );
    return rows.map((r) => r.status_id);
  }

  /**
   * Spends one attempt before the proof is checked, atomically: the attempts left after it, or
   * null when the budget is gone (or the exchange was used or revoked meanwhile), so parallel
   * guesses cannot exceed it.
   */
  async reserveAttempt(key: string): Promise<number | null> {
    const rows = await this.sql.write<{ attempts: number | string; max_attempts: number | string }>(
      `UPDATE exchanges SET attempts = attempts + 1
       WHERE id = :key AND used_at IS NULL AND revoked_at IS NULL AND attempts < max_attempts
       RETURNING attempts, max_attempts`,
      { key },
    );
    const row = rows[0];
    return row ? Number(row.max_attempts) - Number(row.attempts) : null;
  }

  /** After a wrong proof: burns the exchange once its budget is spent. */
  async burnIfSpent(key: string): Promise<void> {
    await this.sql.exec(
      `UPDATE exchanges SET revoked_at = :now, revoked_reason = 'attempts'
       WHERE id = :key AND revoked_at IS NULL AND used_at IS NULL AND attempts >= max_attempts`,
      { key, now: this.clock.now().getTime() },
    );
  }

  async revoke(key: string, reason: string): Promise<void> {
    await this.sql.exec(
      `UPDATE exchanges SET revoked_at = :now, revoked_reason = :reason WHERE id = :key AND revoked_at IS NULL`,
      { key, reason, now: this.clock.now().getTime() },
    );
  }

  /** Turns an exchange into a phantom: at the first stage a refusal must look like an unknown user. */
  async forgetUser(key: string): Promise<void> {
    await this.sql.exec('UPDATE exchanges SET user_id = NULL WHERE id = :key', { key });
  }

  /** Single use: true for exactly one caller, and only while unexpired and not revoked. */
  async consume(key: string): Promise<boolean> {
    const now = this.clock.now().getTime();
    return this.sql.changed(
      `UPDATE exchanges SET used_at = :now
       WHERE id = :key AND used_at IS NULL AND revoked_at IS NULL AND expires_at > :now
       RETURNING id`,
      { key, now },
    );
  }
}
