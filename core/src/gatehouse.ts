import { asFunction, asValue, createContainer, InjectionMode, type AwilixContainer } from 'awilix';
import { randomBytes } from 'node:crypto';
import type { RequestListener } from 'node:http';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { LoadedConfig } from './config/load.js';
import type { GatehouseConfig } from './config/schema.js';
import { adminRoutes } from './http/admin.js';
import { errorHandler, notFound } from './http/error-handler.js';
import { withFastRoutes } from './http/fast-routes.js';
import { healthRoutes } from './http/health.js';
import { createLogger, httpLogger } from './http/logging.js';
import {
  createExtensions,
  registerPlugins,
  resolvePlugins,
  type Extensions,
  type LoadedPluginInfo,
} from './plugins/loader.js';
import {
  cryptoHelpers,
  httpHelpers,
  loadSecretBox,
  runHeavy,
  systemClock,
  type Clock,
  type Services,
  type UserDirectory,
} from './services.js';
import { openDatabase } from './storage/database.js';
import { openDriver } from './storage/drivers.js';
import { migrate } from './storage/migrate.js';
import { startPurgeJob } from './maintenance.js';
import { checkComposition } from './plugins/composition.js';
import { appSettings, type AppSettings } from './plugins/app-config.js';
import { REPLACEABLE_SERVICES } from './plugins/contract.js';
import { argon2Hashing, type PasswordHashing } from './hashing.js';
import { BootError } from './errors.js';
import { DELIVERY_JOB, deliveryJob, toPayload, type QueuedDelivery } from './jobs/delivery.js';
import { JobQueue } from './jobs/queue.js';
import type { OutboundMessage } from './plugins/extensions.js';
import { Sql } from './storage/sql.js';
import { credentialStore, EventStore, recordStore } from './storage/stores.js';
import { UserService } from './users/users.js';
import type { SecretBox } from './util/crypto.js';
import { EnrollmentService } from './verification/enrollment.js';
import { SecurityNotifier } from './verification/notifier.js';
import { ExchangeStore } from './verification/exchanges.js';
import { LoginFlowStore } from './verification/flows.js';
import { defaultRedirects, verificationFastRoutes, verificationRoutes } from './verification/routes.js';
import { AssertionReplayStore } from './oauth/assertions.js';
import {
  authorizeRoutes,
  authorizeUrlOf,
  browserBinding,
  flowFormToken,
  RESUME_PATH,
  sessionCookieName,
  type AuthorizationRequest,
} from './oauth/authorize.js';
import { PageModules } from './login/modules.js';
import { requestFacts } from './verification/context.js';
import { endSessionRoutes, logoutCsrf } from './oauth/end-session.js';
import { loginPageRoutes } from './login/routes.js';
import { DeviceCookie } from './http/device.js';
import { readCookie } from './http/cookies.js';
import { ClientAuthenticator } from './oauth/client-auth.js';
import { ClientRegistry } from './oauth/clients.js';
import { assertionAudiences, oauthEndpoints, oauthFastRoutes, oauthRoutes, type OAuthDeps } from './oauth/endpoints.js';
import { KeyStore } from './oauth/keys.js';
import { SessionStore } from './oauth/sessions.js';
import { SingleSignOn } from './oauth/sso.js';
import { LogoutService } from './oauth/logout.js';
import { TokenService } from './oauth/tokens.js';
import { VerificationService } from './verification/service.js';
import { StatusStore } from './verification/statuses.js';

/** What the container holds: singletons only. Per-request data travels in the request context, never in here. */
export interface Cradle {
  config: GatehouseConfig;
  logger: Logger;
  sequelize: Sequelize;
  clock: Clock;
  secretBox: SecretBox;
  extensions: Extensions;
  users: UserService;
  /** Replaceable by a plugin (`provides: ['userDirectory']`). */
  userDirectory: UserDirectory;
  /** Replaceable by a plugin (`provides: ['passwordHashing']`). */
  passwordHashing: PasswordHashing;
  /** What plugins added to each app's config, by client id (filled in once they registered). */
  appSettings: ReadonlyMap<string, AppSettings>;
  sql: Sql;
  events: EventStore;
  services: Services;
  flows: LoginFlowStore;
  exchanges: ExchangeStore;
  statuses: StatusStore;
  notifier: SecurityNotifier;
  verification: VerificationService;
  enrollment: EnrollmentService;
  clients: ClientRegistry;
  replay: AssertionReplayStore;
  keys: KeyStore;
  tokens: TokenService;
  sessions: SessionStore;
  sso: SingleSignOn;
  logout: LogoutService;
  clientAuth: ClientAuthenticator;
  jobs: JobQueue;
}

export interface BuildOptions {
  logger?: Logger;
  /** Run pending migrations before serving (default true). */
  migrate?: boolean;
  /** Where relative plugin paths are resolved (default: the config file's directory or cwd). */
  baseDir?: string;
  clock?: Clock;
}

export interface Gatehouse {
  /** The request listener to serve (node:http, supertest): the hot OAuth endpoints, then express. */
  app: RequestListener;
  /** The express app behind `app`, for everything but the hot endpoints. */
  express: Express;
  config: GatehouseConfig;
  logger: Logger;
  container: AwilixContainer<Cradle>;
  plugins: LoadedPluginInfo[];
  /** Makes /health/ready answer 503 so load balancers stop sending traffic. */
  beginShutdown(): void;
  /** Starts the background purge of expired rows (maintenance.purge_interval_seconds). */
  startBackgroundJobs(): void;
  /**
   * Resolves once the work requests left running after their answers has finished here: sign-in
   * initiations completing, and first attempts of queued deliveries. Tests wait on it.
   */
  idle(): Promise<void>;
  /** Releases the database. Call after the HTTP server closed. */
  close(): Promise<void>;
}

/** Sends through a registered channel that carries this kind of message. */
function deliverWith(extensions: Extensions) {
  return async (id: string, message: OutboundMessage) => {
    const channel = checkedChannel(extensions, id, message);
    await channel.send(message);
  };
}

function checkedChannel(extensions: Extensions, id: string, message: OutboundMessage) {
  const channel = extensions.channels.get(id);
  if (!channel) throw new Error(`no delivery channel "${id}" is registered`);
  if (!channel.kinds.includes(message.kind)) throw new Error(`delivery channel "${id}" does not send ${message.kind}`);
  return channel;
}

/**
 * What plugins get as `api.services`. The replaceable services (`userDirectory`,
 * `passwordHashing`) and those plugins provide are read from the container at each use, so a
 * replacement registered by a plugin is what everyone uses.
 */
function makeServices(container: AwilixContainer<Cradle>, provided: ReadonlyMap<string, string>): Services {
  const { clock, secretBox, sql, events, extensions, jobs } = container.cradle;
  return {
    clock,
    secrets: {
      encrypt: (p) => secretBox.encrypt(p),
      decrypt: (s) => secretBox.decrypt(s),
      mac: (v) => secretBox.mac(v),
    },
    crypto: cryptoHelpers,
    get users() {
      return container.cradle.userDirectory;
    },
    get passwordHashing() {
      return container.cradle.passwordHashing;
    },
    resolve: <T>(name: string): T => {
      // Only services meant for plugins: never the core's own (sql, secretBox…).
      if (!provided.has(name) && !(name in REPLACEABLE_SERVICES)) throw new Error(`no service "${name}" is provided`);
      return container.resolve<T>(name as keyof Cradle & string);
    },
    credentials: (userId, method) => credentialStore(sql, clock, userId, method),
    events,
    history: events,
    channels: {
      get: (id) => extensions.channels.get(id),
      ids: () => extensions.channels.ids(),
      deliver: deliverWith(extensions),
      enqueue: async (id, message, opts) => {
        checkedChannel(extensions, id, message);
        const job: QueuedDelivery = {
          channel: id,
          message,
          ...(opts.secrets ? { secrets: opts.secrets } : {}),
          ...(opts.about ? { about: opts.about } : {}),
        };
        await jobs.enqueue({ kind: DELIVERY_JOB, payload: toPayload(job), expiresAt: opts.expiresAt });
      },
    },
    heavy: runHeavy,
    http: httpHelpers,
  };
}

/** Background initiations queue deliveries, and deliveries may finish more: wait until both are quiet. */
async function settle(c: Cradle): Promise<void> {
  do {
    await c.verification.idle();
    await c.jobs.idle();
  } while (c.verification.busy);
}

/**
 * `config check`: composes the server exactly as `start` does (plugins imported, checked,
 * registered, their checks and the composition checks run), but on an in-memory database and a
 * throwaway key, then closes it. Fails with the error `start` would give.
 */
export async function checkConfig(loaded: LoadedConfig): Promise<{ plugins: LoadedPluginInfo[] }> {
  const config: GatehouseConfig = {
    ...loaded.config,
    database: { ...loaded.config.database, url: 'sqlite::memory:' },
    secrets: { ...loaded.config.secrets, encryption_key: randomBytes(32).toString('base64') },
  };
  const app = await buildApp({ ...loaded, config }, { logger: createLogger('silent') });
  await app.close();
  return { plugins: app.plugins };
}

function isLoaded(c: GatehouseConfig | LoadedConfig): c is LoadedConfig {
  return 'config' in c && 'baseDir' in c;
}

/**
 * Composes a Gatehouse server from a config, without listening: opens and migrates the
 * database, loads the plugins and builds the express app. Tests call this in-process.
 */
export async function buildApp(input: GatehouseConfig | LoadedConfig, options: BuildOptions = {}): Promise<Gatehouse> {
  const config = isLoaded(input) ? input.config : input;
  const baseDir = options.baseDir ?? (isLoaded(input) ? input.baseDir : process.cwd());
  const logger = options.logger ?? createLogger(config.log.level);

  // Import and check plugins before touching the database: a bad plugin fails fast.
  const resolved = await resolvePlugins(config.plugins, baseDir);
  const sequelize = await openDatabase({
    url: config.database.url,
    logger,
    logSql: config.database.log_sql,
    poolMax: config.database.pool_max,
  });
  try {
    if (options.migrate !== false) await migrate(sequelize, logger);
    const sql = new Sql(await openDriver(sequelize, config.database.url, config.database.pool_max));

    const container = createContainer<Cradle>({ strict: true, injectionMode: InjectionMode.PROXY });
    /** Services plugins provided (new ones or replacements), and by whom. */
    const provided = new Map<string, string>();
    container.register({
      config: asValue(config),
      logger: asValue(logger),
      sequelize: asValue(sequelize),
      clock: asValue(options.clock ?? systemClock),
      secretBox: asValue(loadSecretBox(config, logger)),
      extensions: asValue(createExtensions()),
      users: asFunction(({ sql }: Cradle) => new UserService(sql)).singleton(),
      sql: asValue(sql),
      events: asFunction(({ sql, clock }: Cradle) => new EventStore(sql, clock)).singleton(),
      userDirectory: asFunction(({ users }: Cradle): UserDirectory => ({
        findById: (id) => users.findById(id),
        findByIdentifier: (i) => users.findByIdentifier(i),
      })).singleton(),
      passwordHashing: asValue(argon2Hashing(runHeavy)),
      services: asFunction(() => makeServices(container, provided)).singleton(),
      jobs: asFunction(
        ({ sql, clock, secretBox, events, logger }: Cradle) => new JobQueue({ sql, clock, secretBox, events, logger }),
      ).singleton(),
      flows: asFunction(({ sql, clock }: Cradle) => new LoginFlowStore(sql, clock)).singleton(),
      exchanges: asFunction(({ sql, clock }: Cradle) => new ExchangeStore(sql, clock)).singleton(),
      statuses: asFunction(({ sql, clock }: Cradle) => new StatusStore(sql, clock)).singleton(),
      notifier: asFunction(
        ({ config, extensions, events, clock, logger }: Cradle) =>
          new SecurityNotifier({
            config: config.notifications,
            channels: extensions.channels,
            events,
            history: events,
            clock,
            logger,
          }),
      ).singleton(),
      verification: asFunction((c: Cradle) => new VerificationService(c)).singleton(),
      enrollment: asFunction(
        ({ extensions, services, sql, clock, tokens, logout }: Cradle) =>
          new EnrollmentService({
            extensions,
            services,
            pending: recordStore(sql, clock, 'gatehouse:enrollment'),
            // Tokens and browser sessions: whoever held the old credential loses both.
            revokeGrants: async (userId, reason) => {
              await logout.endUserSessions(userId, reason);
              await tokens.revokeSubject(userId, reason);
            },
          }),
      ).singleton(),
      appSettings: asValue(new Map<string, AppSettings>()),
      clients: asFunction(
        ({ config, appSettings }: Cradle) => new ClientRegistry(config.apps, appSettings),
      ).singleton(),
      replay: asFunction(({ sql, clock }: Cradle) => new AssertionReplayStore(sql, clock)).singleton(),
      keys: asFunction(({ sql, clock, secretBox }: Cradle) => new KeyStore(sql, clock, secretBox)).singleton(),
      tokens: asFunction(
        ({ sql, clock, keys, config }: Cradle) => new TokenService(sql, clock, keys, config.issuer),
      ).singleton(),
      sessions: asFunction(({ sql, clock }: Cradle) => new SessionStore(sql, clock)).singleton(),
      logout: asFunction(
        ({ config, sessions, tokens, clients, keys, jobs, events, clock, logger }: Cradle) =>
          new LogoutService({ issuer: config.issuer, sessions, tokens, clients, keys, jobs, events, clock, logger }),
      ).singleton(),
      sso: asFunction(
        ({ users, verification, clock }: Cradle) => new SingleSignOn({ users, verifier: verification, clock }),
      ).singleton(),
      clientAuth: asFunction(
        ({ clients, replay, events, clock, config }: Cradle) =>
          new ClientAuthenticator({
            clients,
            replay,
            events,
            history: events,
            clock,
            audiences: assertionAudiences(config.issuer),
          }),
      ).singleton(),
    });
    const { extensions, services, clock } = container.cradle;
    const plugins = await registerPlugins(resolved, {
      extensions,
      services,
      logger,
      recordsFor: (name) => recordStore(sql, clock, name),
      provide: (name, service, owner) => {
        const first = provided.get(name);
        if (first)
          throw new BootError(
            'PLUGIN_DUPLICATE_ID',
            `plugin ${owner}: service "${name}" is already provided by plugin ${first}`,
          );
        if (name in container.registrations && !(name in REPLACEABLE_SERVICES)) {
          throw new BootError(
            'PLUGIN_INVALID',
            `plugin ${owner}: "${name}" is a core service a plugin may not replace`,
          );
        }
        provided.set(name, owner);
        container.register({ [name]: asValue(service) } as never);
      },
    });
    checkComposition(config, extensions, logger);
    container.register({ appSettings: asValue(appSettings(config, resolved, extensions)) });
    container.cradle.notifier.check();
    container.cradle.jobs.register(deliveryJob(deliverWith(extensions)));
    container.cradle.jobs.register(container.cradle.logout.noticeJob());

    let draining = false;
    let jobs: { stop(): Promise<void> } | null = null;
    const c = container.cradle;
    const issuerPath = new URL(config.issuer).pathname.replace(/\/+$/, '');
    const binding = browserBinding(config.issuer);
    const device = new DeviceCookie(binding.secure);
    const app = express();
    app.disable('x-powered-by');
    app.set('trust proxy', config.server.trust_proxy);
    app.use(httpLogger(logger));
    const oauthDeps: OAuthDeps = {
      issuer: config.issuer,
      clock,
      clients: c.clients,
      authenticator: c.clientAuth,
      tokens: c.tokens,
      keys: c.keys,
      replay: c.replay,
      verification: c.verification,
      extensions,
      users: c.users,
    };
    const oauth = oauthEndpoints(oauthDeps);
    app.use(oauthRoutes(oauthDeps, oauth));
    app.use(
      healthRoutes({
        ready: async () => {
          if (draining) throw new Error('shutting down');
          await sql.select('SELECT 1');
        },
      }),
    );
    app.use(
      adminRoutes({
        token: config.admin.token,
        users: c.users,
        events: c.events,
        sessions: c.sessions,
        logout: c.logout,
      }),
    );
    app.use(
      verificationRoutes({
        verification: c.verification,
        enrollment: c.enrollment,
        users: c.users,
        adminToken: config.admin.token,
        resolveBearer: async (token) => {
          const info = await c.tokens.inspect(token);
          if (!info.active || info.token?.kind !== 'access' || !info.token.subject) return null;
          const authTime = info.token.data.auth_time ?? info.grant?.data.auth_time;
          const amr = info.token.data.amr ?? info.grant?.data.amr;
          return {
            userId: info.token.subject,
            authTime: typeof authTime === 'number' ? authTime : null,
            scope: info.token.scope,
            amr: Array.isArray(amr) ? amr.filter((v): v is string => typeof v === 'string') : [],
          };
        },
        now: () => clock.now(),
        device,
        mayContinue: async (req, requestId) => {
          const flow = await c.flows.get(requestId);
          return !flow || binding.isBound(req, flow);
        },
        redirects: {
          // Browser redirects carry the issuer's path, for deployments behind a path prefix.
          nextStage: (flow) => issuerPath + defaultRedirects.nextStage(flow),
          // A login started by the authorization endpoint goes back to it to answer the client.
          completed: (flow) =>
            flow.params.oauth
              ? `${issuerPath}${RESUME_PATH}?request_id=${encodeURIComponent(flow.id)}`
              : defaultRedirects.completed(flow),
        },
      }),
    );
    app.use(
      loginPageRoutes({
        flows: c.flows,
        clients: c.clients,
        extensions,
        issuer: config.issuer,
        clock,
        isBound: (req, flow) => binding.isBound(req, flow),
        device,
        who: async (req, flow) => {
          const user = flow.userId ? await c.users.findById(flow.userId) : null;
          if (!user) return null;
          const cookie = readCookie(req, sessionCookieName(config.issuer));
          const session = await c.sessions.get(cookie);
          const request = flow.params.oauth as unknown as AuthorizationRequest | undefined;
          return {
            name: user.username,
            signOutCsrf: session?.userId === user.id ? logoutCsrf(cookie!) : null,
            restartUrl: request ? `${issuerPath}${authorizeUrlOf(request)}` : null,
          };
        },
        cancelCsrf: (req, flow) => (flow.params.oauth ? flowFormToken(config.issuer, req, flow) : null),
        findUser: (id) => c.users.findById(id),
        isEnrolled: (req, user, method, clientId) =>
          c.verification.isEnrolled(user, method, clientId, requestFacts(req, undefined, device), req.log),
        lastUsed: async (userId, methods) => {
          const recent = await c.events.recent({ types: ['verification.success'], userId, limit: 50 });
          return recent.find((e) => e.method !== null && methods.includes(e.method))?.method ?? null;
        },
        modules: new PageModules(extensions.methods.values()),
      }),
    );
    app.use(
      authorizeRoutes({
        issuer: config.issuer,
        clients: c.clients,
        sso: c.sso,
        device,
        tokens: c.tokens,
        sessions: c.sessions,
        logout: c.logout,
        flows: c.flows,
        consents: recordStore(sql, clock, 'gatehouse:consent'),
        clock,
        flowTtlSeconds: config.verification.flow_ttl,
        sessionTtlSeconds: config.oauth.session_ttl,
        perIpPerMinute: config.oauth.authorize_per_ip_per_minute,
      }),
    );
    app.use(
      endSessionRoutes({
        issuer: config.issuer,
        clients: c.clients,
        sessions: c.sessions,
        logout: c.logout,
        flows: c.flows,
        sessionCookie: sessionCookieName(config.issuer),
        isBound: (req, flow) => binding.isBound(req, flow),
        clearSession: (res) =>
          res.clearCookie(sessionCookieName(config.issuer), {
            path: '/',
            secure: binding.secure,
            sameSite: 'lax',
            httpOnly: true,
          }),
      }),
    );
    for (const route of extensions.routes.values()) app.use(route.path, route.router);
    app.use(notFound);
    app.use(errorHandler);

    return {
      app: withFastRoutes({
        routes: [...oauthFastRoutes(oauth), ...verificationFastRoutes(c.verification, device)],
        fallback: app,
        logger,
        trustProxy: app.get('trust proxy fn') as (addr: string, i: number) => boolean,
      }),
      express: app,
      config,
      logger,
      container,
      plugins,
      beginShutdown: () => {
        draining = true;
      },
      startBackgroundJobs: () => {
        c.jobs.start();
        const m = config.maintenance;
        if (jobs || m.purge_interval_seconds === 0) return;
        jobs = startPurgeJob(sql, clock, logger, {
          intervalSeconds: m.purge_interval_seconds,
          batchSize: m.purge_batch_size,
          maxBatches: m.purge_max_batches,
          eventRetentionDays: m.event_retention_days,
        });
      },
      idle: () => settle(c),
      close: async () => {
        await jobs?.stop();
        await settle(c);
        await c.jobs.stop();
        await container.cradle.notifier.drain();
        await container.dispose();
        await sql.close();
        await sequelize.close();
      },
    };
  } catch (err) {
    await sequelize.close();
    throw err;
  }
}
