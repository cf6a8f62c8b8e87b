import type { JsonObject } from '../plugins/extensions.js';
import type { Clock } from '../services.js';
import { num, parseJson, type Sql } from '../storage/sql.js';
import { randomToken } from '../util/crypto.js';

/** active → completed (every stage done) → finished (the client got its answer, once). */
export type FlowStatus = 'active' | 'completed' | 'finished' | 'cancelled';

/** A login in progress (the `request_id`): which app, which user, which stage. */
export interface LoginFlow {
  id: string;
  clientId: string;
  userId: string | null;
  /** Index into `stages` of the stage to complete next. */
  stage: number;
  /** Methods allowed per stage, copied from the app when the flow starts; FDS may append one. */
  stages: string[][];
  amr: string[];
  methods: string[];
  status: FlowStatus;
  authTime: Date | null;
  /** The request that started the flow (OAuth authorization parameters). */
  params: JsonObject;
  expiresAt: Date;
}

interface FlowRow {
  id: string;
  client_id: string;
  user_id: string | null;
  stage: unknown;
  stages: string;
  amr: string;
  methods: string;
  status: FlowStatus;
  auth_time: unknown;
  params: string;
  expires_at: unknown;
}

function toFlow(r: FlowRow): LoginFlow {
  return {
    id: r.id,
    clientId: r.client_id,
    userId: r.user_id,
    stage: num(r.stage),
    stages: parseJson<string[][]>(r.stages),
    amr: parseJson<string[]>(r.amr),
    methods: parseJson<string[]>(r.methods),
    status: r.status,
    authTime: r.auth_time === null ? null : new Date(num(r.auth_time)),
    params: parseJson<JsonObject>(r.params),
    expiresAt: new Date(num(r.expires_at)),
  };
}

export interface NewFlow {
  clientId: string;
  stages: string[][];
  params?: JsonObject;
  ttlSeconds: number;
  /** A user already known (e.g. from a session); otherwise the first stage identifies them. */
  userId?: string | null;
}

export class LoginFlowStore {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async create(input: NewFlow): Promise<LoginFlow> {
    const now = this.clock.now().getTime();
    const id = randomToken(24);
    await this.sql.exec(
      `INSERT INTO login_flows (id, client_id, user_id, stage, stages, amr, methods, status, auth_time, params,
         created_at, updated_at, expires_at)
       VALUES (:id, :clientId, :userId, 0, :stages, '[]', '[]', 'active', NULL, :params, :now, :now, :expires)`,
      {
        id,
        clientId: input.clientId,
        userId: input.userId ?? null,
        stages: JSON.stringify(input.stages),
        params: JSON.stringify(input.params ?? {}),
        now,
        expires: now + input.ttlSeconds * 1000,
      },
    );
    return (await this.get(id))!;
  }

  async get(id: string): Promise<LoginFlow | null> {
    const row = await this.sql.one<FlowRow>('SELECT * FROM login_flows WHERE id = :id', { id });
    return row ? toFlow(row) : null;
  }

  /** completed → finished, once: exactly one response (code or token) per login. */
  async finish(id: string): Promise<boolean> {
    const rows = await this.sql.write(
      `UPDATE login_flows SET status = 'finished', updated_at = :now WHERE id = :id AND status = 'completed' RETURNING id`,
      { id, now: this.clock.now().getTime() },
    );
    return rows.length > 0;
  }

  /** Marks a flow completed without stages (an existing session satisfied the request). */
  async completeWithSession(id: string, userId: string, authTime: Date, amr: string[]): Promise<void> {
    await this.sql.exec(
      `UPDATE login_flows SET status = 'completed', user_id = :userId, auth_time = :authTime, amr = :amr, updated_at = :now
       WHERE id = :id AND status = 'active'`,
      { id, userId, authTime: authTime.getTime(), amr: JSON.stringify(amr), now: this.clock.now().getTime() },
    );
  }

  /**
   * Moves the flow past `fromStage` once: a conditional update on the stage number, so two
   * concurrent continuations cannot both advance it.
   */
  async advance(
    flow: LoginFlow,
    fromStage: number,
    change: { userId: string; method: string; amr: string[]; extraStage?: string[] | null },
  ): Promise<LoginFlow | null> {
    const now = this.clock.now().getTime();
    const stages = change.extraStage ? [...flow.stages, change.extraStage] : flow.stages;
    const next = fromStage + 1;
    const done = next >= stages.length;
    const rows = await this.sql.write(
      `UPDATE login_flows SET stage = :next, user_id = :userId, stages = :stages, amr = :amr, methods = :methods,
         status = :status, auth_time = :now, updated_at = :now
       WHERE id = :id AND stage = :fromStage AND status = 'active' AND expires_at > :now
         AND (user_id IS NULL OR user_id = :userId)
       RETURNING id`,
      {
        id: flow.id,
        fromStage,
        next,
        userId: change.userId,
        stages: JSON.stringify(stages),
        amr: JSON.stringify([...new Set([...flow.amr, ...change.amr])]),
        methods: JSON.stringify([...flow.methods, change.method]),
        status: done ? 'completed' : 'active',
        now,
      },
    );
    return rows.length ? this.get(flow.id) : null;
  }
}
