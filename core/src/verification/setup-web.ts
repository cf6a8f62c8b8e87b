import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import type { AdminGuard } from '../http/admin-guard.js';
import type { LoginFlows } from '../login/flows-api.js';
import type { LoginFlowView, SetupApi } from '../plugins/web.js';
import type { SetupOffers } from '../login/offer.js';
import type { TokenService } from '../oauth/tokens.js';
import type { UserRecord } from '../plugins/extensions.js';
import type { Clock } from '../services.js';
import type { UserService } from '../users/users.js';
import { requestFacts } from './context.js';
import type { EnrollmentService, EnrollmentStep } from './enrollment.js';
import { verificationError } from './errors.js';
import type { VerificationService } from './service.js';
import { setupAccess } from './setup-access.js';

export interface SetupWebDeps {
  adminGuard: AdminGuard;
  tokens: TokenService;
  users: UserService;
  enrollment: EnrollmentService;
  verification: VerificationService;
  setupOffers: SetupOffers;
  loginFlows: LoginFlows;
  clock: Clock;
}

export class SetupWeb implements SetupApi {
  private readonly guard: ReturnType<typeof setupAccess>;

  constructor(private readonly deps: SetupWebDeps) {
    this.guard = setupAccess(deps);
  }

  async access(req: Request, res: Response, sub: unknown) {
    // The middleware answers by next(err), or by throwing (the admin guard's refusals).
    await new Promise<void>((resolve, reject) => {
      Promise.resolve(
        this.guard.requireSetupAccess(req, res, (err?: unknown) => (err ? reject(err) : resolve())),
      ).catch(reject);
    });
    const user = await this.guard.userOf(sub, res);
    return { user, clientId: (res.locals.tokenClient as string | undefined) ?? null };
  }

  step(step: EnrollmentStep, methodId: string, user: UserRecord, body: Record<string, unknown>, req: IncomingMessage) {
    return this.deps.enrollment.step(step, methodId, user, body, requestFacts(req), logOf(req));
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
}

function logOf(req: IncomingMessage) {
  return (req as Request).log;
}
