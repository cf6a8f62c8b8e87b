import type {
  AccountStore,
  AppSettingsLookup,
  Branding,
  Clock,
  JwtSigning,
  PasswordHashing,
  RecordStore,
  Services,
  UserDirectory,
} from '@gatehouse-auth/plugin-api';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { GatehouseConfig } from '../config/schema.js';
import type { DeviceBinding } from '../devices/binding.js';
import type { LoginFlows } from '../login/flows-api.js';
import type { SetupWeb } from '../verification/setup-web.js';
import type { LoginUi } from '../login/custom-ui.js';
import type { DevicePushes } from '../devices/pushes.js';
import type { DeviceStore } from '../devices/store.js';
import type { DevicesWeb } from '../devices/web.js';
import type { VerificationWeb } from '../verification/web.js';
import type { StatusWatch } from '../verification/status-watch.js';
import type { SetupOffers } from '../verification/setup-offers.js';
import type { AccountVerification } from '../verification/account.js';
import type { UserClaims } from '../oauth/claims.js';
import type { UserProfiles } from '../users/profile.js';
import type { RequiredActions } from '../users/required-actions.js';
import type { DeviceCookie } from '../http/device.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Locales } from '../i18n/locales.js';
import type { AssertionReplayStore } from '../oauth/assertions.js';
import type { AuthorizeChoices, AuthorizeContext, BrowserBinding } from '../oauth/authorize/index.js';
import type { ClientAuthenticator, ClientBlocks } from '../oauth/client-auth.js';
import type { AdminGuard } from '../http/admin-guard.js';
import type { ClientRegistry } from '../oauth/clients.js';
import type { KeyStore } from '../oauth/keys.js';
import type { LogoutService } from '../oauth/logout.js';
import type { SessionStore } from '../oauth/sessions.js';
import type { SingleSignOn } from '../oauth/sso.js';
import type { TokenService } from '../oauth/tokens.js';
import type { InvalidationLog } from '../oauth/invalidation-log.js';
import type { ActiveTokenCache } from '../oauth/token-cache.js';
import type { SharedCounters } from '../limits/shared-counters.js';
import type { PeerBus } from '../peer-bus.js';
import type { AppCheck, StoredClients } from '../oauth/stored-clients.js';
import type { Extensions, LoadedPluginInfo } from '../plugins/loader.js';
import type { Sql } from '../storage/sql.js';
import type { Metrics } from '../observability/metrics.js';
import type { DependencyChecks } from '../observability/dependencies.js';
import type { Tracing } from '../observability/tracing.js';
import type { EventStore } from '../storage/stores.js';
import type { UserService } from '../users/users.js';
import type { SecretBox } from '../util/crypto.js';
import type { ExchangeStore } from '../verification/exchanges.js';
import type { LoginFlowStore } from '../verification/flows.js';
import type { SecurityEvents } from '../verification/security-events.js';
import type { PasswordChanges } from '../verification/password-changed.js';
import type { HostedLogin } from '../oauth/authorize/hosted-login.js';
import type { LoginRedirects } from '../verification/redirects.js';
import type { VerificationService } from '../verification/service.js';
import type { StatusStore } from '../verification/statuses.js';

/**
 * What the container holds: singletons only; per-request data travels in the request context,
 * never in here. Route groups take the cradle itself and pick what they need.
 */
export interface Cradle {
  // Given at start-up
  config: GatehouseConfig;
  logger: Logger;
  sequelize: Sequelize;
  sql: Sql;
  peers: PeerBus;
  tokenCache: ActiveTokenCache;
  invalidationLog: InvalidationLog;
  /** Where the limits that hold across nodes count: the database's, or a plugin's (decision 72). */
  sharedCounters: SharedCounters;
  /** What the core's limits hit: the current `sharedCounters`, keys hashed. */
  counters: Pick<SharedCounters, 'hit'>;
  clientBlocks: ClientBlocks;
  /** The admin token's check, throttled per address like client authentication. */
  adminGuard: AdminGuard;
  clock: Clock;
  secretBox: SecretBox;
  extensions: Extensions;
  /** Spans of requests, grants, verifications, FDS rules and SQL (none without an exporter). */
  tracing: Tracing;
  /** The metrics a plugin provides (`@gatehouse-auth/metrics-prometheus`); no-ops without one. */
  metrics: Metrics;
  /** What operators see on /health/dependencies: the database and what plugins check. */
  dependencies: DependencyChecks;
  /** Set when the server stops taking traffic (readiness answers 503). */
  lifecycle: { draining: boolean };

  // Stores and services of the core
  users: UserService;
  events: EventStore;
  jobs: JobQueue;
  flows: LoginFlowStore;
  exchanges: ExchangeStore;
  statuses: StatusStore;
  /** What plugins hear of with `api.securityEvents` (plugin API 1.3). */
  securityEvents: SecurityEvents;
  passwordChanges: PasswordChanges;
  /** A login on the hosted page a plugin's page starts (plugin API 1.2, `web.login`). */
  hostedLogin: HostedLogin;
  verification: VerificationService;
  clients: ClientRegistry;
  replay: AssertionReplayStore;
  keys: KeyStore;
  tokens: TokenService;
  sessions: SessionStore;
  sso: SingleSignOn;
  logout: LogoutService;
  clientAuth: ClientAuthenticator;
  /** Consents given, by `user:client`. */
  consents: RecordStore;
  /** Authenticator devices (docs/devices.md): bound app installs, their binding and pushes. */
  devices: DeviceStore;
  deviceBinding: DeviceBinding;
  pushes: DevicePushes;
  /** The device API's operations for the plugin that serves its routes (`web.devices`, decision 69). */
  devicesWeb: DevicesWeb;
  /** The verification service's operations for the plugin that serves its routes (`web.verification`, decision 78). */
  verificationWeb: VerificationWeb;
  /** What the authorization endpoint's steps share: its routes, its choices and generated logins. */
  authorizeContext: AuthorizeContext;
  /** The consent and the account choice for the plugin that shows them (`api.web.authorize`). */
  authorizeChoices: AuthorizeChoices;
  /** The addresses users proved (account verification). */
  accounts: AccountVerification;
  /** Users' OIDC profile claims (name, locale, ...). */
  profiles: UserProfiles;
  /** What users must do at their next sign-in (plugin API 1.3). */
  requiredActions: RequiredActions;
  /** The values of user claims, for userinfo and ID tokens. */
  userClaims: UserClaims;
  /** Offers to set a method up after a login (a passkey after a password). */
  setupOffers: SetupOffers;
  /** The login flows for plugins and the hosted page's continuation (`api.web.loginFlows`). */
  loginFlows: LoginFlows;
  /** The setup API's checks and steps for plugins (`api.web.setup`). */
  setupWeb: SetupWeb;
  /** An app's own login UI: where a flow goes there. */
  loginUi: LoginUi;
  /** Long polls of verification statuses (the login page waiting on a push). */
  statusWatch: StatusWatch;

  /** The plugins loaded, as `gatehouse plugins` lists them (filled in once they registered). */
  loadedPlugins: LoadedPluginInfo[];
  /** The account operations a plugin's `userAccounts` service composes (plugins: `services.accountStore`). */
  accountStore: AccountStore;

  // What plugins see, and may replace or extend
  services: Services;
  /** Replaceable by a plugin (`provides: ['userDirectory']`). */
  userDirectory: UserDirectory;
  /** Replaceable by a plugin (`provides: ['passwordHashing']`). */
  passwordHashing: PasswordHashing;
  /** Replaceable by a plugin (`provides: ['jwtSigning']`, decision 77). */
  jwtSigning: JwtSigning;
  /** What plugins added to each app's config, by client id (filled in once they registered). */
  appSettings: AppSettingsLookup;
  /** Checks an app entry stored in the database as start-up checks the config's (with the plugins' keys). */
  appCheck: AppCheck;
  /** The apps stored in the database and the registry's snapshot of them (plugins: `services.appStore`). */
  storedClients: StoredClients;

  // The browser side
  /** The issuer's path ('' at the root): the prefix of every URL a page uses. */
  issuerPath: string;
  /** The pages' brands; replaceable by a plugin (`provides: ['branding']`, decision 65). */
  branding: Branding;
  binding: BrowserBinding;
  device: DeviceCookie;
  /** The pages' message catalogs (core/locales and `locales.messages_dir`). */
  locales: Locales;
  loginRedirects: LoginRedirects;
}
