import type { Clock, MethodCompletion, RequestFacts, Session, UserRecord } from '@gatehouse-auth/plugin-api';
import type { Logger } from 'pino';
import { remainingStages } from '../verification/stages.js';

/** What SSO needs of the verification service. */
export interface SsoVerifier {
  isEnrolled(
    user: UserRecord,
    method: string,
    clientId: string,
    request: RequestFacts,
    logger: Logger,
  ): Promise<boolean>;
  checkSession(
    user: UserRecord,
    clientId: string,
    request: RequestFacts,
    logger: Logger,
  ): Promise<{ action: 'allow' | 'step_up' | 'deny' }>;
  stepUpMethods(clientId: string, used: Iterable<string>): string[];
}

/**
 * What a browser session is worth to one authorization request:
 * - `none`: it signs no one in (absent, expired, idle too long, its user disabled, prompt=login,
 *   nothing recent enough for max_age, or FDS denied it): a login from the start;
 * - `login`: the user is known and the completed methods count, but `stages` remain;
 * - `satisfied`: no stage remains (single sign-on).
 */
export type SsoDecision =
  | { kind: 'none' }
  | {
      kind: 'login' | 'satisfied';
      userId: string;
      carried: MethodCompletion[];
      stages: string[][];
      /** Some of the session's methods were too old for max_age: a re-authentication, not a step-up. */
      stale: boolean;
    };

/** What a new flow starts with after a decision: every stage of the app, or the user and what the session carries. */
export function flowStart(decision: SsoDecision, loginStages: string[][]) {
  return decision.kind === 'none'
    ? { stages: loginStages }
    : { stages: decision.stages, userId: decision.userId, carried: decision.carried };
}

export interface SsoRequest {
  clientId: string;
  loginStages: string[][];
  /** Methods that completed a login alone satisfy this app by themselves (`single_factor_methods`). */
  singleFactorMethods: string[];
  prompt: string[];
  maxAge: number | null;
  request: RequestFacts;
  logger: Logger;
}

/**
 * Decides whether a session satisfies an app: only the methods it completed, still set up for
 * the user and recent enough for `max_age`, each counted for one stage of the app's
 * `login_stages`, plus what the FDS rules that check sessions ask for.
 */
export class SingleSignOn {
  constructor(
    private readonly deps: {
      users: { findById(id: string): Promise<UserRecord | null> };
      verifier: SsoVerifier;
      clock: Clock;
      /** A session not used to sign in for this long signs no one in (`oauth.session_idle_ttl`). */
      idleSeconds?: number;
    },
  ) {}

  /** Whether a session signs anyone in at all: not idle too long, its user still active. */
  async live(session: Session): Promise<boolean> {
    return (await this.userOf(session)) !== null;
  }

  private async userOf(session: Session) {
    // Idle too long (NIST 800-63B-4 §2.2.3: reauthenticate after 1 h of inactivity at AAL2). The
    // session's row is renewed at every sign-in through it, so its creation is its last use.
    const idle = this.deps.idleSeconds;
    if (idle !== undefined && this.nowSeconds() - session.createdAt.getTime() / 1000 > idle) return null;
    const user = await this.deps.users.findById(session.userId);
    // A session of a user disabled since does not sign anyone in.
    return user && user.status === 'active' ? user : null;
  }

  async decide(session: Session | null, req: SsoRequest): Promise<SsoDecision> {
    const none = { kind: 'none' } as const;
    // max_age=0 asks for a new login as prompt=login does (OIDC Core §3.1.2.1).
    if (!session || req.prompt.includes('login') || req.maxAge === 0) return none;
    const user = await this.userOf(session);
    if (!user) return none;
    const carried = await this.stillValid(user, session.methods, req);
    if (!carried.length) return none;
    const stale = req.maxAge !== null && session.methods.some((m) => m.at < this.nowSeconds() - req.maxAge!);
    // A single-factor proof that completed a login alone (FACE) does so here too, where this
    // app allows that method alone; elsewhere it counts for one stage like any other method.
    const alone = carried.some((c) => c.alone && req.singleFactorMethods.includes(c.method));
    const stages = alone
      ? []
      : remainingStages(
          req.loginStages,
          carried.map((c) => c.method),
        );
    if (!stages) return none;
    if (stages.length) return { kind: 'login', userId: user.id, carried, stages, stale };

    // Every stage is met without a new proof: the rules that check sessions have the last word.
    const fds = await this.deps.verifier.checkSession(user, req.clientId, req.request, req.logger);
    if (fds.action === 'deny') return none;
    if (fds.action === 'step_up') {
      const extra = this.deps.verifier.stepUpMethods(
        req.clientId,
        carried.map((c) => c.method),
      );
      if (!extra.length) return none;
      return { kind: 'login', userId: user.id, carried, stages: [extra], stale };
    }
    return { kind: 'satisfied', userId: user.id, carried, stages: [], stale };
  }

  private nowSeconds(): number {
    return this.deps.clock.now().getTime() / 1000;
  }

  /** The session's completions that still count: recent enough, and the method still set up. */
  private async stillValid(user: UserRecord, methods: MethodCompletion[], req: SsoRequest) {
    const now = this.nowSeconds();
    const latest = new Map<string, MethodCompletion>();
    for (const m of methods) {
      if (req.maxAge !== null && now - m.at > req.maxAge) continue;
      if ((latest.get(m.method)?.at ?? -1) < m.at) latest.set(m.method, m);
    }
    const valid: MethodCompletion[] = [];
    for (const m of latest.values()) {
      if (await this.deps.verifier.isEnrolled(user, m.method, req.clientId, req.request, req.logger)) valid.push(m);
    }
    return valid;
  }
}
