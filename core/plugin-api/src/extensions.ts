/**
 * The extension interfaces a plugin implements. Outcomes are values; only faults throw.
 * Every object here is stateless and shared by all requests: per-request data comes in `ctx`.
 */
import type { Logger } from 'pino';
import type { ZodType } from 'zod';
import type { OAuthClient } from './client.js';
import type { OAuthServices, StoredToken, TokenResponse } from './oauth.js';
import type { JsonObject, UserRecord } from './values.js';

// ───────────────────────────── verification methods ─────────────────────────────

/** Facts about the HTTP request, for methods and FDS rules. */
export interface RequestFacts {
  ip: string;
  userAgent: string;
  acceptLanguage: string;
  /** `X-Device-Id` header, when the client sends one. Client-chosen: a context signal, not proof. */
  deviceId: string | null;
  /**
   * A hash of the device cookie the server set on the hosted login page (null without one):
   * unguessable and not settable by another site, so a rule may trust that a request carrying
   * a key seen at a user's earlier success comes from that user's browser.
   */
  deviceKey: string | null;
  requestId: string;
  /**
   * Since plugin API 1.3: the sign-in request's `ui_locales` (OIDC Core §3.1.2.1) when the
   * request belongs to a login flow that has them, else null. With `acceptLanguage`, what
   * `pickLocale` reads to choose the language of a message to the person.
   */
  uiLocales?: string | null;
}

/** A credential a user enrolled for one method (password hash, TOTP seed, backup code, phone). */
export interface Credential {
  id: string;
  userId: string;
  method: string;
  /** Method-defined kind, e.g. 'password', 'seed', 'code', 'phone'. */
  type: string;
  label: string | null;
  /** Hash or ciphertext; never a plain secret. */
  secret: string | null;
  data: JsonObject;
  /** Monotonic counter (TOTP last time step, FIDO2 sign count). */
  counter: number;
  usedAt: Date | null;
  createdAt: Date;
  /** The authenticator device it was set up on (a pattern): it is removed with the device. */
  deviceId: string | null;
}

export interface NewCredential {
  type: string;
  label?: string | null;
  secret?: string | null;
  data?: JsonObject;
  counter?: number;
  /** Ties the credential to an authenticator device (`ctx.device.deviceId`): removed with it. */
  deviceId?: string | null;
}

/** The credentials of one user for one method. Conditional updates make single use hold. */
export interface CredentialStore {
  list(type?: string): Promise<Credential[]>;
  get(id: string): Promise<Credential | null>;
  add(credential: NewCredential): Promise<Credential>;
  /** Replaces all credentials of `type` at once (e.g. a new set of backup codes). */
  replaceAll(type: string, credentials: NewCredential[]): Promise<Credential[]>;
  remove(id: string): Promise<boolean>;
  /** Marks an unused credential used; false when another request used it first. */
  markUsed(id: string): Promise<boolean>;
  /** Raises `counter` to `value` only if it is currently lower; false otherwise. */
  advanceCounter(id: string, value: number): Promise<boolean>;
  update(id: string, changes: { secret?: string | null; data?: JsonObject; label?: string | null }): Promise<void>;
}

export interface MethodContext {
  user: UserRecord;
  credentials: CredentialStore;
  request: RequestFacts;
  /** The app (client) the login flow belongs to. */
  clientId: string;
  /** This app's options for the method (`apps[i].methods.<ID>`, parsed with `appOptions`), if it has any. */
  appOptions?: unknown;
  logger: Logger;
}

/** An authenticator device as methods see it (docs/devices.md); never its key or push token. */
export interface BoundDevice {
  deviceId: string;
  name: string;
  /** The authenticator app's own id. */
  clientId: string;
  /** Its key signs only after a biometric unlock. */
  biometric: boolean;
}

export interface InitiateContext extends MethodContext {
  /** Chosen medium (enrolled phone, email or device credential id), if the caller named one. */
  mediumId: string | null;
  exchangeExpiresAt: Date;
  /** For a device method: the device the push goes to (the core picked and checked it). */
  device?: BoundDevice;
  /**
   * The caller asked for a link instead of a code (`processingType: LINK`; only for a method
   * with `links`): send `link(token)` for a fresh random token the method keeps a hash of. The
   * link page (`loginFlows.openLink`) hands the token back to `verify` in the method's one verify field.
   */
  link?: (token: string) => string;
}

/** A method's refusal: the API answers `status` with the error `code` and `message`. */
export interface MethodRefusal {
  ok: false;
  code: string;
  status: number;
  message: string;
  /**
   * Since 1.3: seconds until the same request may succeed (a send limit's window): the API
   * answers it as `details.retry_after` and the `Retry-After` header, and the hosted page says
   * when to try again.
   */
  retryAfter?: number;
}

export type InitiateOutcome =
  | {
      ok: true;
      /** Kept on the exchange for verify(); store hashes, not plain codes. */
      state?: JsonObject;
      /** Extra response members, e.g. `medium_text` (a masked destination). */
      response?: JsonObject;
    }
  | MethodRefusal;

export interface UploadedFile {
  fieldName: string;
  mimeType: string;
  size: number;
  buffer: Buffer;
}

export interface VerifyContext extends MethodContext {
  /** The request fields (strings), already checked against `verifyFields`. */
  fields: Record<string, string>;
  files: UploadedFile[];
  state: JsonObject;
  /**
   * For a device method: the device whose signed proof the core checked (its key, this push,
   * this body), and whether that proof claims a biometric unlock.
   */
  device?: BoundDevice & { userVerified: boolean };
}

export type VerifyOutcome =
  | {
      ok: true;
      /**
       * Runs once the whole verification (including FDS) succeeded, to consume what the proof
       * used (a backup code, a TOTP time step). Returns false when another request consumed it
       * first; the verification then fails.
       */
      commit?: () => Promise<boolean>;
      /** The amr this proof earned, where it depends on the proof (a synced passkey: swk); default `method.amr`. */
      amr?: string[];
    }
  /**
   * Never say which part was wrong: `reason` is for the event log only. `final` ends the
   * attempt at once (the exchange is spent, a push is DENIED): for a proof that must not be
   * retried, such as a wrong number in number matching.
   */
  | { ok: false; reason: string; final?: boolean };

/** Enrollment steps under /verification-actions-srv/setup/{method}/... */
export interface EnrollmentContext extends MethodContext {
  body: Record<string, unknown>;
  /** File parts of a multipart setup call (a face photo), for methods that declare `files`. */
  files?: UploadedFile[];
  /** Kept between enrollment steps (pending setup); null on the first step. */
  pending: JsonObject | null;
}

export type EnrollmentOutcome =
  | {
      ok: true;
      response: JsonObject;
      pending?: JsonObject | null;
      done?: boolean;
      /**
       * The new credential replaces one the user signed in with (a new password): the core
       * ends the user's sessions and revokes their tokens, so whoever held the old one loses them.
       */
      replaced?: boolean;
    }
  | MethodRefusal;

export interface EnrollmentHandlers {
  initiate(ctx: EnrollmentContext): Promise<EnrollmentOutcome>;
  /** Optional middle step, e.g. the authenticator app reporting it scanned the QR code. */
  scan?(ctx: EnrollmentContext): Promise<EnrollmentOutcome>;
  /** Confirms a pending setup (e.g. the first TOTP code); absent when initiate completes it. */
  verify?(ctx: EnrollmentContext): Promise<EnrollmentOutcome>;
  /**
   * Since 1.3: credentials brought from another system (`gatehouse users import`, a row's
   * `credentials.<ID>`, as the file gives it): what to store for the user, or why the input is
   * refused (the row is then refused with this message). Store hashes or ciphertext only, as
   * enrolment does. Nothing is written until every row checked out; a method without it refuses
   * rows that carry its credentials.
   */
  import?(input: unknown, ctx: ImportContext): Promise<ImportOutcome>;
}

/** Since 1.3: the user an import is for; not stored yet, so without an id. */
export interface ImportContext {
  user: { username: string; email: string | null; phone: string | null };
  logger: Logger;
}

/** Since 1.3: what an enrollment's `import` makes of one user's input. */
export type ImportOutcome = { ok: true; credentials: NewCredential[] } | { ok: false; message: string };

/** One input of a method on the hosted login page; it fills the verification field `field`. */
export interface PageInput {
  /** The verification field it fills (one of the method's `verifyFields`). */
  field: string;
  /** Shown above the input: "Code from your authenticator app". */
  label: string;
  /** `password` hides what is typed (default `text`). */
  type?: 'text' | 'password';
  /** The HTML autocomplete hint: `current-password`, `one-time-code`… (default `off`). */
  autocomplete?: string;
  /** The HTML inputmode: `numeric` brings up a number pad for codes. */
  inputmode?: 'numeric' | 'text' | 'decimal' | 'tel' | 'email';
  /** A line of help under the input. */
  help?: string;
}

/**
 * How the hosted login page presents a method. Everything is optional but the label; a method
 * that declares no `page` still gets a plain form built from its `verifyFields`.
 *
 * @example
 * page: {
 *   label: 'Security question',
 *   help: 'The answer you gave when you set it up.',
 *   inputs: [{ field: 'answer', label: 'Your answer', autocomplete: 'off' }],
 * }
 */
export interface MethodPage {
  /** The method's name for users, in the picker and in messages: "Text message". */
  label: string;
  /** A line of help shown with the method. */
  help?: string;
  /** The inputs, in order (default: one text input per verify field). */
  inputs?: PageInput[];
  /** The method sends something first (a code): the page shows this button, then the inputs. */
  sends?: { button: string; again?: string };
  /**
   * A browser module (an ES module file, absolute path in the plugin's package) for a ceremony
   * the page cannot do with inputs alone (WebAuthn, waiting for a device). The core serves it
   * under a versioned path; it registers a driver with `window.GatehouseLogin.register(id, driver)`
   * (see docs/plugins.md, "Page modules").
   */
  module?: string;
  /** Files the module imports by relative URL (`./vendor.js`): name → absolute path. */
  moduleFiles?: Record<string, string>;
  /**
   * Offer to set the method up after a login that did not use it (a passkey after a password):
   * the page shows `title` and `text` with a button `accept`, and the module's driver runs
   * `enroll(ctx)` with `ctx.setup(step, body)` (the setup API's steps for this user).
   */
  offer?: { title: string; text: string; accept: string };
  /**
   * The account page offers to run the setup again with no input (a new set of backup codes):
   * a button `button`, with `text` saying what happens; the setup's answer `codes` (a list of
   * strings) is shown once.
   */
  renew?: { button: string; text: string };
}

/**
 * A method a bound authenticator device completes (docs/devices.md). The core runs the push:
 * it picks the device, tells it, takes its signed acknowledge / allow / deny / cancel steps and
 * checks its proof at verification, before the method's own `verify` sees it.
 */
export interface DeviceMethodSpec {
  /** The login page shows a number (`push_selected_number`); the user types it, the device sends it as `pass_code`. */
  numberMatching?: boolean;
  /** Only biometric-bound devices, with proofs that claim the unlock (`uv: true`). */
  userVerification?: boolean;
  /** A delivery channel (kind `push`) that wakes devices with a push token; others poll their inbox. */
  channel?: string;
  /** Whether this device of the user can do the method (PATTERN: it holds a pattern). Default: yes. */
  accepts?(ctx: MethodContext, device: BoundDevice): Promise<boolean>;
}

/** Where a discoverable method starts a first stage nobody named a user for. */
export interface DiscoverableContext {
  clientId: string;
  request: RequestFacts;
  /** This app's options for the method, if it has any. */
  appOptions?: unknown;
  exchangeExpiresAt: Date;
  logger: Logger;
}

/**
 * A method whose proof names the user by itself (a passkey's user handle): it may start the
 * first stage without an identifier. `identify` says whom a proof is for; the core then checks
 * that user as for any other first stage and runs `verify` with them.
 */
export interface DiscoverableMethod {
  initiate(ctx: DiscoverableContext): Promise<InitiateOutcome>;
  /** The user id the proof claims (never trusted alone: `verify` checks the proof), or null. */
  identify(ctx: DiscoverableContext & { fields: Record<string, string>; state: JsonObject }): Promise<string | null>;
}

export interface AuthMethod {
  /** Path segment, upper case: 'TOTP'. */
  id: string;
  /** RFC 8176 authentication method references, e.g. ['otp']. */
  amr: string[];
  /** Fields the verification request must carry besides exchange_id (the spec's matrix). */
  verifyFields: string[];
  /** Multipart file parts the verification takes (FACE: photo). */
  files?: { name: string; maxBytes: number; mimeTypes: string[] }[];
  /** It can send a sign-in link (InitiateContext.link) instead of a code; it has one verify field. */
  links?: boolean;
  /** Only such a method accepts `single_factor_auth` (step b). */
  singleFactor?: boolean;
  /** Completed by an authenticator device through the push steps (docs/devices.md). */
  device?: DeviceMethodSpec;
  /** Starts the first stage without an identifier (passkeys). */
  discoverable?: DiscoverableMethod;
  /** Whether the user has set this method up (Keycloak's configuredFor). */
  isEnrolled(ctx: MethodContext): Promise<boolean>;
  initiate(ctx: InitiateContext): Promise<InitiateOutcome>;
  verify(ctx: VerifyContext): Promise<VerifyOutcome>;
  enrollment?: EnrollmentHandlers;
  /** How the hosted login page presents it (default: a plain form from `verifyFields`). */
  page?: MethodPage;
  /**
   * Schema of this method's per-app options (`apps[i].methods.<ID>`), parsed at start-up; the
   * method reads them in `ctx.appOptions`.
   */
  appOptions?: ZodType;
  /**
   * Error codes its outcomes may carry besides the verification catalogue (docs/verification.md),
   * with their status and meaning: they are listed in /openapi.json for its verification and
   * setup steps.
   */
  errors?: Record<string, readonly [status: number, meaning: string]>;
}

// ───────────────────────────── fraud detection ─────────────────────────────

export type FdsAction = 'allow' | 'step_up' | 'deny';

export interface FdsVerdict {
  action: FdsAction;
  /** Short machine reason, stored with the event: 'velocity.user', 'new_device'. */
  reason?: string;
  /** For growing back-off: seconds until a retry may succeed. */
  retryAfter?: number;
}

export interface EventQuery {
  types?: string[];
  key?: string;
  userId?: string;
  method?: string;
  ip?: string;
  /** Only events at or after this time. */
  since?: Date;
  /** recent(): at most this many; count(): stop counting here. */
  limit?: number;
}

export interface StoredEvent {
  id: string;
  /** When it happened (for an aggregated event: its latest repeat). */
  at: Date;
  /** How many times (1 unless recorded with `aggregateSeconds`). */
  count: number;
  type: string;
  key: string | null;
  userId: string | null;
  method: string | null;
  clientId: string | null;
  ip: string | null;
  outcome: string | null;
  reason: string | null;
  data: JsonObject;
}

/** Read access to recent events, so rules never query tables themselves. */
export interface History {
  count(query: EventQuery): Promise<number>;
  /** Newest first. */
  recent(query: EventQuery): Promise<StoredEvent[]>;
}

export interface FdsContext {
  /**
   * 'initiation': a method is being started. 'attempt': a proof is about to be checked (only
   * rules with `guardsAttempts`). 'verification': a proof was right. 'session': a browser
   * session is about to sign the user in to an app without a new proof (only rules with
   * `checksSessions`; `method` is then `SESSION`). Since plugin API 1.3, 'registration': someone
   * asks for a new account (only rules with `checksRegistrations`; `method` is then
   * `REGISTRATION` and `user` the account asked for, not yet made: the phantom's id, the
   * username, email and phone given).
   */
  phase: 'initiation' | 'attempt' | 'verification' | 'session' | 'registration';
  user: UserRecord;
  method: string;
  clientId: string;
  /**
   * The sign-in's request. For a method a device completes, the browser's request that started
   * the push, not the device's call: the phone is not where the sign-in comes from.
   */
  request: RequestFacts;
  now: Date;
  history: History;
  logger: Logger;
}

export interface FdsRule {
  id: string;
  /**
   * Also run before every proof is checked (phase 'attempt'), so a locked or backed-off factor
   * refuses right and wrong proofs alike and a refusal tells nothing about the proof (velocity).
   */
  guardsAttempts?: boolean;
  /**
   * Also run when an existing browser session would sign the user in to an app (phase
   * 'session'): a deny makes the user sign in again, a step-up asks for one more method.
   * Opt-in, because a rule about attempts (velocity) has nothing to say about a session.
   */
  checksSessions?: boolean;
  /**
   * Since plugin API 1.3: also run when someone registers (phase 'registration', a registration
   * plugin asks with `web.loginFlows.screenRegistration`): a deny refuses the registration (a
   * CAPTCHA, a disposable-domain rule). Opt-in, like `checksSessions`.
   */
  checksRegistrations?: boolean;
  evaluate(ctx: FdsContext): Promise<FdsVerdict>;
}

// ───────────────────────────── delivery channels ─────────────────────────────

export type MessageKind = 'sms' | 'email' | 'voice' | 'push';

export interface OutboundMessage {
  kind: MessageKind;
  /** Phone number (E.164), email address or device id. */
  to: string;
  subject?: string;
  text: string;
  /** Since plugin API 1.3: the language of `subject` and `text` (a BCP 47 tag), for a channel that can say so (a mail's Content-Language, a voice). */
  locale?: string;
  /** Structured extras for machine channels (push payloads). Never put secrets in logs. */
  data?: JsonObject;
}

export interface DeliveryChannel {
  id: string;
  kinds: MessageKind[];
  /** Resolves once the provider accepted the message; rejects on failure. */
  send(message: OutboundMessage): Promise<void>;
}

// ───────────────────────────── OAuth grants ─────────────────────────────

/** What a grant handler receives: an authenticated client and the request's parameters. */
export interface GrantContext {
  /** Already authenticated (or, for a public client, identified), and allowed this grant type. */
  client: OAuthClient;
  /** Form parameters: no duplicates, empty values removed. */
  params: Record<string, string>;
  request: RequestFacts;
  logger: Logger;
  /** Token issuance, codes, refresh tokens, grants, scope checks, user authentication. */
  oauth: OAuthServices;
}

export interface GrantHandler {
  /** The `grant_type` value this handler serves. */
  grantType: string;
  /**
   * The request parameters it reads. The core passes it only these (and `grant_type`,
   * `client_id`): any other parameter is ignored, as RFC 6749 §3.2 asks.
   */
  parameters: string[];
  /**
   * Returns the token response; a client-facing failure is thrown as an OAuthError
   * (`new OAuthError('invalid_grant', '...')`), anything else is a fault.
   */
  handle(ctx: GrantContext): Promise<TokenResponse>;
  /**
   * Since plugin API 1.2: the OAuth errors its answers may carry besides the token endpoint's own,
   * for /openapi.json: a code of the catalogue by name (`'authorization_pending'`), or with the
   * status it answers (`{ code: 'slow_down', status: 400, description }`). An unknown code stops
   * start-up.
   */
  errors?: readonly ({ code: string; status: number; description?: string } | string)[];
  /**
   * Claims introspection adds for a token this grant issued (read from what the grant stored
   * with it, `token.data`), e.g. client credentials' `service_subject_type`. Return `{}` for
   * tokens of other grants.
   */
  introspectionClaims?(token: StoredToken): JsonObject;
}

/**
 * Since plugin API 1.3 (`api.authorizationRequests`): what an authorization request's
 * `request_uri` stands for, e.g. a pushed authorization request (RFC 9126). One per server.
 */
export interface AuthorizationRequestResolver {
  /**
   * The parameters `requestUri` stands for, for `client` (the app the query's `client_id`
   * names). They are the whole request: the core validates them as any /authorize request and
   * ignores the query's other parameters. Refuse with an OAuthError (`invalid_request_uri` for
   * an unknown, expired, used or another app's `request_uri`): shown on an error page, never
   * redirected, as no redirect URI is trusted yet.
   */
  resolve(input: { client: OAuthClient; requestUri: string }): Promise<Record<string, string>>;
  /**
   * Whether the app may send only requests this resolver resolves (e.g. PAR required): a plain
   * /authorize request of such an app is refused with `invalid_request`. Leave it out for "never".
   */
  required?(client: OAuthClient): boolean;
}

/**
 * Since plugin API 1.3 (`api.requestObjects`): verifies signed request objects (RFC 9101), the
 * `request` parameter of /authorize and of pushed requests. One per server.
 */
export interface RequestObjectVerifier {
  /** The JWS algorithms it accepts (discovery's `request_object_signing_alg_values_supported`). */
  algorithms: string[];
  /**
   * The authorization request `request` stands for, for `client` (the app the query's
   * `client_id` names): its claims as parameters, nothing else of the query. Refuse with an
   * OAuthError `invalid_request_object` (shown on an error page, never redirected).
   */
  verify(input: { client: OAuthClient; request: string }): Promise<Record<string, string>>;
  /** Whether the app must sign its requests: one without `request` is refused with `invalid_request`. */
  required?(client: OAuthClient): boolean;
}

/**
 * Since plugin API 1.3 (`api.prompt`): a `prompt` value of /authorize that a plugin's page
 * answers. Only `create` (OpenID Connect "Initiating User Registration via OpenID Connect 1.0"):
 * for an app the handler `enables`, /authorize starts the login flow as usual (never from the
 * browser's session: a new account signs in) and sends the browser to `path` with the flow's
 * `request_id`; discovery lists the value in `prompt_values_supported`. For any other app the
 * value is refused with `invalid_request`, as without the plugin.
 */
export interface PromptHandler {
  prompt: 'create';
  /** Whether this app takes the value (read once, when the client registry is built). */
  enabled(client: OAuthClient): boolean;
  /** The plugin's page under the issuer (`/register`): the browser goes to `path?request_id=…`. */
  path: string;
}

// ───────────────────────────── core stores lent to plugins ─────────────────────────────

export interface NewEvent {
  type: string;
  /** Free indexed key for counting, e.g. a hash of a destination address. */
  key?: string | null;
  userId?: string | null;
  method?: string | null;
  clientId?: string | null;
  ip?: string | null;
  outcome?: string | null;
  reason?: string | null;
  data?: JsonObject;
  /**
   * Repeats of this event (same type, key, user, method, client, address, outcome and reason)
   * within a window of this many seconds count up one row instead of adding one each: for
   * events anyone can cause without an account (an unknown client id, a guess for an unknown
   * user). `history.count` adds the counts up.
   */
  aggregateSeconds?: number;
}

/** Append-only event log: verification outcomes, FDS verdicts, deliveries. */
export interface EventLog {
  record(event: NewEvent): Promise<void>;
  /** Several events in one statement (none aggregated); a log without it records them one by one. */
  recordMany?(events: NewEvent[]): Promise<void>;
}

export interface StoredRecord {
  key: string;
  data: JsonObject;
  createdAt: Date;
  expiresAt: Date | null;
}

/**
 * A plugin's own durable key-value records (namespaced by plugin name), for plugins that keep
 * state of their own, e.g. the outbox channel. Expired records are invisible.
 */
export interface RecordStore {
  /** Inserts or replaces. */
  put(key: string, data: JsonObject, opts?: { ttlSeconds?: number }): Promise<void>;
  /** Inserts only where no live record has the key; false when one has (one of racing callers wins). */
  add(key: string, data: JsonObject, opts?: { ttlSeconds?: number }): Promise<boolean>;
  get(key: string): Promise<StoredRecord | null>;
  /** Deletes and returns the record; exactly one of several concurrent callers gets it. */
  consume(key: string): Promise<StoredRecord | null>;
  delete(key: string): Promise<boolean>;
  /** Records whose key starts with `prefix`, newest first. */
  list(prefix: string, opts?: { limit?: number }): Promise<StoredRecord[]>;
}
