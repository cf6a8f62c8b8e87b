import type {
  AppSettingsLookup,
  AuthMethod,
  Clock,
  DiscoverableContext,
  EventLog,
  FdsContext,
  FdsRule,
  JsonObject,
  LinkFacts,
  LoginContinuation,
  MethodContext,
  MethodRefusal,
  NewEvent,
  RequestFacts,
  Services,
  UserRecord,
  VerifyContext,
  VerifyOutcome,
} from '@gatehouse-auth/plugin-api';
import type { ClientRegistry } from '../oauth/clients.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { appMethods, type AppConfig, type GatehouseConfig } from '../config/schema.js';
import { isProtocolError, methodRefusalError, type ApiError } from '../errors.js';
import type { Metrics } from '../observability/metrics.js';
import type { Tracing } from '../observability/tracing.js';
import type { Extensions } from '../plugins/loader.js';
import { registeredMethod, requireFields, verificationError } from './errors.js';
import type { Exchange, ExchangeStore } from './exchanges.js';
import { runFdsRules, type FdsResult } from './fds.js';
import { UserHistorySnapshot } from './user-history.js';
import { linkState, newLinkFacts } from './link-facts.js';
import { readOnce } from './read-once.js';
import { flowClosedReason, type LoginFlow, type LoginFlowStore } from './flows.js';
import { appOptionsOf, methodContextOf, namedIdentifier, PHANTOM_USER_ID, phantomUser, type At } from './context.js';
import {
  EXCHANGE_STEPS,
  SPEC_METHOD_FIELDS,
  VERIFY_STEPS,
  DISCOVERABLE_KEY,
  SINGLE_FACTOR_KEY,
  singleFactorRequested,
  type StepDeps,
  type VerifyInput,
  type VerifyState,
} from './pipeline.js';
import type { SecurityEvents } from './security-events.js';
import { offered } from './stages.js';
import { sha256 } from '../util/crypto.js';
import { LIVE_STATES, type StatusStore, type VerificationStatus } from './statuses.js';
import type { StatusWatch } from './status-watch.js';
import { boundDevice, signInFacts, type DeviceRequest, type DevicePushes, type PushStep } from '../devices/pushes.js';
import type { Device } from '../devices/store.js';
import type { SecretBox } from '../util/crypto.js';

export type InitiateInput = Pick<VerifyInput, 'fields' | 'request' | 'logger'>;

/** What one initiation is about: shared by its steps before and after the answer. */
interface InitiationFacts {
  method: AuthMethod;
  flow: LoginFlow;
  request: RequestFacts;
  logger: Logger;
  expiresAt: Date;
  /** The login page asked the method to complete the login alone (`single_factor_auth`). */
  singleFactor: boolean;
  /**
   * Only for a sign-in link instead of a code (`processingType: LINK`): what its page on another
   * device shows (the starting screen shows the number too).
   */
  linkFacts?: LinkFacts;
}

/** Whom the FDS rules judge, for which method (or pseudo-method), where. */
interface Subject extends At {
  user: UserRecord;
  method: string;
}

/**
 * Where a plugin mounts its routes to be the page a sign-in link opens (`@gatehouse-auth/page-link`,
 * decision 66), as a plugin at `/login` is the hosted login page.
 */
export const LINK_PAGE_MOUNT = '/verification-srv/authentication';

/** Where a sign-in link points: the link page's route under its mount. */
export const LINK_PATH = `${LINK_PAGE_MOUNT}/:method/link`;

const USAGE_TYPES = ['INITIAL_AUTHENTICATION', 'MULTIFACTOR_AUTHENTICATION', 'PASSWORDLESS_AUTHENTICATION'];

/** Where a continuation took the login: the contract's LoginContinuation before its view and location. */
export type ContinueResult = Omit<LoginContinuation, 'flow' | 'location'> & { flow: LoginFlow };

/**
 * The exchange lifecycle and the verification pipeline. Stateless: everything lives in the
 * stores, so any node can serve any step.
 */
export class VerificationService {
  private readonly knownFields: Set<string>;
  private readonly fdsRules: FdsRule[];
  private readonly attemptGuards: FdsRule[];
  private readonly sessionChecks: FdsRule[];
  /** Rules that also screen registrations (phase 'registration', plugin API 1.3). */
  private readonly registrationChecks: FdsRule[];
  /** First-stage initiations still finishing after their answer, by exchange key. */
  private readonly background = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      config: GatehouseConfig;
      /** The apps, the config's and those stored in the database. */
      clients: Pick<ClientRegistry, 'app'>;
      extensions: Extensions;
      services: Services;
      clock: Clock;
      flows: LoginFlowStore;
      exchanges: ExchangeStore;
      statuses: StatusStore;
      securityEvents: Pick<SecurityEvents, 'emit'>;
      logger: Logger;
      pushes: DevicePushes;
      statusWatch: StatusWatch;
      secretBox: SecretBox;
      /** Per-app options of methods, read at each use (filled in once the plugins registered). */
      appSettings: AppSettingsLookup;
      metrics: Metrics;
      tracing: Tracing;
    },
  ) {
    const methods = deps.extensions.methods.values();
    this.knownFields = new Set<string>([
      ...SPEC_METHOD_FIELDS,
      ...methods.flatMap((m) => [...m.verifyFields, ...(m.files ?? []).map((f) => f.name)]),
    ]);
    this.fdsRules = orderedRules(deps.config.verification.fds_rules, deps.extensions);
    this.attemptGuards = this.fdsRules.filter((rule) => rule.guardsAttempts);
    this.sessionChecks = this.fdsRules.filter((rule) => rule.checksSessions);
    this.registrationChecks = this.fdsRules.filter((rule) => rule.checksRegistrations);
  }

  /** The registered methods (their fields are in the API's schemas). */
  methods(): AuthMethod[] {
    return [...this.deps.extensions.methods.values()];
  }

  method(id: string): AuthMethod {
    return registeredMethod(this.deps.extensions, id);
  }

  app(clientId: string): AppConfig | undefined {
    return this.deps.clients.app(clientId);
  }

  private methodContext(user: UserRecord, method: string, at: At): MethodContext {
    return methodContextOf(this.deps, user, method, at);
  }

  /** Whether the user has the method set up now (a registered method only). */
  async isEnrolled(user: UserRecord, methodId: string, clientId: string, request: RequestFacts, logger: Logger) {
    const method = this.deps.extensions.methods.get(methodId);
    return method ? method.isEnrolled(this.methodContext(user, method.id, { clientId, request, logger })) : false;
  }

  /**
   * The FDS rules that check sessions, for a session about to sign the user in to an app with
   * no new proof: allow, step up (one more method) or deny (sign in again).
   */
  checkSession(user: UserRecord, clientId: string, request: RequestFacts, logger: Logger) {
    if (!this.sessionChecks.length) return Promise.resolve({ action: 'allow' as const, reasons: [] });
    const subject = { user, method: SESSION_PSEUDO_METHOD, clientId, request, logger };
    return this.runRules(this.sessionChecks, 'session', subject);
  }

  /** A step-up stage: any method of the app not used in this login yet (registered ones). */
  stepUpMethods(clientId: string, used: Iterable<string>): string[] {
    const done = new Set(used);
    const app = this.app(clientId);
    const all = app ? appMethods(app) : [];
    return all.filter((m) => !done.has(m) && this.deps.extensions.methods.has(m));
  }

  // ─────────────── initiation ───────────────

  async initiate(methodId: string, input: InitiateInput): Promise<JsonObject> {
    const method = this.method(methodId);
    const { request, logger } = input;
    const named = namedIdentifier(input.fields);
    const fields = named === undefined ? input.fields : { ...input.fields, identifier: named };
    const flow = await this.activeFlow(fields.request_id);
    const app = this.app(flow.clientId);
    if (!app || !appMethods(app).includes(method.id)) {
      throw verificationError('METHOD_NOT_ENABLED', `${method.id} is not enabled for this app`);
    }
    if (!(flow.stages[flow.stage] ?? []).includes(method.id)) {
      throw verificationError(
        'METHOD_NOT_ENABLED',
        `${method.id} is not allowed at stage ${flow.stage + 1} of this login`,
      );
    }
    // One method never completes two stages: it adds nothing the first time did not.
    if (flow.methods.includes(method.id)) {
      throw verificationError('METHOD_NOT_ENABLED', `${method.id} was already used in this login`);
    }
    // PASSWORDLESS_AUTHENTICATION (cidaas) is a first stage done with a method other than a password.
    const usage = fields.usage_type;
    if (usage !== undefined && !USAGE_TYPES.includes(usage)) {
      throw verificationError('INVALID_FIELD', `usage_type must be one of ${USAGE_TYPES.join(', ')}`);
    }
    await this.checkResendInterval(flow, method);
    // Every initiation writes an exchange and a status: a flow gets a bounded number of them.
    if (!(await this.deps.flows.reserveInitiation(flow.id, this.deps.config.verification.max_initiations_per_flow))) {
      throw verificationError('TOO_MANY_INITIATIONS');
    }
    const now = this.deps.clock.now();
    const expiresAt = new Date(
      Math.min(now.getTime() + this.deps.config.verification.exchange_ttl * 1000, flow.expiresAt.getTime()),
    );
    const singleFactor =
      Object.hasOwn(fields, 'single_factor_auth') && singleFactorRequested(method, fields.single_factor_auth, app);
    // Messages to the person (a code by text or email) speak the sign-in request's language.
    const uiLocales = (flow.params.oauth as { ui_locales?: string | null } | undefined)?.ui_locales ?? null;
    const facts: InitiationFacts = {
      method,
      flow,
      request: uiLocales ? { ...request, uiLocales } : request,
      logger,
      expiresAt,
      singleFactor,
      ...(this.wantsLink(method, fields) ? { linkFacts: newLinkFacts(request, now) } : {}),
    };
    const answer = flow.userId
      ? await this.initiateKnown(fields, facts)
      : // A passkey names its user: at the first stage any identifier typed is not needed.
        method.discoverable
        ? await this.initiateDiscoverable(facts)
        : await this.initiateFirstStage(fields, facts);
    const interval = this.resendInterval(method);
    return interval ? { ...answer, resend_after: interval } : answer;
  }

  /** Seconds between two sends of a method that sends (a code) in one stage; 0: no interval. */
  private resendInterval(method: AuthMethod): number {
    return method.page?.sends ? this.deps.config.verification.resend_interval_seconds : 0;
  }

  /**
   * A method that sends sends again in the same stage only after the interval (RESEND_TOO_SOON
   * with the wait). It counts by the flow, not the user: real and unknown identifiers alike.
   */
  private async checkResendInterval(flow: LoginFlow, method: AuthMethod): Promise<void> {
    const interval = this.resendInterval(method);
    if (!interval) return;
    const last = await this.deps.exchanges.lastCreatedAt(flow.id, flow.stage, method.id);
    const wait = last === null ? 0 : Math.ceil((last + interval * 1000 - this.deps.clock.now().getTime()) / 1000);
    if (wait <= 0) return;
    throw verificationError('RESEND_TOO_SOON', undefined, { retry_after: wait });
  }

  /** `processingType` (cidaas): CODE, the default, or LINK for a method that can send one. */
  private wantsLink(method: AuthMethod, fields: Record<string, string>): boolean {
    const kind = fields.processingType ?? fields.processing_type ?? 'CODE';
    if (kind === 'CODE') return false;
    if (kind !== 'LINK') throw verificationError('INVALID_FIELD', 'processingType must be CODE or LINK');
    if (!method.links) throw verificationError('INVALID_FIELD', `${method.id} sends no sign-in links`);
    // A link nobody serves would be mailed dead: without the page, no links.
    if (!this.deps.extensions.routes.values().some((route) => route.path === LINK_PAGE_MOUNT)) {
      throw verificationError('INVALID_FIELD', 'no plugin serves sign-in links (@gatehouse-auth/page-link)');
    }
    return true;
  }

  /** The URL builder a method sends a link with, for this exchange (see LINK_PATH). */
  private linkOf(facts: InitiationFacts, exchangeId: string): { link?: (token: string) => string } {
    if (!facts.linkFacts) return {};
    const base = `${this.deps.config.issuer.replace(/\/+$/, '')}${LINK_PATH.replace(':method', facts.method.id)}`;
    return {
      link: (token) => `${base}?${new URLSearchParams({ exchange_id: exchangeId, token }).toString()}`,
    };
  }

  /**
   * A first stage with no identifier, by a method whose proof names the user (a passkey): the
   * exchange has no user until the proof says whom it is for (VERIFY_STEPS, methodEnabled).
   */
  private async initiateDiscoverable(facts: InitiationFacts): Promise<JsonObject> {
    const { method, expiresAt } = facts;
    const outcome = await method.discoverable!.initiate(this.discoverableContext(method, atOf(facts), expiresAt));
    if (!outcome.ok) throw methodRefusalError(outcome);
    const { exchangeId, statusId, exchange } = await this.newExchange(null, facts, null);
    await this.deps.exchanges.setState(exchange.key, { ...outcome.state, [DISCOVERABLE_KEY]: true });
    await this.recordInitiated(null, facts);
    return {
      exchange_id: { exchange_id: exchangeId, expires_at: expiresAt.toISOString() },
      status_id: statusId,
      ...outcome.response,
    };
  }

  private discoverableContext(method: AuthMethod, at: At, exchangeExpiresAt: Date): DiscoverableContext {
    return { ...at, exchangeExpiresAt, ...appOptionsOf(this.deps.appSettings, at.clientId, method.id) };
  }

  /**
   * After the first stage the user is known: every check runs before the answer, which carries
   * the precise refusal (METHOD_NOT_ENABLED, FDS_BLOCKED, TOO_MANY_SENDS…) and method extras
   * such as `medium_text`.
   */
  private async initiateKnown(fields: Record<string, string>, facts: InitiationFacts): Promise<JsonObject> {
    const { method, expiresAt } = facts;
    const ctx = await this.flowContext(fields, facts);
    const { user } = ctx;
    const step = randomUUID();
    const fds = await this.runRules(this.fdsRules, 'initiation', { user, method: method.id, ...atOf(facts) }, { step });
    if (fds.action === 'deny') throw fdsBlocked(fds.retryAfter);
    // A device method's push goes to one of the user's devices, picked before anything is stored.
    const mediumId = fields.medium_id ?? null;
    const device = method.device ? await this.deps.pushes.pickDevice(ctx, method, mediumId) : null;
    if (method.device && !device) throw verificationError('DEVICE_NOT_FOUND', 'no such device for this user');
    const number = method.device?.numberMatching ? this.deps.pushes.drawNumber() : undefined;
    const created = await this.newExchange(user, facts, device);
    let extra: JsonObject = {};
    if (!created.exchange.revokedAt) {
      const started = await this.startMethod(facts, ctx, created, { mediumId, device, number });
      if (!started.ok) {
        await this.deps.exchanges.revoke(created.exchange.key, 'initiation_failed');
        throw methodRefusalError(started);
      }
      extra = started.response;
    }
    await this.recordInitiated(user, facts, step);
    return {
      exchange_id: { exchange_id: created.exchangeId, expires_at: expiresAt.toISOString() },
      sub: user.id,
      status_id: created.statusId,
      ...extra,
      ...linkNumber(facts),
    };
  }

  /**
   * The first stage names the user by an identifier, and the answer must not tell whether it
   * exists (decision 7). Before the answer, a real and an unknown identifier do the same work:
   * a lookup, an exchange and a status. What differs (is the method set up, the FDS rules, the
   * method's own initiation and the send it starts) runs after the answer; any refusal there
   * turns the exchange into a phantom, which fails verification like a wrong proof.
   */
  private async initiateFirstStage(fields: Record<string, string>, facts: InitiationFacts): Promise<JsonObject> {
    const identifier = fields.identifier ?? fields.sub;
    if (!identifier) throw verificationError('FIELD_MISSING', 'missing: identifier', { fields: ['identifier'] });
    const found = fields.identifier
      ? await this.deps.services.users.findByIdentifier(identifier)
      : await this.deps.services.users.findById(identifier);
    const user = found?.status === 'active' ? found : null;
    // A device method's number is drawn for real and unknown identifiers alike, before the answer.
    const number = facts.method.device?.numberMatching ? this.deps.pushes.drawNumber() : undefined;
    const created = await this.newExchange(user, facts, null);
    await this.recordInitiated(null, facts);
    if (user && !created.exchange.revokedAt)
      this.inBackground(created.exchange.key, () => this.completeFirstStage(user, facts, created, number));
    return {
      exchange_id: { exchange_id: created.exchangeId, expires_at: facts.expiresAt.toISOString() },
      status_id: created.statusId,
      ...(number !== undefined ? { push_selected_number: number } : {}),
      ...linkNumber(facts),
    };
  }

  /** The rest of a first-stage initiation for a real user, after the answer went out. */
  private async completeFirstStage(
    user: UserRecord,
    facts: InitiationFacts,
    created: NewExchangeResult,
    number: number | undefined,
  ): Promise<void> {
    const { method, logger } = facts;
    const ctx = this.methodContext(user, method.id, atOf(facts));
    const refuse = async (why: string) => {
      logger.info(
        { method: method.id, why },
        'first-stage initiation refused; the exchange answers as for an unknown user',
      );
      await this.deps.exchanges.forgetUser(created.exchange.key);
    };
    if (!(await method.isEnrolled(ctx))) return refuse('not_enrolled');
    const fds = await this.runRules(this.fdsRules, 'initiation', { user, method: method.id, ...atOf(facts) });
    if (fds.action === 'deny') return refuse(`fds:${fds.reasons.join(',')}`);
    // A chosen medium would confirm the account exists before it is known: never at this stage.
    const device = method.device ? await this.deps.pushes.pickDevice(ctx, method, null) : null;
    if (method.device && !device) return refuse('no_device');
    const started = await this.startMethod(facts, ctx, created, { mediumId: null, device, number });
    if (!started.ok) return refuse(started.code);
  }

  /**
   * The method's own initiation for a real user and, for a device method, the push to the
   * device: what they keep goes on the exchange. The answer's extras, or the method's refusal.
   */
  private async startMethod(
    facts: InitiationFacts,
    ctx: MethodContext,
    created: NewExchangeResult,
    choice: { mediumId: string | null; device: Device | null; number: number | undefined },
  ): Promise<MethodRefusal | { ok: true; response: JsonObject }> {
    const { method, flow, request, expiresAt } = facts;
    const { device, number } = choice;
    const { exchange } = created;
    const outcome = await method.initiate({
      ...ctx,
      mediumId: choice.mediumId,
      exchangeExpiresAt: expiresAt,
      ...(device ? { device: boundDevice(device) } : {}),
      ...this.linkOf(facts, created.exchangeId),
    });
    if (!outcome.ok) return outcome;
    let state = outcome.state;
    let response = outcome.response ?? {};
    if (device) {
      const app = this.app(flow.clientId);
      const push = await this.deps.pushes.start({ method, user: ctx.user, device, app, request, number, expiresAt });
      state = { ...state, ...push.state };
      response = { ...response, ...this.deps.pushes.pageResponse(device, number) };
      // A first stage's exchange was made before the device was picked: it learns it now.
      if (exchange.mediumId === null) await this.deps.exchanges.setMedium(exchange.key, device.deviceId);
    }
    if (facts.singleFactor) state = { ...state, [SINGLE_FACTOR_KEY]: true };
    if (state) await this.deps.exchanges.setState(exchange.key, { ...linkState(facts.linkFacts), ...state });
    return { ok: true, response };
  }

  /**
   * A new exchange and its status. The status_id is derived from the exchange_id under the server
   * key; a device method's exchange id is rotated by the device's steps, so its status_id is
   * also kept with it, encrypted.
   */
  private async newExchange(
    user: UserRecord | null,
    facts: InitiationFacts,
    device: Device | null,
  ): Promise<NewExchangeResult> {
    const { method, flow, expiresAt } = facts;
    const exchangeId = this.deps.services.crypto.randomToken(32);
    const statusId = this.statusIdOf(exchangeId);
    const statusKey = await this.deps.statuses.create({
      id: statusId,
      flowId: flow.id,
      userId: user?.id ?? null,
      method: method.id,
      stage: flow.stage,
      expiresAt,
    });
    const exchange = await this.deps.exchanges.create({
      id: exchangeId,
      flowId: flow.id,
      statusKey,
      userId: user?.id ?? null,
      method: method.id,
      stage: flow.stage,
      maxAttempts: this.deps.config.verification.max_attempts,
      expiresAt,
      mediumId: device?.deviceId ?? null,
      statusSeal: method.device ? this.deps.secretBox.encrypt(statusId) : null,
      state: linkState(facts.linkFacts),
    });
    return { exchangeId, statusId, exchange };
  }

  /**
   * The initiation as an event, with the step of its FDS verdicts; before the user is known it
   * names none (one row a minute).
   */
  private recordInitiated(user: UserRecord | null, facts: InitiationFacts, step?: string): Promise<void> {
    return this.deps.services.events.record({
      type: 'verification.initiated',
      userId: user?.id ?? null,
      method: facts.method.id,
      clientId: facts.flow.clientId,
      ip: facts.request.ip,
      ...(user ? {} : { aggregateSeconds: 60 }),
      ...(step ? { data: { step } } : {}),
    });
  }

  /** Work started by a request that outlives its answer: tracked per exchange, awaited by `idle`. */
  private inBackground(exchangeKey: string, work: () => Promise<void>): void {
    const run: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .catch((err: unknown) => {
        this.deps.logger.error({ err }, 'first-stage initiation failed after the answer');
        return this.deps.exchanges.forgetUser(exchangeKey);
      })
      .finally(() => {
        if (this.background.get(exchangeKey) === run) this.background.delete(exchangeKey);
      });
    this.background.set(exchangeKey, run);
  }

  /** Whether initiations are still finishing after their answers on this node. */
  get busy(): boolean {
    return this.background.size > 0;
  }

  /** Resolves when every initiation finishing after its answer (on this node) has finished. */
  async idle(): Promise<void> {
    while (this.background.size) await Promise.allSettled([...this.background.values()]);
  }

  private async activeFlow(requestId: string | undefined): Promise<LoginFlow> {
    if (!requestId) throw verificationError('FIELD_MISSING', 'missing: request_id', { fields: ['request_id'] });
    const flow = await this.deps.flows.get(requestId);
    if (!flow) throw verificationError('REQUEST_NOT_FOUND');
    const closed = flowClosedReason(flow, this.deps.clock.now());
    if (closed) throw verificationError(closed);
    return flow;
  }

  /** The method's context for the user of a flow past its first stage: active, with the method set up. */
  private async flowContext(fields: Record<string, string>, facts: InitiationFacts): Promise<MethodContext> {
    const { flow, method } = facts;
    if (fields.sub && fields.sub !== flow.userId)
      throw verificationError('INVALID_FIELD', 'sub does not match the login');
    const user = await this.deps.services.users.findById(flow.userId!);
    if (!user) throw verificationError('USER_NOT_FOUND');
    if (user.status !== 'active') throw verificationError('USER_DISABLED');
    const ctx = this.methodContext(user, method.id, atOf(facts));
    if (!(await method.isEnrolled(ctx))) {
      throw verificationError('METHOD_NOT_ENABLED', `${method.id} is not set up for this user`);
    }
    return ctx;
  }

  // ─────────────── verification ───────────────

  /** A proof made by a Gatehouse page or form (no multipart, every field a string). */
  verifyProof(methodId: string, fields: Record<string, string>, request: RequestFacts, logger: Logger) {
    return this.verify(methodId, { fields, malformed: [], keys: Object.keys(fields), files: [], request, logger });
  }

  /** Verifies a proof for a stage of `requestId` and moves the login on with it, as a continuation does. */
  async proveAndContinue(
    methodId: string,
    requestId: string,
    fields: Record<string, string>,
    request: RequestFacts,
    logger: Logger,
  ): Promise<ContinueResult> {
    const verified = await this.verifyProof(methodId, fields, request, logger);
    return this.continueLogin(
      { requestId, status_id: verified.status_id, verificationType: methodId, sub: verified.sub },
      logger,
    );
  }

  /** A proof checked, counted by method and outcome, in a span of its own. */
  async verify(methodId: string, input: VerifyInput): Promise<{ status_id: string; sub: string }> {
    // Only a registered method's id is a label: the path segment is the caller's to choose.
    const label = this.deps.extensions.methods.get(methodId.toUpperCase())?.id ?? 'unknown';
    try {
      const verified = await this.deps.tracing.span('verification.verify', { 'gatehouse.method': label }, () =>
        this.checkProof(methodId, input),
      );
      this.deps.metrics.verification(label, null);
      return verified;
    } catch (err) {
      this.deps.metrics.verification(label, isProtocolError(err) ? err.code : 'INTERNAL');
      throw err;
    }
  }

  private async checkProof(methodId: string, input: VerifyInput): Promise<{ status_id: string; sub: string }> {
    const method = this.method(methodId);
    // An initiation still finishing on this node settles first (its code, or its refusal).
    const id = input.fields.exchange_id;
    if (id && this.background.size) await this.background.get(sha256(id));
    const state: VerifyState = { method, ...input };
    for (const check of VERIFY_STEPS) await check(state, this.stepDeps(method));
    const exchange = state.exchange!;
    // The request's FDS verdicts (both phases) and its outcome share this id: one step.
    const step = randomUUID();
    if (exchange.state[SINGLE_FACTOR_KEY] === true) state.singleFactor = true;
    const flow = state.flow!;
    const user = state.user ?? phantomUser(flow.id);
    // What FDS judges and the outcome records: the sign-in's context. For a device method that
    // is the browser that started the push, not the phone answering it.
    const context = method.device ? signInFacts(exchange, input.request) : input.request;
    const subject: Subject = {
      user,
      method: method.id,
      clientId: flow.clientId,
      request: context,
      logger: input.logger,
    };
    // The outcome as an event, for no user once the attempt guard took the user away.
    const record = (type: string, reason: string | null) =>
      this.recordOutcome(type, { ...subject, userId: state.user?.id ?? null }, reason, { step });

    // The FDS phases of this request read the user's events once.
    const history = new UserHistorySnapshot(this.deps.services.history, user.id, this.deps.clock.now());
    // Rules that guard attempts (a locked or backed-off factor) refuse before the proof is
    // checked, so the answer cannot tell a right proof from a wrong one. They guard the phantom
    // too: its verdict changes nothing, but an unknown identifier takes the same work.
    if (this.attemptGuards.length) {
      const guard = await this.runRules(
        this.attemptGuards,
        'attempt',
        subject,
        // At the first stage a refusal must cost what an unknown identifier's does (no extra
        // write): it records no blocked event, and its verdicts are a step of their own.
        { history, step, outcomeFollows: !flow.userId },
      );
      if (guard.action === 'deny') {
        if (flow.userId) throw fdsBlocked(guard.retryAfter);
        // First stage: answered like an unknown user, checked against no credentials at all.
        state.phantom = true;
        state.user = undefined;
      }
    }

    // A device completes a push only once it allowed it on the device.
    if (method.device) {
      const status = await this.deps.statuses.findByKey(exchange.statusKey);
      if (status?.state !== 'ALLOWED') throw verificationError('PUSH_NOT_ALLOWED');
    }

    // (c) the method's own check, on an attempt reserved first so parallel guesses are counted.
    const attemptsLeft = await this.deps.exchanges.reserveAttempt(exchange.key);
    if (attemptsLeft === null) {
      const now = await this.deps.exchanges.find(input.fields.exchange_id!);
      if (now?.usedAt) throw verificationError('EXCHANGE_USED');
      if (now?.revokedReason === 'attempts' || (now && now.attempts >= now.maxAttempts)) {
        throw verificationError('TOO_MANY_ATTEMPTS');
      }
      throw verificationError('EXCHANGE_INVALID', 'the exchange_id is no longer valid');
    }
    const outcome = await this.methodOutcome(method, exchange, flow.clientId, user, input, state.methodContext);
    if (!outcome.ok || state.phantom) {
      if (!state.phantom) this.noticeReplay(outcome, subject);
      if (!outcome.ok && outcome.final && !state.phantom) {
        // A proof that must not be retried (a wrong number): the attempt is over.
        await this.deps.exchanges.revoke(exchange.key, 'final');
        if (method.device) await this.deps.pushes.deniedAtVerification(exchange, input.request, outcome.reason);
      }
      await this.deps.exchanges.burnIfSpent(exchange.key);
      await record('verification.failure', outcome.ok ? 'unknown_user' : outcome.reason);
      throw wrongProof(outcome.ok || !outcome.final ? attemptsLeft : 0);
    }

    // (d) fraud detection, on a proof that was right.
    const fds = await this.runRules(
      this.fdsRules,
      'verification',
      subject,
      // A first stage records the refusal as a failure (below): no blocked event of its own.
      { history, step, outcomeFollows: !flow.userId },
    );
    if (fds.action === 'deny') {
      if (!flow.userId) {
        // First stage: a refused right proof must look like a wrong one (no oracle for guesses).
        await this.deps.exchanges.burnIfSpent(exchange.key);
        await record('verification.failure', `fds:${fds.reasons.join(',')}`);
        throw wrongProof(attemptsLeft);
      }
      await this.deps.exchanges.revoke(exchange.key, 'fds');
      throw fdsBlocked(fds.retryAfter);
    }

    // Single use: the conditional update picks exactly one winner among concurrent requests.
    if (!(await this.deps.exchanges.consume(exchange.key))) throw verificationError('EXCHANGE_USED');
    if (outcome.commit && !(await outcome.commit())) {
      await record('verification.failure', 'already_consumed');
      throw verificationError('VERIFICATION_FAILED');
    }
    await this.deps.statuses.authenticate(exchange.statusKey, outcome.amr ?? method.amr, {
      ...(state.discovered ? { userId: user.id } : {}),
      stepUp: fds.action === 'step_up',
      // A step-up asks for more: it outweighs a request to finish with this method alone.
      singleFactor: Boolean(state.singleFactor) && fds.action !== 'step_up',
      ttlSeconds: this.deps.config.verification.status_ttl,
      from: method.device ? ['ALLOWED'] : ['INITIATED'],
    });
    await record('verification.success', fds.action === 'step_up' ? 'step_up' : null);
    const statusId = exchange.statusSeal
      ? this.deps.secretBox.decrypt(exchange.statusSeal)
      : this.statusIdOf(input.fields.exchange_id!);
    return { status_id: statusId, sub: user.id };
  }

  /**
   * The method's own check. A device method's proof is checked by the core first (the push's
   * device, its signature over this call, the number); the method then sees the device.
   */
  private async methodOutcome(
    method: AuthMethod,
    exchange: Exchange,
    clientId: string,
    user: UserRecord,
    input: VerifyInput,
    /** The context the pipeline made for this user already (its credential reads are reused). */
    made?: MethodContext,
  ): Promise<VerifyOutcome> {
    let ctx: VerifyContext = {
      ...(made?.user.id === user.id
        ? made
        : this.methodContext(user, method.id, { clientId, request: input.request, logger: input.logger })),
      fields: input.fields,
      files: input.files,
      state: exchange.state,
    };
    if (method.device) {
      const request: DeviceRequest = {
        fields: input.fields,
        files: input.files,
        proof: input.device?.proof,
        path: input.device?.path ?? '',
        request: input.request,
      };
      const checked = await this.deps.pushes.checkVerification(method, exchange, request);
      if (!checked.ok) return checked;
      ctx = { ...ctx, device: { ...boundDevice(checked.device), userVerified: checked.uv } };
    }
    return this.deps.tracing.span('method.verify', { 'gatehouse.method': method.id }, () => method.verify(ctx));
  }

  private stepDeps(method: AuthMethod): StepDeps {
    const at = (s: VerifyState): At => ({ clientId: s.flow!.clientId, request: s.request, logger: s.logger });
    return {
      findExchange: (id) => this.deps.exchanges.find(id),
      findFlow: (id) => this.deps.flows.get(id),
      findApp: (clientId) => this.app(clientId),
      findUser: (id) => this.deps.services.users.findById(id),
      identify: (s) =>
        method.discoverable!.identify({
          ...this.discoverableContext(method, at(s), s.exchange!.expiresAt),
          fields: s.fields,
          state: s.exchange!.state,
        }),
      methodContext: (s, user) =>
        (s.methodContext ??= {
          ...this.methodContext(user, method.id, at(s)),
          credentials: readOnce(this.deps.services.credentials(user.id, method.id)),
        }),
      knownFields: () => this.knownFields,
      now: () => this.deps.clock.now(),
    };
  }

  /** The method that takes a field (`password` for a password form), for routes that name a field, not a method. */
  methodWithField(field: string): AuthMethod {
    const method = [...this.deps.extensions.methods.values()].find((m) => m.verifyFields.includes(field));
    if (!method) throw verificationError('METHOD_NOT_FOUND', `no method takes ${field}`);
    return method;
  }

  /**
   * The login page (or app) gives up on an exchange (`…/{method}/cancel`): it and its status
   * end, CANCELLED, so a device or a later call cannot complete it.
   */
  async cancel(
    methodId: string,
    fields: Record<string, string>,
    keys: string[],
    request: RequestFacts,
    logger: Logger,
  ) {
    const method = this.method(methodId);
    const state: VerifyState = { method, fields, keys, malformed: [], files: [], request, logger };
    for (const check of EXCHANGE_STEPS) await check(state, this.stepDeps(method));
    const exchange = state.exchange!;
    await this.deps.exchanges.revoke(exchange.key, 'cancelled');
    await this.deps.statuses.transition(exchange.statusKey, LIVE_STATES, 'CANCELLED');
    await this.deps.services.events.record({
      type: 'verification.cancelled',
      userId: exchange.userId,
      method: method.id,
      ip: request.ip,
      reason: (fields.reason ?? '').slice(0, 64) || null,
    });
    return { exchange_id: fields.exchange_id!, status: 'CANCELLED' };
  }

  /**
   * A device's step on a push (acknowledge, allow, deny, cancel): the exchange passes the
   * verification's own exchange checks (a), then the push side takes over (docs/devices.md).
   */
  async pushStep(methodId: string, step: PushStep, req: DeviceRequest & { keys: string[]; logger: Logger }) {
    const method = this.method(methodId);
    if (!method.device) throw verificationError('METHOD_NOT_FOUND', `${method.id} has no push steps`);
    requireFields(req.fields, ['exchange_id', 'push_id', 'device_id', 'client_id']);
    const state: VerifyState = { method, ...req, malformed: [] };
    for (const check of EXCHANGE_STEPS) await check(state, this.stepDeps(method));
    return this.deps.pushes.step(step, state.exchange!, req);
  }

  /**
   * Checks a proof outside a login flow (the OAuth password grant): the method plugin, then the
   * FDS rules, with the same events, so brute force is counted exactly like a login.
   */
  async authenticateDirect(input: {
    method: string;
    identifier: string;
    fields: Record<string, string>;
    clientId: string;
    request: RequestFacts;
    logger: Logger;
  }): Promise<{ ok: true; user: UserRecord; amr: string[] } | { ok: false; reason: string }> {
    const method = this.deps.extensions.methods.get(input.method);
    if (!method) return { ok: false, reason: 'method_not_registered' };
    const app = this.app(input.clientId);
    if (!app || !appMethods(app).includes(method.id)) return { ok: false, reason: 'method_not_enabled' };
    const at: At = { clientId: input.clientId, request: input.request, logger: input.logger };
    const found = await this.deps.services.users.findByIdentifier(input.identifier);
    const usable =
      found && found.status === 'active' ? await method.isEnrolled(this.methodContext(found, method.id, at)) : false;
    const user = usable ? found! : phantomUser(input.identifier);
    const outcome = await this.deps.tracing.span('method.verify', { 'gatehouse.method': method.id }, () =>
      method.verify({
        ...this.methodContext(user, method.id, at),
        fields: input.fields,
        files: [],
        state: {},
      }),
    );
    const subject: Subject = { user, method: method.id, ...at };
    const step = randomUUID();
    const event = (type: string, reason: string | null) =>
      this.recordOutcome(type, { ...subject, userId: usable ? user.id : null }, reason, { grant: 'password', step });
    if (!outcome.ok || !usable) {
      if (usable) this.noticeReplay(outcome, subject);
      await event('verification.failure', outcome.ok ? 'unknown_user' : outcome.reason);
      return { ok: false, reason: outcome.ok ? 'unknown_user' : outcome.reason };
    }
    const fds = await this.runRules(this.fdsRules, 'verification', subject, { step });
    if (fds.action !== 'allow') {
      // A grant cannot step up: a step-up refuses it too (a deny was recorded by runRules).
      if (fds.action === 'step_up') await this.recordBlocked(step, 'verification', subject, fds);
      return { ok: false, reason: `fds:${fds.reasons.join(',')}` };
    }
    if (outcome.commit && !(await outcome.commit())) {
      await event('verification.failure', 'already_consumed');
      return { ok: false, reason: 'already_consumed' };
    }
    await event('verification.success', null);
    return { ok: true, user, amr: method.amr };
  }

  // ─────────────── status and continuation ───────────────

  /**
   * A status as the login page sees it. With `wait`, a long poll: the answer comes once the
   * state differs from `known` (the page's view of it), or after `wait` seconds.
   */
  async status(statusId: string, wait?: { known: string; seconds: number }): Promise<JsonObject> {
    const view = (status: VerificationStatus) =>
      status.consumedAt ? 'CONSUMED' : status.expiresAt <= this.deps.clock.now() ? 'EXPIRED' : status.state;
    const status = wait
      ? await this.deps.statusWatch.until(statusId, wait.known, view, wait.seconds * 1000)
      : await this.deps.statuses.find(statusId);
    if (!status) throw verificationError('STATUS_NOT_FOUND');
    return {
      status_id: statusId,
      status: view(status),
      method: status.method,
      expires_at: status.expiresAt.toISOString(),
    };
  }

  /**
   * Continues a login with an AUTHENTICATED status_id (single use): records the stage as done,
   * binds the flow to the user and says what comes next.
   */
  async continueLogin(fields: Record<string, string>, logger: Logger): Promise<ContinueResult> {
    requireFields(fields, ['requestId', 'status_id']);
    const status = await this.deps.statuses.find(fields.status_id!);
    if (!status) throw verificationError('STATUS_NOT_FOUND');
    if (
      status.flowId !== fields.requestId ||
      (fields.verificationType && fields.verificationType.toUpperCase() !== status.method) ||
      (fields.sub && fields.sub !== status.userId)
    ) {
      throw verificationError('STATUS_MISMATCH');
    }
    if (status.consumedAt) throw verificationError('STATUS_USED');
    if (status.state !== 'AUTHENTICATED') throw verificationError('STATUS_NOT_AUTHENTICATED');
    if (status.expiresAt <= this.deps.clock.now()) throw verificationError('STATUS_EXPIRED');
    // Consume first: among parallel continuations exactly one gets past here, and the others
    // learn that the status was used rather than that the flow moved on.
    if (!(await this.deps.statuses.consume(status.key))) throw verificationError('STATUS_USED');
    const flow = await this.activeFlow(fields.requestId);
    if (flow.stage !== status.stage) throw verificationError('WRONG_FLOW_STAGE');

    // A step-up asks for one more stage: any method of the app not used in this login yet.
    const extraStage = status.stepUp ? this.stepUpMethods(flow.clientId, [...flow.methods, status.method]) : null;
    if (status.stepUp && extraStage?.length === 0)
      throw verificationError('FDS_BLOCKED', 'no further method can satisfy the step-up');
    const next = await this.deps.flows.advance(flow, status.stage, {
      userId: status.userId!,
      method: status.method,
      amr: status.amr,
      extraStage,
      alone: status.singleFactor,
    });
    if (!next) throw verificationError('WRONG_FLOW_STAGE');
    const done = { userId: status.userId!, method: status.method, stage: status.stage, stepUp: status.stepUp };
    return this.stageCompleted(flow, next, done, logger);
  }

  /**
   * A stage done (by a proof, or by setting a method up during the login): its event and log
   * line, and what the login offers next.
   */
  async stageCompleted(
    flow: LoginFlow,
    next: LoginFlow,
    done: { userId: string; method: string; stage: number; stepUp: boolean; setup?: true },
    logger: Logger,
  ): Promise<ContinueResult> {
    const completed = next.status === 'completed';
    await this.deps.services.events.record({
      type: 'login.stage_completed',
      userId: done.userId,
      method: done.method,
      clientId: flow.clientId,
      data: { stage: done.stage, completed, step_up: done.stepUp, ...(done.setup ? { setup: true } : {}) },
    });
    logger.info(
      { flow: flow.id, stage: done.stage, method: done.method },
      done.setup ? 'login stage completed by a setup' : 'login stage completed',
    );
    return {
      flow: next,
      completed,
      nextMethods: completed ? [] : offered(next.stages[next.stage] ?? [], next.methods),
    };
  }

  /**
   * The rules that screen registrations (`checksRegistrations`) on an account asked for, not yet
   * made: its user is the phantom with the given addresses, its verdicts named after no user.
   */
  screenRegistration(
    candidate: { username: string; email: string | null; phone: string | null },
    clientId: string,
    request: RequestFacts,
    logger: Logger,
  ): Promise<FdsResult> {
    const user: UserRecord = { id: PHANTOM_USER_ID, ...candidate, status: 'active' };
    const now = this.deps.clock.now();
    const ctx = { phase: 'registration' as const, user, method: REGISTRATION_PSEUDO_METHOD, clientId, request, now };
    return runFdsRules(
      this.registrationChecks,
      { ...ctx, history: this.deps.services.history, logger },
      anyones(this.deps.services.events),
      this.fdsOptions(logger),
    );
  }

  /** How the FDS rules run: the time limit, and where their verdicts are counted and traced. */
  private fdsOptions(logger: Logger) {
    const { metrics, tracing } = this.deps;
    return { timeoutMs: this.deps.config.verification.fds_timeout_ms, logger, metrics, tracing };
  }

  private statusIdOf(exchangeId: string): string {
    return this.deps.services.secrets.mac(`status_id:${exchangeId}`);
  }

  /** A verification outcome as an event: what the velocity and context rules read. */
  private async recordOutcome(
    type: string,
    who: { userId: string | null; method: string; clientId: string | null; request: RequestFacts },
    reason: string | null,
    extra: JsonObject = {},
  ): Promise<void> {
    const { request } = who;
    await this.deps.services.events.record({
      type,
      // Outcomes for no user (unknown identifiers) are anyone's to cause: one row a minute each.
      ...(who.userId === null ? { aggregateSeconds: 60 } : {}),
      // The device (cookie hash): velocity tells the user's known devices from strangers by it.
      key: request.deviceKey,
      userId: who.userId,
      method: who.method,
      clientId: who.clientId,
      ip: request.ip,
      outcome: type === 'verification.success' ? 'success' : 'failure',
      reason,
      data: {
        userAgent: request.userAgent,
        acceptLanguage: request.acceptLanguage,
        deviceId: request.deviceId,
        requestId: request.requestId,
        ...extra,
      },
    });
  }

  /**
   * A step the FDS rules refused with no outcome event of its own (a blocked initiation, attempt
   * or session; a refused grant): its verdicts are folded under this event (`data.step`).
   */
  private recordBlocked(step: string, phase: FdsContext['phase'], at: Subject, result: FdsResult): Promise<void> {
    return this.deps.services.events.record({
      type: 'verification.blocked',
      key: at.request.deviceKey,
      userId: at.user.id,
      method: at.method,
      clientId: at.clientId,
      ip: at.request.ip,
      outcome: result.action,
      reason: `fds:${result.reasons.join(',')}`.slice(0, 255),
      data: { step, phase, requestId: at.request.requestId },
    });
  }

  /** A right code of a spent step (the method's reason `replay`) is a security event. */
  private noticeReplay(outcome: VerifyOutcome, at: Subject): void {
    if (!outcome.ok && outcome.reason === 'replay') {
      const { user, method, request, clientId } = at;
      this.deps.securityEvents.emit({ type: 'code_reuse', user, method, request, clientId, at: this.deps.clock.now() });
    }
  }

  /** The FDS rules, and a notice to the user when they blocked or challenged a sign-in. */
  private async runRules(
    rules: FdsRule[],
    phase: FdsContext['phase'],
    at: Subject,
    opts: {
      /** Shared by the phases of one request (the attempt guard, then the verification). */
      history?: UserHistorySnapshot;
      /** The step's id, on its verdicts and on the event it ends with (a new one if absent). */
      step?: string;
      /**
       * No `verification.blocked` on a deny: the caller records the refusal as the step's
       * outcome (a first stage, where a refusal looks and costs like a wrong proof).
       */
      outcomeFollows?: boolean;
    } = {},
  ) {
    const { user, method, clientId, request, logger } = at;
    const history = opts.history ?? new UserHistorySnapshot(this.deps.services.history, user.id, this.deps.clock.now());
    const step = opts.step ?? randomUUID();
    const result = await runFdsRules(
      rules,
      {
        phase,
        user,
        method,
        clientId,
        request,
        now: history.now,
        // One read of the user's events answers the rules' user-scoped questions.
        history,
        logger,
      },
      history.recording(
        user.id === PHANTOM_USER_ID ? anyones(this.deps.services.events) : this.deps.services.events,
        () => this.deps.clock.now(),
      ),
      { ...this.fdsOptions(logger), step },
    );
    if (result.action === 'deny' && !opts.outcomeFollows && user.id !== PHANTOM_USER_ID)
      await this.recordBlocked(step, phase, at, result);
    // A deny blocked a sign-in attempt in any phase. A step-up takes effect only after a right
    // proof, so only then is it an event (else anyone knowing a username could have them told).
    const type =
      result.action === 'deny'
        ? 'sign_in_blocked'
        : result.action === 'step_up' && phase === 'verification'
          ? 'sign_in_challenged'
          : null;
    if (type) this.deps.securityEvents.emit({ type, user, method, clientId, request, at: this.deps.clock.now() });
    return result;
  }
}

/** What an initiation made: the exchange, its id (the caller's handle) and its status's id. */
interface NewExchangeResult {
  exchangeId: string;
  statusId: string;
  exchange: Exchange;
}

/** Where an initiation happens: its app, its request and its logger. */
function atOf(facts: InitiationFacts): At {
  return { clientId: facts.flow.clientId, request: facts.request, logger: facts.logger };
}

/** A link's number in the initiation's answer: the starting screen shows it (drawn for a phantom too). */
function linkNumber(facts: InitiationFacts): JsonObject {
  return facts.linkFacts ? { link_number: facts.linkFacts.number } : {};
}

/** The `method` of FDS contexts in the session phase: no method is being verified. */
export const SESSION_PSEUDO_METHOD = 'SESSION';

/**
 * A wrong proof, with the attempts its exchange has left (the page says "2 attempts left"): the
 * same for an unknown user's phantom and for a refused right proof, so it tells nothing more.
 */
function wrongProof(attemptsLeft: number): ApiError {
  return verificationError('VERIFICATION_FAILED', undefined, { attempts_left: attemptsLeft });
}

/** The `method` of FDS contexts in the registration phase (plugin API 1.3). */
export const REGISTRATION_PSEUDO_METHOD = 'REGISTRATION';

function fdsBlocked(retryAfter?: number): ApiError {
  return verificationError('FDS_BLOCKED', undefined, retryAfter ? { retry_after: retryAfter } : undefined);
}

/**
 * The events of the phantom's FDS verdicts, as its outcomes: anyone's to cause, so named after
 * no user and aggregated (one row a minute each).
 */
function anyones(events: EventLog): EventLog {
  const aggregated = (e: NewEvent): NewEvent => ({ ...e, userId: null, aggregateSeconds: 60 });
  return {
    record: (e) => events.record(aggregated(e)),
    // Aggregated events are written one by one anyway (EventStore.recordMany).
    recordMany: async (list) => {
      for (const e of list) await events.record(aggregated(e));
    },
  };
}

/** Rules in the configured order (`verification.fds_rules`, checked at boot), else in registration order. */
function orderedRules(ids: string[] | undefined, extensions: Extensions): FdsRule[] {
  return ids ? ids.map((id) => extensions.fdsRules.get(id)!) : extensions.fdsRules.values();
}
