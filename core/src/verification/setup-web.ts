import type {
  EnrollmentHandlers,
  JsonObject,
  LoginFlowView,
  SetupApi,
  Services,
  UserRecord,
} from '@gatehouse-auth/plugin-api';
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { appMethods } from '../config/schema.js';
import type { LoginFlows } from '../login/flows-api.js';
import type { LogoutService } from '../oauth/logout.js';
import type { Extensions } from '../plugins/loader.js';
import type { SetupOffers } from './setup-offers.js';
import type { LoginFlowStore } from './flows.js';
import { requestFacts } from './context.js';
import { verificationError } from './errors.js';
import type { PasswordChanges } from './password-changed.js';
import type { VerificationService } from './service.js';
import { checkSetupCaller, setupUser, type SetupAccessDeps } from './setup-access.js';
import { multipartFor, uploadedFiles } from './uploads.js';

export interface SetupWebDeps extends SetupAccessDeps {
  logout: Pick<LogoutService, 'endUserSessions'>;
  /** The event `password_changed`, with what was set up since the user's last sign-in. */
  passwordChanges: Pick<PasswordChanges, 'changed'>;
  services: Pick<Services, 'accounts' | 'credentials'>;
  extensions: Extensions;
  verification: VerificationService;
  setupOffers: SetupOffers;
  loginFlows: LoginFlows;
  flows: Pick<LoginFlowStore, 'advance'>;
}

type EnrollmentStep = 'initiation' | 'scan' | 'verification';

// `import` is no step of setting up: only `gatehouse users import` calls it.
const HANDLER: Record<EnrollmentStep, Exclude<keyof EnrollmentHandlers, 'import'>> = {
  initiation: 'initiate',
  scan: 'scan',
  verification: 'verify',
};

export class SetupWeb implements SetupApi {
  // Nothing is resolved until a request: a plugin takes `admit` in `register`, before the
  // plugins' apps joined the registry the token service reads.
  constructor(private readonly deps: SetupWebDeps) {}

  /** Requests `admit` let through: `access` need not check their caller again. */
  private readonly admitted = new WeakSet<IncomingMessage>();

  async access(req: Request, res: Response, sub: unknown) {
    if (!this.admitted.has(req)) await checkSetupCaller(this.deps, req, res);
    const user = await setupUser(this.deps.users, sub, res);
    return { user, clientId: (res.locals.tokenClient as string | undefined) ?? null };
  }

  async run(
    step: EnrollmentStep,
    methodId: string,
    user: UserRecord,
    body: Record<string, unknown>,
    pending: JsonObject | null,
    req: IncomingMessage,
  ) {
    const method = this.deps.verification.method(methodId);
    const handler = method.enrollment?.[HANDLER[step]];
    if (!handler) throw verificationError('ENROLLMENT_NOT_SUPPORTED', `${method.id} has no ${step} step`);
    const request = requestFacts(req);
    const outcome = await handler({
      user,
      credentials: this.deps.services.credentials(user.id, method.id),
      request,
      clientId: 'enrollment',
      logger: req.log,
      body,
      files: uploadedFiles(req),
      pending,
    });
    // A replaced credential (a new password): whoever held the old one loses sessions and tokens,
    // and the security event tells what was set up meanwhile (it outlives the old password).
    if (outcome.ok && outcome.done && outcome.replaced) {
      await this.endGrants(user.id, 'credential_replaced');
      this.deps.passwordChanges.changed(user, method.id, request);
    }
    return { method, outcome };
  }

  isEnrolled(user: UserRecord, methodId: string, req: IncomingMessage) {
    return this.deps.verification.isEnrolled(user, methodId, 'enrollment', requestFacts(req), req.log);
  }

  removed(userId: string) {
    return this.endGrants(userId, 'method_removed');
  }

  /** Ends the user's OAuth grants and browser sessions after a credential change (RFC 9700 §4.14.2). */
  private async endGrants(userId: string, reason: string) {
    await this.deps.logout.endUserSessions(userId, reason);
    await this.deps.tokens.revokeSubject(userId, reason);
  }

  // The caller is checked before any body is read; a multipart one is read here, with the method's limits.
  readonly admit: RequestHandler = (req, res, next) => {
    checkSetupCaller(this.deps, req, res)
      .then(() => {
        this.admitted.add(req);
        multipartFor(this.deps.verification)(req, res, next);
      })
      // A throw of the multipart step (an unknown method) is answered too, never left hanging.
      .catch(next);
  };

  /**
   * The app's methods with this user's state of each (what an account page shows, cidaas's
   * `GET …/config`): the stages that list it, whether it is set up and can be, and whether the
   * user's email address and phone number are verified.
   */
  async overview(user: UserRecord, clientId: unknown, req: IncomingMessage) {
    const { verification } = this.deps;
    const app = typeof clientId === 'string' ? verification.app(clientId) : undefined;
    if (!app) throw verificationError('INVALID_FIELD', 'client_id names no app', { fields: ['client_id'] });
    const methods: JsonObject[] = [];
    for (const id of appMethods(app)) {
      const method = this.deps.extensions.methods.get(id);
      if (!method) continue;
      methods.push({
        type: id,
        stages: app.login_stages.flatMap((stage, i) => (stage.includes(id) ? [i + 1] : [])),
        enrolled: await verification.isEnrolled(user, id, app.client_id, requestFacts(req), req.log),
        can_setup: method.enrollment !== undefined,
      });
    }
    const accounts = this.deps.services.accounts;
    return {
      client_id: app.client_id,
      sub: user.id,
      methods,
      email_verified: user.email ? await accounts.verified(user, 'email') : false,
      phone_number_verified: user.phone ? await accounts.verified(user, 'sms') : false,
    };
  }

  async duringLogin(view: LoginFlowView, methodId: string, req: IncomingMessage): Promise<UserRecord> {
    const { users, verification, setupOffers } = this.deps;
    const flow = this.deps.loginFlows.flowOf(view);
    const request = requestFacts(req);
    const logger = req.log;
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
    req: IncomingMessage,
    run: (user: UserRecord) => Promise<JsonObject>,
  ) {
    const { verification } = this.deps;
    const user = await this.duringLogin(view, methodId, req);
    const method = verification.method(methodId);
    const response = await run(user);
    // Finished by an initiation alone (a password set), the setup proved nothing: sign in with it.
    if (step === 'initiation') return { response, continuation: null };
    const flow = this.deps.loginFlows.flowOf(view);
    const enrolled = await verification.isEnrolled(user, method.id, flow.clientId, requestFacts(req), req.log);
    if (!enrolled) return { response, continuation: null };
    const next = await this.deps.flows.advance(flow, flow.stage, {
      userId: user.id,
      method: method.id,
      amr: method.amr,
    });
    if (!next) throw verificationError('WRONG_FLOW_STAGE');
    const done = { userId: user.id, method: method.id, stage: flow.stage, stepUp: false, setup: true } as const;
    const result = await verification.stageCompleted(flow, next, done, req.log);
    return { response, continuation: this.deps.loginFlows.continuation(result) };
  }

  async mayBind(view: LoginFlowView, methodId: string, req: IncomingMessage): Promise<boolean> {
    const flow = this.deps.loginFlows.flowOf(view);
    const user = flow.userId ? await this.deps.users.findById(flow.userId) : null;
    if (!user || user.status !== 'active') return false;
    const method = this.deps.verification.method(methodId);
    return this.deps.setupOffers.mayEnrol(flow, user, method, requestFacts(req), req.log);
  }
}
