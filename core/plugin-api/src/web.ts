import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import type { JWTVerifyGetKey } from 'jose';
import type { OAuthClient } from './client.js';
import type { AuthMethod, EnrollmentOutcome, RequestFacts } from './extensions.js';
import type { SafeHtml } from './html.js';
import type { Brand, HostedLoginInput, HostedLoginResult, IdTokenHint, MethodCompletion } from './login.js';
import type { Messages } from './messages.js';
import type { StoredToken } from './oauth.js';
import type { ErrorRef, RouteSpec } from './routes.js';
import type { JsonObject, UserRecord } from './values.js';

/** The browser's signed-in session, as single sign-on sees it. */
export interface BrowserSession {
  sid: string;
  userId: string;
  /** Epoch seconds of the latest method. */
  authTime: number;
  /** The methods completed, each with when (epoch seconds). */
  methods: MethodCompletion[];
}

/** A limit named by a plugin, counted on every node: `hit` answers the seconds to wait, or null. */
export interface NamedLimit {
  hit(key: string): Promise<number | null>;
}

/** A plugin's messages, by locale (`en` required): `{ en: { 'device.title': 'Connect a device' } }`. */
export type PluginCatalogs = Record<string, Record<string, string>>;

/** A page in the hosted pages' layout: style sheet, security headers, the locale's `lang`. */
export interface PluginPage {
  title: string;
  /** Markup made with `html` (every value escaped). */
  body: SafeHtml;
  status?: number;
  /** Where the page's forms may post besides Gatehouse itself (CSP form-action). */
  formTargets?: string[];
  /** Since 1.3: the page's language from these first (a login's `ui_locales`), then the browser's (`lang`). */
  uiLocales?: string | null;
  /** Since 1.3: the app whose brand the page shows (a step of its login); else the global brand. */
  app?: string | null;
  /**
   * Since 1.3: the page's Referrer-Policy; `same-origin` by default (a form on it that checks
   * `Origin`, `csrf.valid`, needs that). `no-referrer` for a page whose URL carries a secret.
   */
  referrer?: 'no-referrer' | 'same-origin';
}

/** Since plugin API 1.3: a login flow as a plugin sees it (read-only). */
export interface LoginFlowView {
  readonly id: string;
  readonly clientId: string;
  /** The app's name (`apps[i].name`, else its client id). */
  readonly clientName: string;
  /** Known once a stage named them. */
  readonly userId: string | null;
  /** Index into `stages` of the stage to do next. */
  readonly stage: number;
  /** The methods allowed per stage. */
  readonly stages: readonly (readonly string[])[];
  /** The methods completed in this login. */
  readonly methods: readonly string[];
  /** `active` while it can move on; `completed`, `finished`, `cancelled` after. */
  readonly status: string;
  readonly expiresAt: Date;
  /** The authorization request's parameters (`ui_locales`, `login_hint`, …); null for an API caller's flow. */
  readonly oauth: Readonly<Record<string, unknown>> | null;
  /** Since 1.3: the app's settings of the keys plugins declare in `appConfig` (`client.settings`). */
  readonly appSettings: Readonly<Record<string, unknown>>;
}

/** Since plugin API 1.3: where a continuation took the login. */
export interface LoginContinuation {
  flow: LoginFlowView;
  completed: boolean;
  /** The methods of the next stage (none once completed). */
  nextMethods: string[];
  /** Where the browser goes: the next stage (the hosted page or the app's login UI), or back to the app. */
  location: string;
}

/** Since plugin API 1.3: what a sign-in link carries (`processingType: LINK`), as the browser sent it back. */
export interface SignInLink {
  /** The method of the link's path (`EMAIL`, any case). */
  method: string;
  exchangeId: unknown;
  token: unknown;
}

/**
 * Since plugin API 1.3: why a sign-in link does not work, the link page's message
 * `link.problem.<problem>`: not a link of a method that sends them, or no such exchange
 * (`invalid`); used, cancelled or replaced (`revoked`), expired; its login is over; or its
 * proof was refused (`refused`: a wrong token spends one of the exchange's attempts).
 */
export type SignInLinkProblem = 'invalid' | 'used' | 'revoked' | 'expired' | 'over' | 'refused';

/**
 * Since plugin API 1.3: what a sign-in link's page on another device shows, so the user can tell
 * the sign-in they started from someone else's: the browser that started it, when, and a number
 * the starting screen shows too (the initiation's `link_number`).
 */
export interface LinkFacts {
  /** Two digits from crypto randomness (as number matching's), drawn at initiation. */
  number: number;
  browser: string | null;
  os: string | null;
  /** When the sign-in link was asked for, ms since the epoch. */
  startedAt: number;
}

/** Since plugin API 1.3: what opening a sign-in link did (`loginFlows.openLink`). */
export type SignInLinkOpened =
  /** In the browser doing the login: verified, and the login moved on (send the browser to `location`). */
  | { outcome: 'continued'; continuation: LoginContinuation }
  /** Anywhere else: nothing verified; ask, showing the flow's app and the sign-in's facts (null for an older exchange). */
  | { outcome: 'confirm'; flow: LoginFlowView; facts: LinkFacts | null }
  | { outcome: 'refused'; problem: SignInLinkProblem };

/** Since plugin API 1.3: what the answer on a sign-in link's page did (`loginFlows.answerLink`). */
export type SignInLinkAnswered =
  { outcome: 'confirmed' | 'denied'; flow: LoginFlowView } | { outcome: 'refused'; problem: SignInLinkProblem };

/**
 * Since plugin API 1.3 (`api.web.loginFlows`): the login flows of the core, for a plugin that
 * moves them on from its own routes (an app's own login UI, decision 40). Every rule the core's
 * own continuation keeps holds here: the browser binding, the first claim of a generated flow
 * (decision 20), the login-CSRF `Origin` check, and a cross-site claim makes no SSO session.
 */
export interface LoginFlowsApi {
  /** The flow of a request id, open or not; null when there is none. */
  get(requestId: unknown): Promise<LoginFlowView | null>;
  /** The flow of a request id that can still move on; throws FIELD_MISSING, REQUEST_NOT_FOUND, REQUEST_EXPIRED or REQUEST_COMPLETED. */
  open(requestId: unknown): Promise<LoginFlowView>;
  /**
   * The open flow a track id names at its current stage (the `track_id` an app's login UI gets
   * with `sub`, decision 34). It travels in a URL: check a party of the login too (`isBound`, or
   * the app's client authentication). Throws REQUEST_NOT_FOUND, REQUEST_EXPIRED,
   * REQUEST_COMPLETED, or FLOW_NOT_BOUND for a track id of another stage.
   */
  byTrackId(trackId: string): Promise<LoginFlowView>;
  /** Whether this browser holds the flow's cookie (or the flow, an API caller's, has no binding). */
  isBound(req: IncomingMessage, flow: LoginFlowView): boolean;
  /**
   * Admits a browser's continuation of the flow, before its step runs: the form's `Origin` must
   * be Gatehouse's or the app's (else ORIGIN_NOT_ALLOWED), then the browser must hold the flow's
   * cookie, or the flow is an unclaimed generated one and this request claims it for its browser
   * (sets the cookie; a claim from another origin than Gatehouse's makes no SSO session); else
   * FLOW_NOT_BOUND. An unknown request id passes here and fails at the step.
   */
  admit(req: IncomingMessage, res: Response, requestId: string | undefined): Promise<void>;
  /** Continues the login with an AUTHENTICATED `status_id` of its stage (single use). */
  continue(
    req: IncomingMessage,
    fields: { requestId?: string; status_id?: string; verificationType?: string; sub?: string },
  ): Promise<LoginContinuation>;
  /** Proves a password for the flow's stage (the method that takes `password`) and continues with it. */
  continueWithPassword(
    req: IncomingMessage,
    input: { requestId: string; username: string; password: string },
  ): Promise<LoginContinuation>;
  /**
   * Starts an unclaimed flow for an app with a `login_page_url` from authorization request
   * parameters, validated as /authorize validates them, counted in /authorize's per-address
   * limit; no single sign-on, `prompt=none` refused. Throws OAuthError.
   */
  generate(req: Request, res: Response, params: Record<string, string>): Promise<LoginFlowView>;
  /** The registered methods of the flow's current stage. */
  stageMethods(flow: LoginFlowView): AuthMethod[];
  /** A registered method by id (any case); throws METHOD_NOT_FOUND. */
  method(id: string): AuthMethod;
  /** The app's own login UI for the flow, with `extra` in its query (`error`); null for an app with the hosted page. */
  loginUiUrl(flow: LoginFlowView, extra?: Record<string, string>): string | null;

  // Since 1.3, for a plugin that is the hosted login page (decision 43).

  /**
   * The core's page messages (core/locales with `locales.messages_dir`) for a login's page: the
   * flow's `ui_locales`, then the browser's languages. Methods' texts are `method.<ID>.…` there.
   */
  messages(req: IncomingMessage, flow?: LoginFlowView | null): Messages;
  /** Where a page of the flow may post besides Gatehouse (CSP form-action): the app's redirect URIs' origins. */
  formTargets(flow: LoginFlowView): string[];
  /** Whether `user` has `methodId` set up, as the verification service answers it for this request and app. */
  isEnrolled(req: IncomingMessage, flow: LoginFlowView, user: UserRecord, methodId: string): Promise<boolean>;
  /** The token of the page's "back to the app" form (`POST /login/cancel`); null for a flow no app started. */
  cancelToken(req: IncomingMessage, flow: LoginFlowView): string | null;
  /**
   * Who the flow is for, once a stage named them: the name to show, the token of the sign-out
   * form (`POST /session/end_session`) when this browser's session is theirs and a plugin serves
   * that endpoint (discovery's `end_session_endpoint`), and the URL that starts the app's login
   * over without its `login_hint` (null while the session is theirs and nothing signs it out).
   */
  signedInAs(
    req: IncomingMessage,
    flow: LoginFlowView,
  ): Promise<{ name: string; signOutCsrf: string | null; restartUrl: string | null } | null>;
  /** The app's login started over from its first stage, without its `login_hint`; null for a flow no app started. */
  restartUrl(flow: LoginFlowView): string | null;
  /** Gives the browser the device cookie failed sign-ins are told apart by (once). */
  markDevice(req: IncomingMessage, res: Response): void;
  /**
   * The method to offer after a completed login (its `page.offer`; the binding rule of the setup
   * API holds), or null. A page that continues the login itself (page-login's `/login/finish`)
   * asks it once the login completed and shows its offer page instead of `location`; the core's
   * own continuation offers nothing.
   */
  offer(req: IncomingMessage, flow: LoginFlowView): Promise<AuthMethod | null>;
  /** "Not now": the method is not offered to the flow's user again for 30 days. */
  declineOffer(flow: LoginFlowView, methodId: string): Promise<void>;
  /** Where the browser goes once a completed login is done with: back to the app (or a plugin's page). */
  completedLocation(flow: LoginFlowView): string;

  // Since 1.3, for a plugin that registers users (prompt=create, decision 46).

  /**
   * The page of the plugin that answers `prompt` (`create`: registration) for the flow's app,
   * with the flow's `request_id`; null when no plugin does, or not for this app. For the hosted
   * login page's "Create an account" link.
   */
  promptUrl(flow: LoginFlowView, prompt: 'create'): string | null;

  /**
   * Runs the FDS rules that screen registrations (`checksRegistrations`, phase `registration`)
   * on the account asked for, before it is made: `candidate` is what the registrant gave. Every
   * verdict is stored (named after no user). A deny should refuse the registration.
   */
  screenRegistration(
    req: IncomingMessage,
    flow: LoginFlowView,
    candidate: { username: string; email: string | null; phone: string | null },
  ): Promise<{ action: 'allow' | 'step_up' | 'deny'; reasons: string[]; retryAfter?: number }>;
  /**
   * The account `user` was just made in this login (its address proven as the app asks): the
   * flow, still at its first stage with no user and held by this browser, gets the user, and
   * `methods` (registered method ids, e.g. the password set and the email code proven) count as
   * completed now, each for one stage it is allowed at. The login then continues as a
   * continuation does: with the stages left (`location`, the hosted page), or back to the app.
   * Throws REQUEST_NOT_FOUND, REQUEST_EXPIRED, REQUEST_COMPLETED, FLOW_NOT_BOUND,
   * WRONG_FLOW_STAGE (a user already named, or another request registered first),
   * METHOD_NOT_FOUND. Event `login.registered`.
   */
  registered(
    req: IncomingMessage,
    flow: LoginFlowView,
    user: UserRecord,
    methods: string[],
  ): Promise<LoginContinuation>;

  // Since 1.3, for the page a sign-in link opens (`processingType: LINK`, decision 66).

  /**
   * A sign-in link opened: it must be a link of a method that sends them, to an exchange neither
   * used, cancelled nor expired, of a login still open (else `refused`). In the browser doing
   * that login (it holds the flow's cookie; a flow without a browser binding has none) the link's
   * proof is verified and the login moves on at once: `continued`. Anywhere else nothing is
   * verified (a mail scanner's GET must sign nobody in): `confirm`, for a page that asks and
   * posts the answer to `answerLink`. A proof the verification refuses is `refused` too.
   */
  openLink(req: IncomingMessage, link: SignInLink): Promise<SignInLinkOpened>;
  /**
   * The answer given on a sign-in link's page, in a POST (any other request is `refused`), after
   * `openLink`'s checks: `confirm` verifies the link's proof, so its status turns AUTHENTICATED
   * and the login goes on where it started (this browser signs nobody in); `deny` cancels the
   * exchange and its status (CANCELLED, reason `denied_by_link`). The flow is for the notice page.
   */
  answerLink(req: IncomingMessage, link: SignInLink, answer: 'confirm' | 'deny'): Promise<SignInLinkAnswered>;
}

/**
 * Since plugin API 1.3 (`api.web.setup`): the checks and steps of setting methods up that stay
 * the core's, for the plugin that sets methods up (`methodSetup`, @gatehouse-auth/management,
 * decision 81) and for routes that check a setup's caller (the cidaas-style calls, decision 40).
 */
export interface SetupApi {
  /**
   * The setup API's caller check: the admin token with the user named in `sub`, or the user's own
   * access token from a recent login with the `gatehouse.methods` scope (and their second factor
   * when they have one). Answers the user and the token's app (null for the admin token); throws
   * UNAUTHORIZED, INSUFFICIENT_SCOPE, REAUTHENTICATION_REQUIRED, FIELD_MISSING, USER_NOT_FOUND,
   * or 429 while the address is blocked.
   */
  access(req: Request, res: Response, sub: unknown): Promise<{ user: UserRecord; clientId: string | null }>;
  /**
   * Since 1.3 (decision 81): runs one enrolment handler of `methodId` for `user` (METHOD_NOT_FOUND;
   * ENROLLMENT_NOT_SUPPORTED when the method has no such step), with the request's facts, the
   * files `admit` read and `pending` (what the previous step kept). A refusal is answered, not
   * thrown. The consequences of a finished setup that `replaced` a credential are the core's and
   * happen here: the user's sessions and tokens end and the event `password_changed` is sent.
   */
  run(
    step: 'initiation' | 'scan' | 'verification',
    methodId: string,
    user: UserRecord,
    body: Record<string, unknown>,
    pending: JsonObject | null,
    req: IncomingMessage,
  ): Promise<{ method: AuthMethod; outcome: EnrollmentOutcome }>;
  /** Since 1.3 (decision 81): whether the user has `methodId` set up (no app's options). */
  isEnrolled(user: UserRecord, methodId: string, req: IncomingMessage): Promise<boolean>;
  /** Since 1.3 (decision 81): after a way to sign in was removed, the user's sessions and tokens end. */
  removed(userId: string): Promise<void>;
  /** The app's methods and the user's state of each (what an account page shows); INVALID_FIELD for no such app. */
  overview(user: UserRecord, clientId: unknown, req: IncomingMessage): Promise<JsonObject>;
  /**
   * Since 1.3: the middleware to put before a setup route's body parsers: the caller check of
   * `access` before any body is read (then `access` only finds the user), and a
   * `multipart/form-data` body for the path's `:method`: only the files the method declares, of
   * its types and sizes (INVALID_FIELD, 413); on a path without `:method`, or for a method that
   * takes no files, a multipart body is 400 INVALID_FIELD. `run` hands those files to the method.
   */
  readonly admit: RequestHandler;
  /**
   * The user a login may set `methodId` up for now (decision 34), once the caller proved it is a
   * party of the login: the flow's user, active; a method of the stage to do that they have not
   * set up; and the binding rule (a password alone never binds a credential that signs in by
   * itself, nor a second factor beside one). Throws SETUP_NOT_ALLOWED, METHOD_NOT_ENABLED,
   * METHOD_NOT_FOUND.
   */
  duringLogin(flow: LoginFlowView, methodId: string, req: IncomingMessage): Promise<UserRecord>;
  /**
   * Since 1.3: one step of setting `methodId` up at the stage the login is at, for a caller that
   * proved it is a party of the login: `duringLogin`'s checks first, then `step` (since decision
   * 81 the caller's: `MethodSetup.step` for that user). A step after the initiation that finishes
   * the setup (the user proved the new credential: a code from the app or the phone, a passkey's
   * attestation) completes the stage with the method, as its proof would (event
   * `login.stage_completed` with `setup: true`): `continuation` says where the browser goes. Null
   * while the setup goes on, or when the initiation alone finished it (the user then signs in
   * with the method). Throws what `duringLogin` and `step` throw, and WRONG_FLOW_STAGE when the
   * stage moved on meanwhile.
   */
  stepDuringLogin(
    flow: LoginFlowView,
    methodId: string,
    step: 'initiation' | 'scan' | 'verification',
    req: IncomingMessage,
    run: (user: UserRecord) => Promise<JsonObject>,
  ): Promise<{ response: JsonObject; continuation: LoginContinuation | null }>;
  /**
   * Since 1.3: whether the methods this login completed are enough to bind `methodId` for its
   * user (the binding rule of `duringLogin`, for a completed login: a password alone never binds
   * a credential that signs in by itself, nor a second factor beside one).
   */
  mayBind(flow: LoginFlowView, methodId: string, req: IncomingMessage): Promise<boolean>;
}

/**
 * Since 1.3 (decision 81): setting a user's methods up, listing, renaming and removing them: the
 * service `methodSetup`, which @gatehouse-auth/management provides on `web.setup`; a plugin that
 * uses it (`api.services.resolve<MethodSetup>('methodSetup')`) names management in its
 * `dependencies`. The pending setup between steps, its wrong-code limit and the `exchange_id` of
 * a setup that waits for a confirmation are the provider's.
 */
export interface MethodSetup {
  /**
   * One step of setting `methodId` up for `user` (with the files `web.setup.admit` read). A wrong
   * confirmation code spends one of five attempts, then the setup starts over (TOO_MANY_ATTEMPTS).
   */
  step(
    step: 'initiation' | 'scan' | 'verification',
    methodId: string,
    user: UserRecord,
    body: Record<string, unknown>,
    req: IncomingMessage,
  ): Promise<JsonObject>;
  /**
   * The confirmation of a setup without a bearer (cidaas clients confirm a code this way): the
   * `exchange_id` its initiation answered names the user and the method, and must be live, of
   * this method and of an active user (else EXCHANGE_INVALID). Then `step`'s verification with
   * the other fields (not `sub`).
   */
  confirm(methodId: string, body: Record<string, unknown>, req: IncomingMessage): Promise<JsonObject>;
  /** The user's methods, each with whether it is set up and its credentials' public parts. */
  list(user: UserRecord, req: IncomingMessage): Promise<JsonObject[]>;
  /** Renames one of the user's credentials of a method; CREDENTIAL_NOT_FOUND. */
  rename(user: UserRecord, methodId: string, credentialId: string, label: string): Promise<void>;
  /**
   * Removes one credential of a method, or all of them without `credentialId`; the user's
   * sessions and tokens end when one went. Answers how many; CREDENTIAL_NOT_FOUND.
   */
  remove(user: UserRecord, methodId: string, credentialId?: string): Promise<number>;
  /** `web.setup.stepDuringLogin` with this service's `step` for the login's user. */
  stepDuringLogin(
    flow: LoginFlowView,
    methodId: string,
    step: 'initiation' | 'scan' | 'verification',
    body: Record<string, unknown>,
    req: IncomingMessage,
  ): Promise<{ response: JsonObject; continuation: LoginContinuation | null }>;
}

/**
 * Since plugin API 1.3 (`api.web.devices`): the device API's operations (docs/devices.md), for the
 * plugin that serves its routes (@gatehouse-auth/devices-api, decision 69). Each runs every check
 * inside the core: the body's fields, the `Device-Proof` header (read from `req`, checked against
 * the path of the operation the core runs, `DEVICE_API_PATHS`, never the request's), the binding
 * code's single use, the push's device, exchange and state. The plugin hands over the request and
 * the body it parsed; it never sees a key, an exchange or a status, and moves nothing itself.
 * Refusals are ApiErrors with the codes of docs/devices.md.
 */
export interface DevicesApi {
  /**
   * The app's binding call: the code (live, single use), the new key and the proof made with it
   * (nonce: the code). Answers `{ device_id, sub, name, issuer }`. Throws INVALID_FIELD,
   * BINDING_INVALID, BINDING_EXPIRED, DEVICE_PROOF_INVALID, DEVICE_EXISTS.
   */
  bind(req: IncomingMessage, body: unknown): Promise<JsonObject>;
  /**
   * The device's inbox (proof without nonce): `{ pushes }`, each with a new `exchange_id`.
   * Throws INVALID_FIELD, DEVICE_NOT_FOUND, DEVICE_MISMATCH, DEVICE_PROOF_INVALID.
   */
  inbox(req: IncomingMessage, body: unknown): Promise<JsonObject>;
  /**
   * A step on a push (`PUSH_STEP_NAMES`: acknowledge, allow, deny, cancel) of a device method, the
   * path's `method` as sent: the verification's exchange checks, then the push's device and proof
   * (nonce: the push's challenge), then the state moves. Answers the new state and `exchange_id`.
   * Throws 404 NOT_FOUND for another step, and the codes of `pushStep` in docs/devices.md.
   */
  pushStep(req: IncomingMessage, method: string, step: string, body: unknown): Promise<JsonObject>;
  /** The link and QR code of a live binding code, for the page the link opens in a browser; null otherwise. */
  bindingLink(code: unknown): Promise<{ link: string; qr: string } | null>;
  /** The user's bound devices as the setup API lists them (never a key or push token), last used first. */
  list(user: UserRecord): Promise<JsonObject[]>;
  /** Renames one of the user's devices (`body.name`, 1 to 64 characters): `{ device_id, name }`; DEVICE_NOT_FOUND, INVALID_FIELD. */
  rename(user: UserRecord, deviceId: string, body: unknown): Promise<JsonObject>;
  /** Removes one of the user's devices: its pushes end, what was set up on it goes, and the user's sessions and tokens; DEVICE_NOT_FOUND. */
  remove(user: UserRecord, deviceId: string): Promise<void>;
}

/**
 * Since plugin API 1.3 (`api.web.verification`): the verification service's operations, for the
 * plugin that serves its routes (@gatehouse-auth/verification-api, decision 78). The plugin hands
 * over the request, the path's `method` or status id and the body it parsed; every check is the
 * core's: the spec's order (exchange_id, single_factor_auth, the method's fields, the method,
 * FDS), the exchange's single use, and a device method's `Device-Proof`, checked against the path
 * of the operation run here (`DEVICE_API_PATHS.verify` with the method, after the issuer's
 * path), never the request's. Answers are the envelope's `data`; refusals are ApiErrors with the
 * codes of the verification catalogue. `ip`: the client address a fast route was given (the
 * trust proxy setting applied); leave it out on express routes, whose `req.ip` is read. Take the
 * operations once, in `register` (`const { verify } = web.verification`): a fast route runs per login.
 */
export interface VerificationWebApi {
  /** A method's initiation in a login flow: `{ exchange_id, status_id, … }`. */
  initiate(req: IncomingMessage, method: string, body: unknown, ip?: string): Promise<JsonObject>;
  /** A method's verification (with the files `admit` read): the AUTHENTICATED `{ status_id, sub }`. */
  verify(req: IncomingMessage, method: string, body: unknown, ip?: string): Promise<JsonObject>;
  /**
   * A verification's state; with `query.wait` (seconds, at most 30) and `query.state`, held while
   * the state is that one (long poll). STATUS_NOT_FOUND.
   */
  status(statusId: string, query?: { wait?: unknown; state?: unknown }): Promise<JsonObject>;
  /** Cancels a verification in progress by its `exchange_id`: `{ exchange_id, status: 'CANCELLED' }`. */
  cancel(req: IncomingMessage, method: string, body: unknown): Promise<JsonObject>;
  /**
   * The middleware to put before the verification's body parsers: a `multipart/form-data` body
   * for the path's `:method`, only the files the method declares, of its types and sizes
   * (INVALID_FIELD, 413); for a method that takes no files, 400 INVALID_FIELD.
   */
  readonly admit: RequestHandler;
}

/**
 * Since plugin API 1.2: what an endpoint or page plugin's routes may ask of the core
 * (docs/plugins.md, "Endpoints and pages").
 */
/**
 * Since plugin API 1.3: what the consent page shows (decision 75). The core found the flow this
 * browser holds, completed and waiting for the user's consent.
 */
export interface ConsentPrompt {
  readonly flow: LoginFlowView;
  /** The scopes the app asks for, in the request's order. */
  readonly scopes: readonly string[];
  /** The form's `csrf` field: bound to this browser's cookie of the flow. */
  readonly csrf: string;
  /** Where the answer's redirect may end (CSP form-action): the app's redirect URIs' origins. */
  readonly formTargets: string[];
}

/** Since plugin API 1.3: what the account choice of `prompt=select_account` shows (decision 75). */
export interface AccountPrompt {
  readonly flow: LoginFlowView;
  /** The name of the signed-in user ("Continue as …"). */
  readonly userName: string;
  /** The form's `csrf` field: bound to this browser's cookie of the flow. */
  readonly csrf: string;
  /** Where the answer's redirects may end (CSP form-action): the app's redirect URIs and login UI. */
  readonly formTargets: string[];
}

/**
 * Since plugin API 1.3: the authorization endpoint's choices for the pages that ask them
 * (decision 75). The core redirects to `/login/consent` and `/login/account` with `request_id`
 * only while a plugin mounts a route there. `show` checks the flow (this browser's, in the state
 * that waits for the choice) and answers what to display, or sends the core's error page itself
 * and answers null. `answer` takes the form's fields as posted: it checks the flow, the `csrf`
 * (constant time) and the choice, spends the flow once, and answers the browser itself: the
 * redirect (or form_post page) to the app, the next page of the login, or the error page.
 */
/** Since plugin API 1.3: the consent form's fields, as posted. */
export interface ConsentAnswer {
  requestId: unknown;
  /** `allow`; anything else denies. */
  decision: unknown;
  csrf: unknown;
}

/** Since plugin API 1.3: the account choice's fields, as posted. */
export interface AccountAnswer {
  requestId: unknown;
  /** `continue` or `other`. */
  choice: unknown;
  csrf: unknown;
}

export interface AuthorizeChoicesApi {
  readonly consent: {
    show(req: Request, res: Response, requestId: unknown): Promise<ConsentPrompt | null>;
    /** `decision: 'allow'` remembers the consent and answers the app; anything else is `access_denied`. */
    answer(req: Request, res: Response, form: ConsentAnswer): Promise<void>;
  };
  readonly account: {
    show(req: Request, res: Response, requestId: unknown): Promise<AccountPrompt | null>;
    /**
     * `choice: 'continue'` goes on as the session's user (to the app, or the stages left);
     * `'other'` ends this sign-in and starts the request again for someone else (`prompt=login`,
     * no `login_hint`). Another choice is an error page.
     */
    answer(req: Request, res: Response, form: AccountAnswer): Promise<void>;
  };
}

/** Since 1.3: the access token a request to a protected resource presented, checked (`web.protectedResource`). */
export interface ResourceAccess {
  /** The access token: active, of `kind: 'access'`, its proofs of possession checked. */
  token: StoredToken;
  /** The app it was issued to (still registered). */
  client: OAuthClient;
}

export interface WebApi {
  /** The issuer URL (config `issuer`). */
  readonly issuer: string;
  /** Since 1.3: the issuer's path ('' at the root), the start of every path the browser uses (`PageContext.base`). */
  readonly base: string;
  /** The public URL of a path under the issuer (`/device` → `https://id.example/device`). */
  url(path: string): string;
  /**
   * Since 1.3: every JSON operation the server answers (`defineRoute` declarations): the core's,
   * then the plugins' under their mount paths. Complete once the server is built: read it at
   * request time, never in `register`.
   */
  routeSpecs(): readonly RouteSpec[];
  /** Since 1.3: the registered methods; complete once every plugin has registered (not in `register`). */
  methods(): readonly AuthMethod[];
  /**
   * The client the request authenticates as, with every method the token endpoint supports
   * (Basic, `client_secret`, `client_assertion`, a public client's bare `client_id`) and its
   * throttling; `params` is the request's form. Throws an OAuthError `invalid_client` (401, or
   * 429 while the client is throttled) or `invalid_request`. A public client passes with its bare
   * `client_id`: check `client.isPublic` where only confidential clients may call.
   */
  authenticateClient(req: IncomingMessage, params: Record<string, string>): Promise<OAuthClient>;
  /**
   * The browser's signed-in session: live, not idle, of an active user; null otherwise. It names
   * the user by id: `services.users.findById` gives the record.
   */
  session(req: IncomingMessage): Promise<BrowserSession | null>;
  /**
   * Since 1.3: signs the browser out of Gatehouse: its session ends everywhere (every app's
   * sign-in on it, with back-channel logout) and its cookie is dropped. False when it had none.
   * For a page's "Sign out", after a CSRF-checked POST. `reason` goes into the `session.ended`
   * event: `user` (the default), `rp_initiated` for an app's logout request with its ID token.
   */
  endSession(req: IncomingMessage, res: Response, reason?: 'user' | 'rp_initiated'): Promise<boolean>;
  /** Since 1.3: a registered app (the config's and the database's), or null. */
  client(clientId: string): OAuthClient | null;
  /** Since 1.3: what an end-session endpoint (OpenID Connect RP-Initiated Logout 1.0) checks. */
  readonly logout: {
    /**
     * The browser's session as signing out sees it: any the session cookie names that has not
     * ended or expired (an idle one too: it still ends), its user, its id (an ID token's `sid`)
     * and the token a
     * sign-out form must echo (bound to the cookie, as the hosted login page's "Not you?" form
     * is, `loginFlows.signedInAs`); null without one.
     */
    session(req: IncomingMessage): Promise<{ userId: string; sid: string; csrf: string } | null>;
    /**
     * An `id_token_hint` (RP-Initiated Logout 1.0 §2): an ID token this server signed, expired or
     * not: its subject, its audience, its `sid`; null when it is not one.
     */
    idTokenHint(token: string): Promise<IdTokenHint | null>;
  };
  /**
   * A rate limit of this plugin (`name` unique within it), counted across nodes like the core's:
   * make it in `register`, count with `hit` in handlers. A refused hit counts too; the window is
   * fixed (`Retry-After` is what is left of it).
   */
  limit(name: string, max: number, windowSeconds: number): NamedLimit;
  /**
   * Since 1.3: checks an authorization request's parameters for `client` exactly as /authorize
   * does (redirect URI, response type and mode, scope, PKCE and state as the app requires,
   * prompt, claims…), e.g. a pushed request (RFC 9126 §2.1) before it is stored. `client_id` is
   * the client's. Throws an OAuthError (400) with the code /authorize would answer
   * (`invalid_request` for an unregistered redirect URI, `invalid_scope`, …).
   */
  validateAuthorizationRequest(client: OAuthClient, params: Record<string, string>): void;
  /**
   * Since 1.3: the parameters of an authorization request a client sent in a body (a pushed
   * request, RFC 9126 §3): with `request`, the verified request object's (RFC 9101, by the
   * `api.requestObjects` plugin; `request_not_supported` without one, `invalid_request_object`
   * for one of another app); without, `params` as they are, unless the app must sign its
   * requests (`invalid_request`). Refusals are OAuthErrors (400).
   */
  authorizationParameters(client: OAuthClient, params: Record<string, string>): Promise<Record<string, string>>;
  /**
   * Since 1.3: the app's public keys (its `jwks`, or its `jwks_uri` fetched and cached), for
   * what it signs (request objects); null when it has none. A `jose` key resolver for `jwtVerify`.
   */
  clientKeys(client: OAuthClient): JWTVerifyGetKey | null;
  /**
   * Since 1.3: the key a request's DPoP proof shows (RFC 9449), checked by the token binding
   * plugin as at the token endpoint, for this request's method and URL (`htm`, `htu`): its `jkt`
   * and the headers to answer with (a fresh `DPoP-Nonce`); null when the request carries no
   * proof or no plugin binds tokens. Refusals are the plugin's OAuthErrors (`invalid_dpop_proof`,
   * `use_dpop_nonce`). For the PAR endpoint, which binds the code to that key (§10.1).
   */
  proofOfPossession(
    req: IncomingMessage,
    client: OAuthClient,
  ): Promise<{ jkt: string; headers?: Record<string, string> } | null>;
  /**
   * Since 1.3: the access token a request to a protected resource presents, checked as the core
   * checks tokens: `Authorization: Bearer` (RFC 6750 §2.1), or for a POST whose form the route
   * parsed (`services.http.form()`) its `access_token` (§2.2); a token bound to a key with
   * `Authorization: DPoP` and that key's proof (RFC 9449 §7, by the token binding plugin), a token
   * bound to a certificate over a connection with it (RFC 8705 §3, by its binding). `scope`: a
   * scope the token must hold; `user`: only a user's token (not a client's own). Throws the
   * OAuthError to answer: 401 `invalid_token` (a `WWW-Authenticate: Bearer` challenge, or
   * `DPoP` with the binding's `algs` for a DPoP request or a key-bound token), the binding's own
   * (`invalid_dpop_proof`, `use_dpop_nonce` with a `DPoP-Nonce`), 403 `insufficient_scope`.
   */
  protectedResource(req: IncomingMessage, options?: { scope?: string; user?: boolean }): Promise<ResourceAccess>;
  /**
   * Since 1.3: the errors `protectedResource` may answer on this server (the DPoP ones when a
   * plugin binds tokens to keys), for a route's `errors`; read it in `operations: () => [...]`.
   */
  protectedResourceErrors(): ErrorRef[];
  /**
   * Since 1.3: the user claims an OpenID Connect resource answers for a token: its scopes' (OIDC
   * Core §5.4) and those its authorization request's `claims` parameter named for userinfo
   * (§5.5, as the app may have them), without `sub`; null when the user no longer exists.
   */
  userClaims(access: ResourceAccess): Promise<JsonObject | null>;
  /** The client address of a request (`server.trust_proxy` honoured), for limits and events. */
  clientIp(req: IncomingMessage): string;
  /**
   * Since 1.3: whether the request's connection comes from a trusted proxy (`server.trust_proxy`),
   * so that a header only that proxy sets (a client certificate it forwards) may be believed.
   */
  fromTrustedProxy(req: IncomingMessage): boolean;
  /** A login on the hosted page for one of the apps, started and read by a plugin's page. */
  readonly login: {
    /**
     * Sends the browser through the app's login stages (single sign-on where its session is
     * worth it to the app), then to `returnTo` with `request_id` in its query. Since 1.3,
     * `input.userId` pins the login to that user from its start (no single sign-on; every stage
     * done anew), e.g. a second factor proven during account recovery.
     */
    start(req: Request, res: Response, input: HostedLoginInput): Promise<void>;
    /** Who signed in, for the browser that did it, once; null otherwise. Sets the session cookie. */
    result(req: Request, res: Response, requestId: unknown): Promise<HostedLoginResult | null>;
  };
  /** The plugin's messages for a request: its `ui_locales` if given, then the browser's languages. */
  messages(req: IncomingMessage, uiLocales?: string | null): Messages;
  /**
   * Since 1.3: the hosted pages' headers (CSP, no framing, no caching), for a page of a plugin's
   * own layout. `same-origin` referrer for a page whose forms move a login on (decision 40's
   * `Origin` check refuses the `null` a `no-referrer` page's form sends).
   */
  headers(res: Response, formTargets?: string[], referrer?: 'no-referrer' | 'same-origin', brand?: Brand): void;
  /** Sends a page in the hosted pages' layout, with their headers (CSP, no framing, no caching). */
  page(req: IncomingMessage, res: Response, page: PluginPage): void;
  /**
   * Since 1.3: the brand of an app's pages (its `branding` over the global one), or with no app
   * the global brand (`branding:`), for `PageContext.brand` and `headers`. Nothing configured:
   * every member null.
   */
  brand(clientId?: string | null): Brand;
  /**
   * Form CSRF protection: a token for the form (sets a cookie), checked on its POST with the
   * cookie and an `Origin` that must be Gatehouse's own (a missing or `null` one is refused).
   */
  readonly csrf: {
    token(req: IncomingMessage, res: Response): string;
    valid(req: IncomingMessage, token: unknown): boolean;
  };
  /**
   * Since 1.3: the login flows, for routes that move a login on themselves (an app's own login
   * UI): a flow by request id or track id, its browser binding, the first claim of a generated
   * flow, continuing with a `status_id` or a password (docs/plugins.md, decision 40).
   */
  readonly loginFlows: LoginFlowsApi;
  /** Since 1.3: the setup API's caller check and the core's part of setting methods up (decision 81). */
  readonly setup: SetupApi;
  /** Since 1.3: the device API's operations, every check inside them (decision 69). */
  readonly devices: DevicesApi;
  /** Since 1.3: the verification service's operations, every check inside them (decision 78). */
  readonly verification: VerificationWebApi;
  /** Since 1.3: the consent and account choice of the authorization endpoint, every check inside them (decision 75). */
  readonly authorize: AuthorizeChoicesApi;
  /** Since 1.3: what methods and FDS rules know of a request (address, user agent, languages, …). */
  requestFacts(req: IncomingMessage): RequestFacts;
  /**
   * Since 1.3: the admin token check of the core's admin endpoints (`Authorization: Bearer`,
   * config `admin.token`), throttled the same way: 20 wrong tokens from an address within 5
   * minutes block it on every node and every admin route. Resolves when the token is right;
   * throws an ApiError 403 ADMIN_API_DISABLED (no token configured), 401 UNAUTHORIZED, or 429
   * TOO_MANY_ATTEMPTS with Retry-After (`ADMIN_THROTTLED` documents it).
   */
  requireAdmin(req: Request): Promise<void>;
  /**
   * Since 1.3: whether `admin.token` is set. Without it `requireAdmin` refuses everyone, so a
   * plugin that serves something only behind the token refuses to start instead.
   */
  readonly adminTokenSet: boolean;
}
