import type { Clock, LoginFlowView, SetupApi, UserRecord } from '@gatehouse-auth/plugin-api';
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import type { AdminGuard } from '../http/admin-guard.js';
import type { LoginFlows } from '../login/flows-api.js';
import type { SetupOffers } from './setup-offers.js';
import type { TokenService } from '../oauth/tokens.js';
import type { UserService } from '../users/users.js';
import type { LoginFlowStore } from './flows.js';
import { requestFacts } from './context.js';
import type { EnrollmentService, EnrollmentStep } from './enrollment.js';
import { verificationError } from './errors.js';
import type { VerificationService } from './service.js';
import { setupAccess } from './setup-access.js';
import { multipartFor, uploadedFiles } from './uploads.js';

export interface SetupWebDeps {
  adminGuard: AdminGuard;
  tokens: TokenService;
  users: UserService;
  enrollment: EnrollmentService;
  verification: VerificationService;
  setupOffers: SetupOffers;
  loginFlows: LoginFlows;
  flows: Pick<LoginFlowStore, 'advance'>;
  clock: Clock;
}

export class SetupWeb implements SetupApi {
  private checks?: ReturnType<typeof setupAccess>;

  // Nothing is resolved until a request: a plugin takes `admit` in `register`, before the
  // plugins' apps joined the registry the token service reads.
  constructor(private readonly deps: SetupWebDeps) {}

  private get guard() {
    return (this.checks ??= setupAccess(this.deps));
  }

  /** Requests `admit` let through: `access` need not check their caller again. */
  private readonly admitted = new WeakSet<IncomingMessage>();

  private async caller(req: Request, res: Response): Promise<void> {
    // The middleware answers by next(err), or by throwing (the admin guard's refusals).
    await new Promise<void>((resolve, reject) => {
      Promise.resolve(
        this.guard.requireSetupAccess(req, res, (err?: unknown) => (err ? reject(err) : resolve())),
      ).catch(reject);
    });
  }

  async access(req: Request, res: Response, sub: unknown) {
    if (!this.admitted.has(req)) await this.caller(req, res);
    const user = await this.guard.userOf(sub, res);
    return { user, clientId: (res.locals.tokenClient as string | undefined) ?? null };
  }

  step(step: EnrollmentStep, methodId: string, user: UserRecord, body: Record<string, unknown>, req: IncomingMessage) {
    return this.deps.enrollment.step(step, methodId, user, body, requestFacts(req), logOf(req), uploadedFiles(req));
  }

  // The caller is checked before any body is read; a multipart one is read here, with the method's limits.
  readonly admit: RequestHandler = (req, res, next) => {
    this.caller(req, res)
      .then(() => {
        this.admitted.add(req);
        multipartFor(this.deps.verification)(req, res, next);
      })
      // A throw of the multipart step (an unknown method) is answered too, never left hanging.
      .catch(next);
  };

  // A confirmation without a bearer: the setup's exchange_id names the user and the method.
  async confirm(methodId: string, body: Record<string, unknown>, req: IncomingMessage) {
    const { exchange_id: exchangeId, sub: _sub, ...fields } = body;
    const userId =
      typeof exchangeId === 'string' ? await this.deps.enrollment.userOfExchange(exchangeId, methodId) : null;
    const user = userId ? await this.deps.users.findById(userId) : null;
    if (!user || user.status !== 'active')
      throw verificationError('EXCHANGE_INVALID', 'no such setup in progress for this method');
    return this.step('verification', methodId, user, fields, req);
  }

  list(user: UserRecord, req: IncomingMessage) {
    return this.deps.enrollment.list(user, requestFacts(req), logOf(req));
  }

  remove(user: UserRecord, methodId: string, credentialId?: string) {
    return this.deps.enrollment.remove(user, methodId, credentialId);
  }

  async overview(user: UserRecord, clientId: unknown, req: IncomingMessage) {
    const app = typeof clientId === 'string' ? this.deps.verification.app(clientId) : undefined;
    if (!app) throw verificationError('INVALID_FIELD', 'client_id names no app', { fields: ['client_id'] });
    return this.deps.enrollment.overview(user, app, requestFacts(req), logOf(req));
  }

  rename(user: UserRecord, methodId: string, credentialId: string, label: string) {
    return this.deps.enrollment.rename(user, methodId, credentialId, label);
  }

  async duringLogin(view: LoginFlowView, methodId: string, req: IncomingMessage): Promise<UserRecord> {
    const { users, verification, setupOffers } = this.deps;
    const flow = this.deps.loginFlows.flowOf(view);
    const request = requestFacts(req);
    const logger = logOf(req);
    const user = flow.userId ? await users.findById(flow.userId) : null;
    if (!user || user.status !== 'active') {
      throw verificationError('SETUP_NOT_ALLOWED', 'complete the first stage of the sign-in first');
    }
    const method = verification.method(methodId);
    if (!flow.stages[flow.stage]?.includes(method.id)) {
      throw verificationError('METHOD_NOT_ENABLED', 'the stage to do has no such method');
    }
    if (await verification.isEnrolled(user, method.id, flow.clientId, request, logger)) {
      throw verificationError('SETUP_NOT_ALLOWED', 'the method is set up already; use it');
    }
    if (!(await setupOffers.mayEnrol(flow, user, method, request, logger))) {
      throw verificationError(
        'SETUP_NOT_ALLOWED',
        'this sign-in has proved only a password: it cannot add a way to sign in on its own, nor a second factor beside one you have',
      );
    }
    return user;
  }

  async stepDuringLogin(
    view: LoginFlowView,
    methodId: string,
    step: EnrollmentStep,
    body: Record<string, unknown>,
    req: IncomingMessage,
  ) {
    const { verification } = this.deps;
    const user = await this.duringLogin(view, methodId, req);
    const method = verification.method(methodId);
    const response = await this.step(step, method.id, user, body, req);
    // Finished by an initiation alone (a password set), the setup proved nothing: sign in with it.
    if (step === 'initiation') return { response, continuation: null };
    const flow = this.deps.loginFlows.flowOf(view);
    const enrolled = await verification.isEnrolled(user, method.id, flow.clientId, requestFacts(req), logOf(req));
    if (!enrolled) return { response, continuation: null };
    const next = await this.deps.flows.advance(flow, flow.stage, {
      userId: user.id,
      method: method.id,
      amr: method.amr,
    });
    if (!next) throw verificationError('WRONG_FLOW_STAGE');
    const done = { userId: user.id, method: method.id, stage: flow.stage, stepUp: false, setup: true } as const;
    const result = await verification.stageCompleted(flow, next, done, logOf(req));
    return { response, continuation: this.deps.loginFlows.continuation(result) };
  }

  async mayBind(view: LoginFlowView, methodId: string, req: IncomingMessage): Promise<boolean> {
    const flow = this.deps.loginFlows.flowOf(view);
    const user = flow.userId ? await this.deps.users.findById(flow.userId) : null;
    if (!user || user.status !== 'active') return false;
    const method = this.deps.verification.method(methodId);
    return this.deps.setupOffers.mayEnrol(flow, user, method, requestFacts(req), logOf(req));
  }
}

function logOf(req: IncomingMessage) {
  return (req as Request).log;
}
