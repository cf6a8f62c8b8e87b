import type { CliCommand } from './cli.js';
import type { ClientPolicy } from './client-policy.js';
import type { ClientAuthentication, TokenBinding } from './oauth.js';
import type {
  AuthMethod,
  AuthorizationRequestResolver,
  DeliveryChannel,
  FdsRule,
  GrantHandler,
  PromptHandler,
  RecordStore,
  RequestObjectVerifier,
} from './extensions.js';
import type { RouteSpec } from './routes.js';
import type { SecurityEventListener } from './security-events.js';
import type { BackgroundJob, DependencyCheck, EnqueueJob, Services, SessionEndListener } from './services.js';
import type { Router } from 'express';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { ZodType } from 'zod';
import type { PluginCatalogs, WebApi } from './web.js';

/** The plugin API version this core implements. Plugins declare a semver range against it. */
export const PLUGIN_API_VERSION = '1.3.0';

/**
 * A Gatehouse plugin: a package whose default export is `definePlugin({...})`.
 *
 * @example
 * export default definePlugin({
 *   name: '@acme/fds-geo',
 *   apiVersion: '^1',
 *   options: z.object({ maxKmPerHour: z.number().default(900) }),
 *   register(api, options) {
 *     api.fdsRules.add(geoRule(options, api.services));
 *   },
 * });
 */
export interface GatehousePlugin<O = Record<string, unknown>> {
  /** Unique plugin name, by convention the npm package name. */
  name: string;
  /** Semver range of PLUGIN_API_VERSION this plugin supports, e.g. '^1'. */
  apiVersion: string;
  /** Names of plugins that must be loaded too; they register first. */
  dependencies?: string[];
  /**
   * Services this plugin adds or replaces with `api.provide` (a core one such as
   * `passwordHashing` or `userDirectory`, or a new one). Such plugins register before the
   * others, so every plugin sees the replacement.
   */
  provides?: string[];
  /** Schema of this plugin's `options` in the config; errors name the key. */
  options?: ZodType<O>;
  /**
   * Keys this plugin adds to every app (`apps[i]`), with their schemas: a grant's trusted
   * issuers, say. Parsed at start-up (defaults for apps that leave them out), then read as
   * `client.settings[key]`. A key no plugin declares is refused.
   */
  appConfig?: Record<string, ZodType>;
  /**
   * Since 1.3: for keys of `appConfig` that an app stored in the database (written by a
   * bearer-token caller of the admin API) may take less of, their schema for such apps; the
   * `appConfig` one otherwise. A logo that names a server file is the case (decision 65).
   */
  storedAppConfig?: Record<string, ZodType>;
  /**
   * Since 1.3: keys of `appConfig` whose value (a URL, or a list of them) the server sends tokens,
   * codes or logins to, such as a back-channel logout URI: held to https (http only to a loopback
   * host) outside `dev_mode`, as the core's `redirect_uris` are. The core checks them, for the
   * config's apps and those stored in the database, since only it knows `dev_mode`.
   */
  appUrlKeys?: readonly string[];
  /**
   * Since 1.3: commands this plugin adds to the `gatehouse` binary (`gatehouse users import`),
   * run with the server composed but not listening. A name the core or another plugin has stops
   * start-up.
   */
  commands?: readonly CliCommand[];
  /** Called once at start-up; add extensions through `api`. Must not keep per-request state. */
  register(api: PluginApi, options: O): void | Promise<void>;
  /**
   * Since 1.3: runs in the primary process of `server.workers > 1`, which serves no request and
   * calls no `register`: only the plugins with this hook are called there, with their parsed
   * options, before the workers start (a listener that answers for all of them, decision 67).
   * What it returns is closed when the primary stops; a throw stops start-up.
   */
  primary?(api: PrimaryApi, options: O): Served | void | Promise<Served | void>;
}

/** Since 1.3: what a `primary` hook receives. */
export interface PrimaryApi {
  readonly plugin: { readonly name: string; readonly version: string };
  readonly logger: Logger;
}

/** Since 1.3: where this process serves, for `api.serve`. */
export interface ServingInfo {
  /** The public listener's host and port (the one it got, when configured as 0). */
  readonly host: string;
  readonly port: number;
  /** A worker of `server.workers > 1`: its primary runs the plugins' `primary` hooks. */
  readonly worker: boolean;
}

/** Since 1.3: what `api.serve` or a `primary` hook started, closed at shutdown. */
export interface Served {
  /** The ports of the listeners it opened, by name (`metrics`): logged as `<name>Port`. */
  readonly ports?: Readonly<Record<string, number>>;
  close(): Promise<void>;
}

/** Identity for type inference: `export default definePlugin({...})`. */
export function definePlugin<O = Record<string, unknown>>(plugin: GatehousePlugin<O>): GatehousePlugin<O> {
  return plugin;
}

/** Where a plugin adds one kind of extension. Duplicate ids stop start-up. */
export interface ExtensionPoint<T> {
  add(item: T): void;
}

/** Extra HTTP routes, mounted under `path` (e.g. a provider callback). */
export interface RouteContribution {
  path: string;
  router: Router;
  /**
   * The router's JSON endpoints (`defineRoute`), paths relative to `path`: they appear in
   * /openapi.json (@gatehouse-auth/openapi), and the handlers validate with them (`routeInput`).
   * HTML pages and redirects need none. Since 1.3 also a function, called once every plugin has
   * registered, for declarations that name what others registered (`web.methods()`' fields).
   */
  operations?: readonly RouteSpec[] | (() => readonly RouteSpec[]);
  /**
   * Since 1.3: calls of the router the core answers first, before express, when their body is
   * plain JSON (decision 11, 78): the hot requests of a login. The router must answer the same
   * paths too (forms, other origins, other spellings go there).
   */
  fast?: readonly FastJsonRoute[];
}

/**
 * Since 1.3: a JSON call served outside express. The core matches the exact path (relative to the
 * mount; a `:name` segment is one decoded parameter), reads the body with its limits and errors
 * (as express.json would), and answers what `handle` resolves to in the API envelope, never
 * cached; a throw is answered as express's error handler would.
 */
export interface FastJsonRoute {
  method: 'POST';
  path: string;
  /** `ip` is the client address, the trust proxy setting applied. */
  handle(req: IncomingMessage, params: Record<string, string>, body: unknown, ip: string): Promise<unknown>;
}

/** What `register` receives: the extension points and the core services, nothing else. */
export interface PluginApi {
  readonly plugin: { readonly name: string; readonly version: string };
  /** A child logger bound to this plugin. */
  readonly logger: Logger;
  readonly methods: ExtensionPoint<AuthMethod>;
  readonly grants: ExtensionPoint<GrantHandler>;
  readonly fdsRules: ExtensionPoint<FdsRule>;
  readonly channels: ExtensionPoint<DeliveryChannel>;
  readonly routes: ExtensionPoint<RouteContribution>;
  readonly services: Services;
  /** This plugin's own durable records (namespaced by its name). */
  readonly records: RecordStore;
  /**
   * A check that runs once every plugin has registered (start-up and `config check` alike):
   * throw to stop start-up, with a message naming the option, e.g. that the delivery channel
   * named in `options.channel` is not registered.
   */
  check(fn: () => void | Promise<void>): void;
  /**
   * Adds a service under `name` (others get it with `services.resolve(name)`), or replaces a
   * core one; the name must be in the plugin's `provides`. A replacement is checked against the
   * service's contract at once.
   */
  provide(name: string, service: unknown): void;
  /**
   * Since 1.1: a check of something this plugin depends on (an SMTP relay, a provider's API),
   * shown to operators on `GET /health/dependencies` and as `gatehouse_dependency_up`. Resolve
   * when it is up; throw, with a message an operator can act on, when not. It runs on demand,
   * at most every 10 s, and 5 s is its limit. It never takes a node out of rotation.
   */
  dependency(name: string, check: DependencyCheck): void;
  /**
   * Since 1.2: what this plugin's routes and pages may ask of the core: the issuer, the
   * authenticated client, the browser's session, a hosted login for an app, named rate limits,
   * pages in the hosted layout with CSRF-protected forms. Call its request methods from handlers
   * (at request time), never from `register`.
   */
  readonly web: WebApi;
  /**
   * Since 1.2: members this plugin adds to the discovery document (/.well-known/openid-configuration
   * and oauth-authorization-server), e.g. `device_authorization_endpoint`. A member the core or
   * another plugin sets stops start-up.
   */
  discovery(members: Record<string, unknown>): void;
  /**
   * Since 1.2: this plugin's messages for its pages, by locale (`en` required, every other locale
   * may translate some): read them with `web.messages(req)`.
   */
  messages(catalogs: PluginCatalogs): void;
  /**
   * Since 1.3: proof of possession for tokens (DPoP; since 1.3 also mutual TLS): the core binds
   * the tokens of a request whose proof `binding.tokenRequest` accepts to it (`cnf`), and checks
   * it at protected resources (`web.protectedResource`; docs/decisions/0042, 0052, 0088). One plugin per `cnf` member
   * (`binding.confirmation`): a second stops start-up.
   */
  tokenBinding(binding: TokenBinding): void;
  /**
   * Since 1.3: a client authentication method the core leaves to plugins (RFC 8705's
   * `tls_client_auth`, `self_signed_tls_client_auth`): apps naming it in
   * `token_endpoint_auth_method` are authenticated by `method.authenticate` wherever clients
   * authenticate. One plugin per method: a second stops start-up.
   */
  clientAuthentication(method: ClientAuthentication): void;
  /**
   * Since 1.3: resolves the `request_uri` of authorization requests (RFC 9126 pushed requests):
   * /authorize hands it to `resolver.resolve`, whose parameters are then the request, and
   * refuses a plain request of an app `resolver.required` names. One resolver per server: a
   * second stops start-up.
   */
  authorizationRequests(resolver: AuthorizationRequestResolver): void;
  /**
   * Since 1.3: verifies signed request objects (RFC 9101): /authorize hands its `request`
   * parameter to `verifier.verify`, whose parameters are then the request, and refuses a plain
   * request of an app `verifier.required` names; pushed requests get the same through
   * `web.authorizationParameters`. Discovery then says `request_parameter_supported: true` with
   * the verifier's algorithms. One verifier per server: a second stops start-up.
   */
  requestObjects(verifier: RequestObjectVerifier): void;
  /**
   * Since 1.3: a `prompt` value of /authorize this plugin's page answers: `create` (OIDC
   * "Initiating User Registration"), for the apps `handler.enabled` names, whose flows then go to
   * `handler.path?request_id=…`; listed in discovery's `prompt_values_supported`. For other apps
   * /authorize refuses it with `invalid_request` as without the plugin. One handler per value:
   * a second stops start-up.
   */
  prompt(handler: PromptHandler): void;
  /**
   * Since 1.3: a client policy (decision 80): the apps `policy.appliesTo` names are held to its
   * rules, which the core consults where it decides (the app's config, /authorize, client
   * assertions, the token endpoint) and answers with the point's status and error code. A name
   * another plugin has stops start-up.
   */
  clientPolicy(policy: ClientPolicy): void;
  /**
   * Since 1.3: a first-party app of this plugin, for the logins its pages start
   * (`web.login.start`): an entry like those of the config's `apps`, served like them. An id
   * a config app or another plugin has stops start-up. With `pinned_logins: true` every login
   * of it must name its user (`web.login.start` with `userId`), and its first stage does not make
   * its methods ones that sign in alone (the binding rule of the setup API).
   */
  app(app: { client_id: string; name: string; login_stages: string[][] } & Record<string, unknown>): void;
  /**
   * Since 1.3: path prefixes of this plugin's routes that browser apps on other origins may call
   * by XHR (`/login-srv/`): CORS answers there as on the core's API paths, for the origins of the
   * apps' `allowed_origins`, with credentials. Never for pages and navigations.
   */
  cors(prefixes: string[]): void;
  /**
   * Since 1.3: `listener` hears of every security event (`SecurityEvent`: a reused one-time
   * code, a sign-in blocked or challenged by the FDS rules, a password changed), after the fact:
   * the request that caused it has its answer already and never fails with the listener. A
   * listener's failure is logged; shutdown waits for its promise, so bound its work.
   */
  securityEvents(listener: SecurityEventListener): void;
  /**
   * Since 1.3: work this plugin runs while the server serves, such as a listener of its own
   * (decision 67). `start` is called once the public port listens (`listen`, `gatehouse start`;
   * never by `buildApp` alone or `config check`); what it returns is closed at shutdown, after
   * the public port and before the database. A throw stops start-up.
   */
  serve(start: (serving: ServingInfo) => Promise<Served | void>): void;
  /**
   * Since 1.3: `listener` is told of every sign-in session that ends (a sign-out, a new password,
   * an admin's request; `EndedSession`), once it has ended and its tokens are revoked, and before
   * the call that ended it returns: what it stores (a job) is stored by then. Its failure is logged;
   * the session stays ended. Back-channel logout is such a listener (decision 71).
   */
  sessionEnded(listener: SessionEndListener): void;
  /**
   * Since 1.3: a kind of durable background job (`job.kind`; a kind the core or another plugin
   * has stops start-up). Returns what queues one: stored (its payload encrypted) before it
   * resolves, started at once, retried with growing waits on any node until `maxAttempts` or
   * `expiresAt`; its outcome is the event `<kind>.done` or `<kind>.failed`.
   */
  job(job: BackgroundJob): EnqueueJob;
}

/** A member of the discovery document a plugin contributes. */
export interface MetadataMember {
  name: string;
  value: unknown;
}
