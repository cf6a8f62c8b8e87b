import { type AppSettings, type Clock, NO_BRAND, type UserDirectory } from '@gatehouse-auth/plugin-api';
import { asFunction, asValue, createContainer, InjectionMode, type AwilixContainer } from 'awilix';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { GatehouseConfig } from '../config/schema.js';
import { accountStore } from '../users/account-store.js';
import { argon2Hashing } from '../hashing.js';
import { DeviceBinding } from '../devices/binding.js';
import { LoginFlows } from '../login/flows-api.js';
import { SetupWeb } from '../verification/setup-web.js';
import { DevicePushes } from '../devices/pushes.js';
import { DevicesWeb } from '../devices/web.js';
import { VerificationWeb } from '../verification/web.js';
import { DeviceStore } from '../devices/store.js';
import { StatusWatch } from '../verification/status-watch.js';
import { SetupOffers } from '../verification/setup-offers.js';
import { AccountVerification } from '../verification/account.js';
import { UserClaims } from '../oauth/claims.js';
import { UserProfiles } from '../users/profile.js';
import { LoginUi } from '../login/custom-ui.js';
import { DeviceCookie } from '../http/device.js';
import { JobQueue } from '../jobs/queue.js';
import { Locales } from '../i18n/locales.js';
import { AssertionReplayStore } from '../oauth/assertions.js';
import { AuthorizeChoices, AuthorizeContext, browserBinding, RESUME_PATH } from '../oauth/authorize/index.js';
import { ClientAuthenticator, ClientBlocks } from '../oauth/client-auth.js';
import { AdminGuard } from '../http/admin-guard.js';
import { ClientRegistry } from '../oauth/clients.js';
import { StoredClients } from '../oauth/stored-clients.js';
import { appChecker } from '../plugins/app-config.js';
import { assertionAudiences } from '../oauth/endpoints.js';
import { inProcessSigning } from '../oauth/jws.js';
import { KeyStore } from '../oauth/keys.js';
import { LogoutService } from '../oauth/logout.js';
import { SessionStore } from '../oauth/sessions.js';
import { SingleSignOn } from '../oauth/sso.js';
import { TokenService } from '../oauth/tokens.js';
import { InvalidationLog } from '../oauth/invalidation-log.js';
import { ActiveTokenCache } from '../oauth/token-cache.js';
import { currentCounters, DatabaseCounters } from '../limits/shared-counters.js';
import type { PeerBus } from '../peer-bus.js';
import { createExtensions } from '../plugins/loader.js';
import { loadSecretBox, runHeavy } from '../services.js';
import type { Sql } from '../storage/sql.js';
import type { Metrics } from '../observability/metrics.js';
import { DependencyChecks } from '../observability/dependencies.js';
import type { Tracing } from '../observability/tracing.js';
import { EventStore, recordStore } from '../storage/stores.js';
import { RequiredActions } from '../users/required-actions.js';
import { UserService } from '../users/users.js';
import { ExchangeStore } from '../verification/exchanges.js';
import { LoginFlowStore } from '../verification/flows.js';
import { SecurityEvents } from '../verification/security-events.js';
import { PasswordChanges } from '../verification/password-changed.js';
import { HostedLogin } from '../oauth/authorize/hosted-login.js';
import { defaultRedirects, type LoginRedirects } from '../verification/redirects.js';
import { VerificationService } from '../verification/service.js';
import { StatusStore } from '../verification/statuses.js';
import type { Cradle } from './cradle.js';
import { makeServices } from './plugin-services.js';

/** What start-up hands the container. */
export interface ContainerBase {
  config: GatehouseConfig;
  logger: Logger;
  sequelize: Sequelize;
  sql: Sql;
  clock: Clock;
  /** What every node must hear at once: revocations, client blocks. */
  peers: PeerBus;
  /** Made before the database driver, whose calls it traces. */
  tracing: Tracing;
  /** Made before the plugins, one of which may provide the metrics it passes calls on to. */
  metrics: Metrics;
}

/**
 * The container of one server: every store and service of the core as a singleton, built on
 * first use from what it names. `provided` is where plugins' services go (`api.provide`).
 */
export function createGatehouseContainer(
  base: ContainerBase,
  provided: ReadonlyMap<string, string>,
): AwilixContainer<Cradle> {
  const container = createContainer<Cradle>({ strict: true, injectionMode: InjectionMode.PROXY });
  const single = <T>(make: (c: Cradle) => T) => asFunction(make).singleton();
  const issuerPath = new URL(base.config.issuer).pathname.replace(/\/+$/, '');
  container.register({
    config: asValue(base.config),
    logger: asValue(base.logger),
    sequelize: asValue(base.sequelize),
    sql: asValue(base.sql),
    clock: asValue(base.clock),
    peers: asValue(base.peers),
    tracing: asValue(base.tracing),
    metrics: asValue(base.metrics),
    dependencies: single(({ sql }) => {
      const checks = new DependencyChecks();
      checks.add('database', 'core', () => sql.select('SELECT 1'));
      return checks;
    }),
    secretBox: asValue(loadSecretBox(base.config, base.logger)),
    extensions: asValue(createExtensions()),
    lifecycle: asValue({ draining: false }),

    users: single(({ sql }) => new UserService(sql)),
    events: single(({ sql, clock }) => new EventStore(sql, clock)),
    jobs: single(
      ({ sql, clock, secretBox, events, logger }) => new JobQueue({ sql, clock, secretBox, events, logger }),
    ),
    flows: single(({ sql, clock }) => new LoginFlowStore(sql, clock)),
    exchanges: single(({ sql, clock }) => new ExchangeStore(sql, clock)),
    statuses: single(({ sql, clock }) => new StatusStore(sql, clock)),
    // Replaceable (decision 72): in the database until a plugin provides them (Redis).
    sharedCounters: single(({ sql, clock }) => new DatabaseCounters(sql, clock)),
    counters: asValue(currentCounters(() => container.cradle.sharedCounters)),
    securityEvents: single(({ logger }) => new SecurityEvents(logger)),
    verification: single((c) => new VerificationService(c)),
    passwordChanges: single(
      ({ extensions, services, devices, events, securityEvents, config }) =>
        new PasswordChanges({
          extensions,
          services,
          devices,
          history: events,
          securityEvents,
          flowTtlSeconds: config.verification.flow_ttl,
        }),
    ),
    clients: single(
      ({ config, appSettings, extensions }) =>
        new ClientRegistry(
          config.apps,
          appSettings,
          extensions.prompts.values(),
          config.oauth.jwks_uri_refetch_seconds * 1000,
          extensions.clientPolicies.values(),
        ),
    ),
    // Replaceable (decision 65): no brand, the pages as they look unbranded, until a plugin provides one.
    branding: asValue({ of: () => NO_BRAND }),
    appCheck: single(({ config, extensions }) => appChecker(config, [], extensions)),
    storedClients: asFunction(
      ({ sql, clock, config, clients, appCheck, peers, tokens, sessions, logger }: Cradle) =>
        new StoredClients({ sql, clock, config, clients, check: appCheck, peers, tokens, sessions, logger }),
    )
      .singleton()
      .disposer((admin) => admin.stop()),
    replay: single(({ sql, clock }) => new AssertionReplayStore(sql, clock)),
    keys: single(({ sql, clock, secretBox, config }) => new KeyStore(sql, clock, secretBox, config.oauth.signing_algs)),
    profiles: single(({ sql, clock }) => new UserProfiles(recordStore(sql, clock, 'gatehouse:profile'), clock)),
    requiredActions: single(
      ({ sql, clock }) => new RequiredActions(recordStore(sql, clock, 'gatehouse:required-actions')),
    ),
    userClaims: single(
      ({ users, profiles, accounts }) =>
        new UserClaims({ users, profiles, verified: (user, medium) => accounts.verified(user, medium) }),
    ),
    tokenCache: single(({ config, clock, peers }) => {
      const { max_entries, max_age_seconds } = config.oauth.token_cache;
      const cache = new ActiveTokenCache(max_entries, max_age_seconds * 1000, clock);
      peers.subscribe({
        receive: (news) => {
          if (news.revoked) cache.invalidate(news.revoked);
        },
        connected: (up) => cache.setEnabled(up),
      });
      return cache;
    }),
    invalidationLog: single(
      ({ sql, clock, tokenCache, logger, config }) =>
        new InvalidationLog({
          sql,
          clock,
          cache: tokenCache,
          logger,
          pollMs: config.oauth.token_cache.poll_seconds * 1000,
          keepMs: config.oauth.token_cache.max_age_seconds * 1000,
        }),
    ),
    tokens: single(
      ({ sql, clock, keys, config, userClaims, tokenCache, peers, metrics, invalidationLog, clients }) =>
        new TokenService(
          sql,
          clock,
          keys,
          config.issuer,
          userClaims,
          { tokens: tokenCache, bus: peers, log: invalidationLog },
          metrics,
          () => container.cradle.jwtSigning,
          (clientId) => clients.get(clientId) !== undefined,
        ),
    ),
    sessions: single(({ sql, clock }) => new SessionStore(sql, clock)),
    hostedLogin: single((c) => new HostedLogin(c)),
    logout: single(
      ({ config, sessions, tokens, keys, events, extensions, logger }) =>
        new LogoutService({ issuer: config.issuer, sessions, tokens, keys, events, extensions, logger }),
    ),
    sso: single(
      ({ users, verification, clock, config }) =>
        new SingleSignOn({ users, verifier: verification, clock, idleSeconds: config.oauth.session_idle_ttl }),
    ),
    clientAuth: single(
      ({ clients, replay, events, clock, config, clientBlocks, extensions }) =>
        new ClientAuthenticator({
          clients,
          replay,
          events,
          history: events,
          clock,
          issuer: config.issuer,
          audiences: assertionAudiences(config.issuer),
          blocks: clientBlocks,
          plugged: (method) => extensions.clientAuthentications.get(method),
        }),
    ),
    clientBlocks: single(({ peers }) => new ClientBlocks(peers)),
    adminGuard: single(
      ({ config, events, clock, clientBlocks }) =>
        new AdminGuard({ token: config.admin.token, events, history: events, clock, blocks: clientBlocks }),
    ),
    consents: single(({ sql, clock }) => recordStore(sql, clock, 'gatehouse:consent')),
    devices: single(({ sql, clock, secretBox }) => new DeviceStore(sql, clock, secretBox)),
    deviceBinding: single(
      ({ config, devices, replay, services, clock, sql }) =>
        new DeviceBinding({
          issuer: config.issuer,
          devices,
          pending: recordStore(sql, clock, 'gatehouse:device-binding'),
          replay,
          services,
          clock,
        }),
    ),
    pushes: single(
      ({ config, devices, exchanges, statuses, replay, services, clock, extensions, flows }) =>
        new DevicePushes({
          issuer: config.issuer,
          devices,
          exchanges,
          statuses,
          replay,
          services,
          clock,
          methods: (id) => extensions.methods.get(id),
          flows,
        }),
    ),
    accounts: single(
      ({ sql, clock }) => new AccountVerification({ records: recordStore(sql, clock, 'gatehouse:account') }),
    ),
    setupOffers: single(
      ({ clients, extensions, services, verification, sql, clock }) =>
        new SetupOffers({
          clients,
          extensions,
          services,
          verification,
          declined: recordStore(sql, clock, 'gatehouse:setup-offer-declined'),
        }),
    ),
    loginUi: single(({ clients, services }) => new LoginUi(clients, services)),
    loginFlows: single((c) => new LoginFlows(c)),
    setupWeb: single((c) => new SetupWeb(c)),
    devicesWeb: single((c) => new DevicesWeb(c)),
    verificationWeb: single((c) => new VerificationWeb(c)),
    authorizeContext: single((c) => new AuthorizeContext(c)),
    authorizeChoices: single((c) => new AuthorizeChoices(c.authorizeContext, c.loginFlows)),
    statusWatch: single(({ statuses, lifecycle }) => new StatusWatch(statuses, () => lifecycle.draining)),

    services: asFunction(() => makeServices(container, provided)).singleton(),
    userDirectory: single(({ users }): UserDirectory => ({
      findById: (id) => users.findById(id),
      findByIdentifier: (identifier) => users.findByIdentifier(identifier),
    })),
    passwordHashing: asValue(argon2Hashing(runHeavy)),
    jwtSigning: asValue(inProcessSigning),
    appSettings: asValue(new Map<string, AppSettings>()),

    loadedPlugins: asValue([]),
    accountStore: single((c) => accountStore(c)),

    issuerPath: asValue(issuerPath),
    binding: single(({ config }) => browserBinding(config.issuer)),
    device: single(({ binding }) => new DeviceCookie(binding.secure)),
    locales: single(({ config }) => Locales.load(config.locales.messages_dir)),
    loginRedirects: asValue<LoginRedirects>({
      // Browser redirects carry the issuer's path, for deployments behind a path prefix; an app
      // with its own login UI gets its stages there.
      nextStage: (flow) => container.cradle.loginUi.url(flow) ?? issuerPath + defaultRedirects.nextStage(flow),
      // A login started by the authorization endpoint goes back to it to answer the client.
      completed: (flow) =>
        flow.params.oauth
          ? `${issuerPath}${RESUME_PATH}?request_id=${encodeURIComponent(flow.id)}`
          : defaultRedirects.completed(flow),
    }),
  });
  return container;
}
