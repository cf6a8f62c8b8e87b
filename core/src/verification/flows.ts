import type { Clock, JsonObject, MethodCompletion } from '@gatehouse-auth/plugin-api';
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
  /** Ids of the methods completed in this login (carried from a session, then its stages). */
  methods: string[];
  /** The same, with when each was completed: what a browser session keeps. */
  completions: MethodCompletion[];
  status: FlowStatus;
  authTime: Date | null;
  /** The request that started the flow (OAuth authorization parameters). */
  params: JsonObject;
  expiresAt: Date;
}

/**
 * Why a flow takes no more steps, as the verification API says it, or null while it is live. A
 * completed login is complete (409) even past its expiry; a cancelled or expired one has expired
 * (410). The verification service and method set-up answer alike.
 */
export function flowClosedReason(flow: LoginFlow, now: Date): 'REQUEST_COMPLETED' | 'REQUEST_EXPIRED' | null {
  if (flow.status === 'completed' || flow.status === 'finished') return 'REQUEST_COMPLETED';
  if (flow.status !== 'active' || flow.expiresAt <= now) return 'REQUEST_EXPIRED';
  return null;
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

/**
 * The `methods` column: completions, or (rows written before completions were kept) bare ids,
 * read as completed at the flow's auth time.
 */
function parseCompletions(text: string, authTime: unknown): MethodCompletion[] {
  const at = authTime === null ? 0 : Math.floor(num(authTime) / 1000);
  return parseJson<(string | MethodCompletion)[]>(text).map((m) =>
    typeof m === 'string' ? { method: m, amr: [], at } : m,
  );
}

function toFlow(r: FlowRow): LoginFlow {
  const completions = parseCompletions(r.methods, r.auth_time);
  return {
    id: r.id,
    clientId: r.client_id,
    userId: r.user_id,
    stage: num(r.stage),
    stages: parseJson<string[][]>(r.stages),
    amr: parseJson<string[]>(r.amr),
    methods: completions.map((c) => c.method),
    completions,
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
  /** Methods a browser session already completed for this user; they count as done here. */
  carried?: MethodCompletion[];
}

export class LoginFlowStore {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  /**
   * A new flow. With carried methods and no stages left it starts completed, its auth time the
   * latest carried completion (single sign-on).
   */
  async create(input: NewFlow): Promise<LoginFlow> {
    const now = this.clock.now().getTime();
    const id = randomToken(24);
    const carried = input.carried ?? [];
    const done = carried.length > 0 && input.stages.length === 0;
    await this.sql.exec(
      `INSERT INTO login_flows (id, client_id, user_id, stage, stages, amr, methods, status, auth_time, params,
         created_at, updated_at, expires_at)
       VALUES (:id, :clientId, :userId, 0, :stages, :amr, :methods, :status, :authTime, :params, :now, :now, :expires)`,
      {
        id,
        clientId: input.clientId,
        userId: input.userId ?? null,
        stages: JSON.stringify(input.stages),
        amr: JSON.stringify([...new Set(carried.flatMap((c) => c.amr))]),
        methods: JSON.stringify(carried),
        status: done ? 'completed' : 'active',
        authTime: carried.length ? Math.max(...carried.map((c) => c.at)) * 1000 : null,
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

  /**
   * Binds an unclaimed flow (one an app's login UI generated) to a browser, once: a compare-and-set
   * on its params, so of two concurrent claims exactly one wins. A claim made from another site
   * (`crossSite`) is kept in `claimed_cross_site`: such a login makes no SSO session.
   */
  async claim(id: string, bindingHash: string, from: { crossSite: boolean }): Promise<boolean> {
    const row = await this.sql.one<{ params: string }>('SELECT params FROM login_flows WHERE id = :id', { id });
    if (!row) return false;
    const params = parseJson<JsonObject>(row.params);
    if (params.unclaimed !== true || typeof params.binding === 'string') return false;
    const { unclaimed: _claimed, ...rest } = params;
    return this.sql.changed(
      'UPDATE login_flows SET params = :next, updated_at = :now WHERE id = :id AND params = :old RETURNING id',
      {
        id,
        old: row.params,
        next: JSON.stringify({
          ...rest,
          binding: bindingHash,
          ...(from.crossSite ? { claimed_cross_site: true } : {}),
        }),
        now: this.clock.now().getTime(),
      },
    );
  }

  /** Counts one initiation against the flow's budget; false once `max` were made. */
  async reserveInitiation(id: string, max: number): Promise<boolean> {
    return this.sql.changed(
      'UPDATE login_flows SET initiations = initiations + 1 WHERE id = :id AND initiations < :max RETURNING id',
      { id, max },
    );
  }

  /** active → cancelled (the user went back to the app), once. */
  async cancel(id: string): Promise<boolean> {
    return this.sql.changed(
      `UPDATE login_flows SET status = 'cancelled', updated_at = :now WHERE id = :id AND status = 'active' RETURNING id`,
      { id, now: this.clock.now().getTime() },
    );
  }

  /** completed → finished, once: exactly one response (code or token) per login. */
  async finish(id: string): Promise<boolean> {
    return this.sql.changed(
      `UPDATE login_flows SET status = 'finished', updated_at = :now WHERE id = :id AND status = 'completed' RETURNING id`,
      { id, now: this.clock.now().getTime() },
    );
  }

  /**
   * Moves the flow past `fromStage` once: a conditional update on the stage number, so two
   * concurrent continuations cannot both advance it.
   */
  async advance(
    flow: LoginFlow,
    fromStage: number,
    change: { userId: string; method: string; amr: string[]; extraStage?: string[] | null; alone?: boolean },
  ): Promise<LoginFlow | null> {
    const now = this.clock.now().getTime();
    // A proof that completes the login alone leaves no stage after its own.
    const stages = change.alone
      ? flow.stages.slice(0, fromStage + 1)
      : change.extraStage
        ? [...flow.stages, change.extraStage]
        : flow.stages;
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
        methods: JSON.stringify([
          ...flow.completions,
          {
            method: change.method,
            amr: change.amr,
            at: Math.floor(now / 1000),
            ...(change.alone ? { alone: true } : {}),
          },
        ]),
        status: done ? 'completed' : 'active',
        now,
      },
    );
    return rows.length ? this.get(flow.id) : null;
  }

  /**
   * A flow at its first stage with no user gets the user a registration just made, with the
   * methods it counts as done: `stages` reordered so the stages they completed come first, and
   * `stage` past them. Conditional, so it happens once and never to a flow a stage moved on.
   */
  async register(
    flow: LoginFlow,
    change: { userId: string; stages: string[][]; stage: number; completions: MethodCompletion[] },
  ): Promise<LoginFlow | null> {
    const now = this.clock.now().getTime();
    const done = change.stage >= change.stages.length;
    const rows = await this.sql.write(
      `UPDATE login_flows SET stage = :stage, user_id = :userId, stages = :stages, amr = :amr, methods = :methods,
         status = :status, auth_time = :now, updated_at = :now
       WHERE id = :id AND stage = 0 AND user_id IS NULL AND status = 'active' AND expires_at > :now
       RETURNING id`,
      {
        id: flow.id,
        stage: change.stage,
        userId: change.userId,
        stages: JSON.stringify(change.stages),
        amr: JSON.stringify([...new Set(change.completions.flatMap((c) => c.amr))]),
        methods: JSON.stringify(change.completions),
        status: done ? 'completed' : 'active',
        now,
      },
    );
    return rows.length ? this.get(flow.id) : null;
  }
}
