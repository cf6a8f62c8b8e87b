import type { Clock } from '../services.js';
import { num, parseJson, type Sql } from '../storage/sql.js';
import { sha256 } from '../util/crypto.js';

export type StatusState = 'INITIATED' | 'PUSH_ACKNOWLEDGED' | 'ALLOWED' | 'DENIED' | 'CANCELLED' | 'AUTHENTICATED';

/** The record of one attempt (`status_id`); only an AUTHENTICATED one continues a login, once. */
export interface VerificationStatus {
  key: string;
  flowId: string;
  userId: string | null;
  method: string;
  stage: number;
  state: StatusState;
  amr: string[];
  stepUp: boolean;
  expiresAt: Date;
  consumedAt: Date | null;
}

interface StatusRow {
  id: string;
  flow_id: string;
  user_id: string | null;
  method: string;
  stage: unknown;
  state: StatusState;
  amr: string;
  step_up: unknown;
  expires_at: unknown;
  consumed_at: unknown;
}

const toStatus = (r: StatusRow): VerificationStatus => ({
  key: r.id,
  flowId: r.flow_id,
  userId: r.user_id,
  method: r.method,
  stage: num(r.stage),
  state: r.state,
  amr: parseJson<string[]>(r.amr),
  stepUp: r.step_up === true || r.step_up === 1 || r.step_up === '1',
  expiresAt: new Date(num(r.expires_at)),
  consumedAt: r.consumed_at === null ? null : new Date(num(r.consumed_at)),
});

export class StatusStore {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async create(input: {
    /** The status_id handed to the caller; stored as its hash. */
    id: string;
    flowId: string;
    userId: string | null;
    method: string;
    stage: number;
    expiresAt: Date;
  }): Promise<string> {
    const now = this.clock.now().getTime();
    await this.sql.exec(
      `INSERT INTO verification_statuses (id, flow_id, user_id, method, stage, state, amr, step_up, created_at,
         updated_at, expires_at, consumed_at)
       VALUES (:key, :flowId, :userId, :method, :stage, 'INITIATED', '[]', :stepUp, :now, :now, :expires, NULL)`,
      { ...input, key: sha256(input.id), stepUp: false, now, expires: input.expiresAt.getTime() },
    );
    return sha256(input.id);
  }

  async find(id: string): Promise<VerificationStatus | null> {
    const row = await this.sql.one<StatusRow>('SELECT * FROM verification_statuses WHERE id = :key', {
      key: sha256(id),
    });
    return row ? toStatus(row) : null;
  }

  /** INITIATED → AUTHENTICATED, with the amr earned and a short lifetime for the continuation. */
  async authenticate(key: string, amr: string[], stepUp: boolean, ttlSeconds: number): Promise<boolean> {
    const now = this.clock.now().getTime();
    const rows = await this.sql.write(
      `UPDATE verification_statuses SET state = 'AUTHENTICATED', amr = :amr, step_up = :stepUp, updated_at = :now,
         expires_at = :expires
       WHERE id = :key AND state <> 'AUTHENTICATED' AND consumed_at IS NULL
       RETURNING id`,
      { key, amr: JSON.stringify(amr), stepUp, now, expires: now + ttlSeconds * 1000 },
    );
    return rows.length > 0;
  }

  async setState(key: string, state: StatusState): Promise<void> {
    await this.sql.exec(
      `UPDATE verification_statuses SET state = :state, updated_at = :now WHERE id = :key AND consumed_at IS NULL`,
      { key, state, now: this.clock.now().getTime() },
    );
  }

  /** Single use of an AUTHENTICATED status: true for exactly one caller. */
  async consume(key: string): Promise<boolean> {
    const now = this.clock.now().getTime();
    const rows = await this.sql.write(
      `UPDATE verification_statuses SET consumed_at = :now
       WHERE id = :key AND state = 'AUTHENTICATED' AND consumed_at IS NULL AND expires_at > :now
       RETURNING id`,
      { key, now },
    );
    return rows.length > 0;
  }
}
