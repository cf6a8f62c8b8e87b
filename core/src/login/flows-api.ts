import type {
  AuthMethod,
  Clock,
  EventLog,
  JsonObject,
  LoginContinuation,
  LoginFlowsApi,
  LoginFlowView,
  Messages,
  SignInLink,
  SignInLinkAnswered,
  SignInLinkOpened,
  UserRecord,
} from '@gatehouse-auth/plugin-api';
import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import type { GatehouseConfig } from '../config/schema.js';
import { stagesFor } from '../oauth/acr.js';
import type { BrowserBinding } from '../oauth/authorize/browser.js';
import type { AuthorizeContext } from '../oauth/authorize/context.js';
import { ErrorPage, RedirectError, validate } from '../oauth/authorize/request.js';
import type { ClientRegistry } from '../oauth/clients.js';
import { OAuthError } from '../oauth/errors.js';
import { randomToken, sha256 } from '../util/crypto.js';
import { clientIp, requestFacts } from '../verification/context.js';
import { offered, remainingStages } from '../verification/stages.js';
import { verificationError } from '../verification/errors.js';
import type { ExchangeStore } from '../verification/exchanges.js';
import { flowClosedReason, type LoginFlow, type LoginFlowStore } from '../verification/flows.js';
import type { Extensions } from '../plugins/loader.js';
import type { VerificationService } from '../verification/service.js';
import type { LoginRedirects } from '../verification/redirects.js';
import type { LoginUi } from './custom-ui.js';
import { checkContinuationOrigin, continuationOrigins } from './form-origin.js';
import type { DeviceCookie } from '../http/device.js';
import { readCookie } from '../http/cookies.js';
import type { Locales } from '../i18n/locales.js';
import { flowFormToken, sessionCookieName } from '../oauth/authorize/browser.js';
import { authorizeUrlOf, type AuthorizationRequest } from '../oauth/authorize/request.js';
import { logoutCsrf } from '../oauth/logout.js';
import { END_SESSION_PATH } from '../plugins/composition.js';
import type { SessionStore } from '../oauth/sessions.js';
import type { UserService } from '../users/users.js';
import { redirectSources } from '@gatehouse-auth/plugin-api';
import type { SetupOffers } from '../verification/setup-offers.js';
import { SignInLinks } from './sign-in-links.js';

export interface LoginFlowsDeps {
  config: GatehouseConfig;
  flows: LoginFlowStore;
  exchanges: Pick<ExchangeStore, 'find'>;
  clients: ClientRegistry;
  binding: Pick<BrowserBinding, 'isBound' | 'isUnclaimed' | 'flowCookie' | 'cookieOptions'>;
  verification: Pick<
    VerificationService,
    | 'continueLogin'
    | 'proveAndContinue'
    | 'methodWithField'
    | 'initiate'
    | 'method'
    | 'isEnrolled'
    | 'screenRegistration'
    | 'verifyProof'
    | 'cancel'
  >;
  loginRedirects: LoginRedirects;
  loginUi: LoginUi;
  extensions: Pick<Extensions, 'methods' | 'prompts' | 'metadata'>;
  /** The authorization endpoint's steps: its per-address limit, its request resolution, its pages' paths. */
  authorizeContext: Pick<AuthorizeContext, 'flowStartWait' | 'requestQuery' | 'flowUrl' | 'page'>;
  clock: Clock;
  locales: Locales;
  users: Pick<UserService, 'findById'>;
  sessions: Pick<SessionStore, 'get'>;
  device: DeviceCookie;
  setupOffers: Pick<SetupOffers, 'pick' | 'decline'>;
  events: EventLog;
}

/** The core's login flows for plugins, and for its own continuation (the hosted page's). */
export class LoginFlows implements LoginFlowsApi {
  private readonly full = new WeakMap<LoginFlowView, LoginFlow>();
  private readonly issuerOrigin: string;
  private readonly links: SignInLinks;

  constructor(private readonly deps: LoginFlowsDeps) {
    this.links = new SignInLinks(deps, this);
    this.issuerOrigin = new URL(deps.config.issuer).origin;
  }

  /** The view of a flow; the API's other calls find the flow behind it. */
  view(flow: LoginFlow): LoginFlowView {
    const oauth = flow.params.oauth;
    const view: LoginFlowView = {
      id: flow.id,
      clientId: flow.clientId,
      clientName: this.deps.clients.get(flow.clientId)?.name ?? flow.clientId,
      userId: flow.userId,
      stage: flow.stage,
      stages: flow.stages,
      methods: flow.methods,
      status: flow.status,
      expiresAt: flow.expiresAt,
      oauth: oauth && typeof oauth === 'object' && !Array.isArray(oauth) ? oauth : null,
      appSettings: this.deps.clients.get(flow.clientId)?.settings ?? {},
    };
    this.full.set(view, flow);
    return view;
  }

  /** The flow behind a view this API returned. */
  flowOf(view: LoginFlowView): LoginFlow {
    const flow = this.full.get(view);
    if (!flow) throw new Error('not a flow of api.web.loginFlows');
    return flow;
  }

  async get(requestId: unknown): Promise<LoginFlowView | null> {
    if (typeof requestId !== 'string' || !requestId || requestId.length > 200) return null;
    const flow = await this.deps.flows.get(requestId);
    return flow ? this.view(flow) : null;
  }

  async open(requestId: unknown): Promise<LoginFlowView> {
    if (!requestId) throw verificationError('FIELD_MISSING', 'missing: request_id', { fields: ['request_id'] });
    const flow = await this.get(requestId);
    if (!flow) throw verificationError('REQUEST_NOT_FOUND');
    const closed = flowClosedReason(this.flowOf(flow), this.deps.clock.now());
    if (closed) throw verificationError(closed);
    return flow;
  }

  async byTrackId(trackId: string): Promise<LoginFlowView> {
    const flow = await this.get(trackId.split('.')[0]);
    if (!flow) throw verificationError('REQUEST_NOT_FOUND');
    const closed = flowClosedReason(this.flowOf(flow), this.deps.clock.now());
    if (closed) throw verificationError(closed);
    if (!this.deps.loginUi.isTrackOf(trackId, flow)) {
      throw verificationError('FLOW_NOT_BOUND', 'the track_id is not the one of this login at its current stage');
    }
    return flow;
  }

  isBound(req: IncomingMessage, flow: LoginFlowView): boolean {
    return this.deps.binding.isBound(req, this.flowOf(flow));
  }

  async admit(req: IncomingMessage, res: Response, requestId: string | undefined): Promise<void> {
    const { binding, flows } = this.deps;
    const flow = requestId ? await flows.get(requestId) : null;
    if (!flow) return;
    const origin = checkContinuationOrigin(
      req,
      flow,
      continuationOrigins(this.deps.config.issuer, this.deps.clients.get(flow.clientId)),
    );
    if (binding.isBound(req, flow)) return;
    if (!binding.isUnclaimed(flow)) throw verificationError('FLOW_NOT_BOUND');
    const value = randomToken(24);
    if (!(await flows.claim(flow.id, sha256(value), { crossSite: origin !== this.issuerOrigin }))) {
      throw verificationError('FLOW_NOT_BOUND');
    }
    const left = Math.max(1, Math.ceil((flow.expiresAt.getTime() - this.deps.clock.now().getTime()) / 1000));
    res.cookie(binding.flowCookie(flow.id), value, binding.cookieOptions(left, true));
  }

  async continue(
    req: IncomingMessage,
    fields: { requestId?: string; status_id?: string; verificationType?: string; sub?: string },
  ): Promise<LoginContinuation> {
    const given = Object.fromEntries(
      Object.entries(fields).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
    return this.continuation(await this.deps.verification.continueLogin(given, req.log));
  }

  async continueWithPassword(
    req: IncomingMessage,
    input: { requestId: string; username: string; password: string },
  ): Promise<LoginContinuation> {
    const { verification } = this.deps;
    const method = verification.methodWithField('password');
    const request = requestFacts(req);
    const logger = req.log;
    const started = await verification.initiate(method.id, {
      fields: { request_id: input.requestId, usage_type: 'INITIAL_AUTHENTICATION', identifier: input.username },
      request,
      logger,
    });
    const exchangeId = (started.exchange_id as { exchange_id: string }).exchange_id;
    const proof = { exchange_id: exchangeId, password: input.password };
    return this.continuation(await verification.proveAndContinue(method.id, input.requestId, proof, request, logger));
  }

  /** Where a flow that moved on goes next, as the API answers it. */
  continuation(result: { flow: LoginFlow; completed: boolean; nextMethods: string[] }): LoginContinuation {
    const redirects = this.deps.loginRedirects;
    return {
      flow: this.view(result.flow),
      completed: result.completed,
      nextMethods: result.nextMethods,
      location: result.completed ? redirects.completed(result.flow) : redirects.nextStage(result.flow),
    };
  }

  async generate(req: Request, res: Response, params: Record<string, string>): Promise<LoginFlowView> {
    const { clients, flows, config, authorizeContext } = this.deps;
    // The same limit as /authorize's (one counter, every node).
    const wait = await authorizeContext.flowStartWait(req);
    if (wait) {
      res.set('Retry-After', String(wait));
      throw new OAuthError('temporarily_unavailable', 'too many sign-in requests from this address', 429);
    }
    let request;
    try {
      // A pushed request's request_uri, a request object's request, stand for their parameters (plugin API 1.3).
      const query = `?${new URLSearchParams(params).toString()}`;
      request = validate(await authorizeContext.requestQuery(query), clients);
    } catch (err) {
      // No redirect: the caller is a script that reads the answer.
      if (err instanceof ErrorPage) throw new OAuthError(err.code, err.message, err.status);
      if (err instanceof RedirectError) throw new OAuthError(err.code, err.message);
      throw err;
    }
    const client = clients.get(request.client_id)!;
    if (!client.loginPageUrl) {
      throw new OAuthError('unauthorized_client', 'the app has no login_page_url; send the browser to /authorize');
    }
    if (!client.loginStages.length) throw new OAuthError('server_error', 'the app has no login stages configured', 500);
    if (request.prompt.includes('none')) {
      throw new OAuthError('login_required', 'a generated request cannot see a browser session; use /authorize');
    }
    const flow = await flows.create({
      clientId: client.clientId,
      stages: stagesFor(client, request),
      ttlSeconds: config.verification.flow_ttl,
      params: { oauth: request as unknown as JsonObject, unclaimed: true },
    });
    return this.view(flow);
  }

  stageMethods(flow: LoginFlowView): AuthMethod[] {
    const methods = this.deps.extensions.methods;
    return (flow.stages[flow.stage] ?? []).flatMap((id) => methods.get(id) ?? []);
  }

  method(id: string): AuthMethod {
    return this.deps.verification.method(id);
  }

  loginUiUrl(flow: LoginFlowView, extra: Record<string, string> = {}): string | null {
    return this.deps.loginUi.url(this.flowOf(flow), extra);
  }

  messages(req: IncomingMessage, flow?: LoginFlowView | null): Messages {
    const uiLocales = flow?.oauth?.ui_locales;
    return this.deps.locales.for(req, typeof uiLocales === 'string' ? uiLocales : null);
  }

  formTargets(flow: LoginFlowView): string[] {
    return redirectSources(this.deps.clients.get(flow.clientId)?.redirectUris ?? []);
  }

  isEnrolled(req: IncomingMessage, flow: LoginFlowView, user: UserRecord, methodId: string): Promise<boolean> {
    const facts = requestFacts(req, undefined, this.deps.device);
    return this.deps.verification.isEnrolled(user, methodId, flow.clientId, facts, req.log);
  }

  cancelToken(req: IncomingMessage, flow: LoginFlowView): string | null {
    return flow.oauth ? flowFormToken(this.deps.config.issuer, req, this.flowOf(flow)) : null;
  }

  async signedInAs(req: IncomingMessage, flow: LoginFlowView) {
    const user = flow.userId ? await this.deps.users.findById(flow.userId) : null;
    if (!user) return null;
    const cookie = readCookie(req, sessionCookieName(this.deps.config.issuer));
    const session = await this.deps.sessions.get(cookie);
    const theirs = session?.userId === user.id;
    const issuer = this.deps.config.issuer.replace(/\/+$/, '');
    // The form posts to the end-session endpoint: only where a plugin serves it there.
    const signOut = this.deps.extensions.metadata.get('end_session_endpoint')?.value === issuer + END_SESSION_PATH;
    return {
      name: user.username,
      signOutCsrf: theirs && signOut ? logoutCsrf(cookie!) : null,
      // Starting over while still signed in as them would only sign them in again.
      restartUrl: theirs && !signOut ? null : this.restartUrl(flow),
    };
  }

  restartUrl(flow: LoginFlowView): string | null {
    const request = flow.oauth as unknown as AuthorizationRequest | null;
    if (!request) return null;
    // Someone else signs in: the app's guess at who it is no longer helps.
    return `${this.deps.authorizeContext.page.base}${authorizeUrlOf({ ...request, login_hint: null })}`;
  }

  markDevice(req: IncomingMessage, res: Response): void {
    this.deps.device.ensure(req, res);
  }

  offer(req: IncomingMessage, flow: LoginFlowView): Promise<AuthMethod | null> {
    return this.deps.setupOffers.pick(this.flowOf(flow), requestFacts(req, undefined, this.deps.device), req.log);
  }

  async declineOffer(flow: LoginFlowView, methodId: string): Promise<void> {
    if (flow.userId) await this.deps.setupOffers.decline(flow.userId, methodId);
  }

  completedLocation(flow: LoginFlowView): string {
    return this.deps.loginRedirects.completed(this.flowOf(flow));
  }

  promptUrl(flow: LoginFlowView, prompt: 'create'): string | null {
    const handler = this.deps.extensions.prompts.get(prompt);
    if (!handler || !this.deps.clients.get(flow.clientId)?.prompts?.includes(prompt)) return null;
    return this.deps.authorizeContext.flowUrl(handler.path, flow);
  }

  screenRegistration(
    req: IncomingMessage,
    flow: LoginFlowView,
    candidate: { username: string; email: string | null; phone: string | null },
  ) {
    const facts = requestFacts(req, undefined, this.deps.device);
    return this.deps.verification.screenRegistration(candidate, flow.clientId, facts, req.log);
  }

  async registered(
    req: IncomingMessage,
    view: LoginFlowView,
    user: UserRecord,
    methodIds: string[],
  ): Promise<LoginContinuation> {
    const flow = this.flowOf(await this.open(view.id));
    if (!this.deps.binding.isBound(req, flow)) throw verificationError('FLOW_NOT_BOUND');
    if (flow.userId !== null || flow.stage !== 0) {
      throw verificationError('WRONG_FLOW_STAGE', 'the login already names its user');
    }
    const methods = [...new Set(methodIds.map((id) => this.deps.verification.method(id)))];
    const at = Math.floor(this.deps.clock.now().getTime() / 1000);
    const completions = methods.map((m) => ({ method: m.id, amr: m.amr, at }));
    // Each method done counts for one stage it is allowed at (the stages as a matching problem);
    // those stages come first, the ones left to do after them.
    const left =
      remainingStages(
        flow.stages,
        completions.map((c) => c.method),
      ) ?? flow.stages;
    const done = flow.stages.filter((stage) => !left.includes(stage));
    const next = await this.deps.flows.register(flow, {
      userId: user.id,
      stages: [...done, ...left],
      stage: done.length,
      completions,
    });
    if (!next) throw verificationError('WRONG_FLOW_STAGE', 'another request moved this login on');
    await this.deps.events.record({
      type: 'login.registered',
      userId: user.id,
      clientId: flow.clientId,
      ip: clientIp(req),
      data: { methods: completions.map((c) => c.method), stages_done: done.length, completed: left.length === 0 },
    });
    const completed = next.status === 'completed';
    return this.continuation({
      flow: next,
      completed,
      nextMethods: completed ? [] : offered(next.stages[next.stage] ?? [], next.methods),
    });
  }

  openLink(req: IncomingMessage, link: SignInLink): Promise<SignInLinkOpened> {
    return this.links.open(req, link);
  }

  answerLink(req: IncomingMessage, link: SignInLink, answer: 'confirm' | 'deny'): Promise<SignInLinkAnswered> {
    return this.links.answer(req, link, answer);
  }
}
