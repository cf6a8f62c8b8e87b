import type { Clock } from '@gatehouse-auth/plugin-api';
import { EventEmitter } from 'node:events';
import { num, parseJson, type Sql } from '../storage/sql.js';
import { sha256 } from '../util/crypto.js';

export type StatusState = 'INITIATED' | 'PUSH_ACKNOWLEDGED' | 'ALLOWED' | 'DENIED' | 'CANCELLED' | 'AUTHENTICATED';

/** The states of a verification still under way: a push step, a denial or a cancel may move it on. */
export const LIVE_STATES: readonly StatusState[] = ['INITIATED', 'PUSH_ACKNOWLEDGED', 'ALLOWED'];

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
  /** The proof completes the whole login (a single-factor method the app allows alone). */
  singleFactor: boolean;
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
  single_factor: unknown;
  expires_at: unknown;
  consumed_at: unknown;
}

const truthy = (v: unknown) => v === true || v === 1 || v === '1';

const toStatus = (r: StatusRow): VerificationStatus => ({
  key: r.id,
  flowId: r.flow_id,
  userId: r.user_id,
  method: r.method,
  stage: num(r.stage),
  state: r.state,
  amr: parseJson<string[]>(r.amr),
  stepUp: truthy(r.step_up),
  singleFactor: truthy(r.single_factor),
  expiresAt: new Date(num(r.expires_at)),
  consumedAt: r.consumed_at === null ? null : new Date(num(r.consumed_at)),
});

export class StatusStore {
  /** Emits `change` with a status key after this node changed that status (long polls wake on it). */
  readonly changes = new EventEmitter().setMaxListeners(0);

  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async create(
    input: Pick<VerificationStatus, 'flowId' | 'userId' | 'method' | 'stage' | 'expiresAt'> & {
      /** The status_id handed to the caller; stored as its hash. */
      id: string;
    },
  ): Promise<string> {
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
    return this.findByKey(sha256(id));
  }

  async findByKey(key: string): Promise<VerificationStatus | null> {
    const row = await this.sql.one<StatusRow>('SELECT * FROM verification_statuses WHERE id = :key', { key });
    return row ? toStatus(row) : null;
  }

  /**
   * → AUTHENTICATED, with the amr earned and a short lifetime for the continuation. A push
   * must have been ALLOWED on its device first (`from`); other methods go from INITIATED.
   */
  async authenticate(
    key: string,
    amr: string[],
    opts: {
      stepUp: boolean;
      singleFactor: boolean;
      ttlSeconds: number;
      from: readonly StatusState[];
      /** The user a discoverable proof named (the status had none). */
      userId?: string;
    },
  ): Promise<boolean> {
    const now = this.clock.now().getTime();
    const rows = await this.sql.write(
      `UPDATE verification_statuses SET state = 'AUTHENTICATED', amr = :amr, step_up = :stepUp,
         single_factor = :singleFactor, updated_at = :now, expires_at = :expires,
         user_id = COALESCE(user_id, :userId)
       WHERE id = :key AND state IN (${opts.from.map((s) => `'${s}'`).join(', ')}) AND consumed_at IS NULL
       RETURNING id`,
      {
        key,
        amr: JSON.stringify(amr),
        stepUp: opts.stepUp,
        singleFactor: opts.singleFactor,
        userId: opts.userId ?? null,
        now,
        expires: now + opts.ttlSeconds * 1000,
      },
    );
    return this.changed(key, rows.length > 0);
  }

  private changed(key: string, did: boolean): boolean {
    if (did) this.changes.emit('change', key);
    return did;
  }

  /** A push step: `from` one of these states to `to`; false when the state was another (one winner). */
  async transition(key: string, from: readonly StatusState[], to: StatusState): Promise<boolean> {
    const rows = await this.sql.write(
      `UPDATE verification_statuses SET state = :to, updated_at = :now
       WHERE id = :key AND state IN (${from.map((s) => `'${s}'`).join(', ')}) AND consumed_at IS NULL
       RETURNING id`,
      { key, to, now: this.clock.now().getTime() },
    );
    return this.changed(key, rows.length > 0);
  }

  /** Single use of an AUTHENTICATED status: true for exactly one caller. */
  async consume(key: string): Promise<boolean> {
    const now = this.clock.now().getTime();
    return this.sql.changed(
      `UPDATE verification_statuses SET consumed_at = :now
       WHERE id = :key AND state = 'AUTHENTICATED' AND consumed_at IS NULL AND expires_at > :now
       RETURNING id`,
      { key, now },
    );
  }
}
