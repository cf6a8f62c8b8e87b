import type { Clock, PeerBusService, Served, ServingInfo } from '@gatehouse-auth/plugin-api';
import { randomBytes } from 'node:crypto';
import type { RequestListener } from 'node:http';
import { asValue, type AwilixContainer } from 'awilix';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { createGatehouseContainer } from './composition/container.js';
import type { Cradle } from './composition/cradle.js';
import { provideService, queuedDeliveries } from './composition/plugin-services.js';
import { buildWeb } from './composition/web.js';
import type { LoadedConfig } from './config/load.js';
import type { GatehouseConfig } from './config/schema.js';
import { createLogger } from './http/logging.js';
import { startPurgeJob } from './maintenance.js';
import { tracedDriver } from './observability/database.js';
import { metricsSlot } from './observability/metrics.js';
import { tracingSlot } from './observability/tracing.js';
import { appChecker, appSettings, joinPluginApps } from './plugins/app-config.js';
import { checkComposition } from './plugins/composition.js';
import { registerPlugins, resolvePlugins, type LoadedPluginInfo } from './plugins/loader.js';
import { startAll, type StartedTogether } from './plugins/serve.js';
import { pluginWeb } from './plugins/web.js';
import { checkMetadataMembers } from './oauth/endpoints.js';
import { systemClock } from './services.js';
import { BootError } from './errors.js';
import { openDatabase } from './storage/database.js';
import { openDriver } from './storage/drivers.js';
import { migrate } from './storage/migrate.js';
import { Sql } from './storage/sql.js';
import { NO_PEER_BUS, Peers } from './peer-bus.js';
import { recordStore } from './storage/stores.js';

export type { Cradle } from './composition/cradle.js';

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
  /** The hot endpoints `app` answers before express (decision 11): method (`*` for any) and path. */
  fastRoutes: readonly { method: string; path: string }[];
  config: GatehouseConfig;
  logger: Logger;
  container: AwilixContainer<Cradle>;
  plugins: LoadedPluginInfo[];
  /**
   * Runs what plugins serve besides the public port (`api.serve`: a listener of their own).
   * `listen` calls it once the port is open, and closes what it started at shutdown.
   */
  serve(serving: ServingInfo): Promise<StartedTogether>;
  /** Makes /health/ready answer 503 so load balancers stop sending traffic. */
  beginShutdown(): void;
  /** Starts the background work: the job queue's poller and the purge of expired rows. */
  startBackgroundJobs(): void;
  /**
   * Resolves once the work requests left running after their answers has finished here: sign-in
   * initiations completing, and first attempts of queued deliveries. Tests wait on it.
   */
  idle(): Promise<void>;
  /** Releases the database. Call after the HTTP server closed. */
  close(): Promise<void>;
}

function isLoaded(c: GatehouseConfig | LoadedConfig): c is LoadedConfig {
  return 'config' in c && 'baseDir' in c;
}

/**
 * Composes a Gatehouse server from a config, without listening: imports and checks the plugins,
 * opens and migrates the database, fills the container, lets the plugins register and checks
 * what they made of it, then builds the HTTP side. Tests call this in-process.
 */
export async function buildApp(input: GatehouseConfig | LoadedConfig, options: BuildOptions = {}): Promise<Gatehouse> {
  const config = isLoaded(input) ? input.config : input;
  const baseDir = options.baseDir ?? (isLoaded(input) ? input.baseDir : process.cwd());
  const logger = options.logger ?? createLogger(config.log.level);

  // Import and check plugins before touching the database: a bad plugin fails fast.
  const resolved = await resolvePlugins(config.plugins, baseDir);
  const { database } = config;
  const sequelize = await openDatabase({
    url: database.url,
    logger,
    logSql: database.log_sql,
    poolMax: database.pool_max,
  });
  // Off until opened below, once the plugins registered: the bus to the others is a plugin's (decision 87).
  const bus = new Peers();
  let closeCounters: (() => Promise<void>) | undefined;
  let opened: Sql | undefined; // the driver's connections (a pg pool, the SQLite file)
  try {
    if (options.migrate !== false) await migrate(sequelize, logger);
    // No-op until a plugin provides `tracing` (decision 37); the driver below already holds it.
    const tracing = tracingSlot();
    // Likewise for `metrics` (decision 67): services made before the plugins hold this one.
    const metrics = metricsSlot();
    const sql = new Sql(
      tracedDriver(
        await openDriver(sequelize, database.url, database.pool_max, {
          connectMs: database.connect_timeout_ms,
          queryMs: database.query_timeout_ms,
        }),
        tracing,
      ),
    );
    opened = sql;
    const provided = new Map<string, string>();
    const starts: { plugin: string; start: (serving: ServingInfo) => Promise<Served | void> }[] = [];
    const container = createGatehouseContainer(
      { config, logger, sequelize, sql, clock: options.clock ?? systemClock, peers: bus, tracing, metrics },
      provided,
    );
    const c = container.cradle;
    // Whichever counters are current when closed: a plugin's holds a connection (Redis).
    closeCounters = () => c.sharedCounters.close();
    // Peer news (revocations, client blocks) must find its listeners from the first message.
    container.resolve('tokenCache');
    container.resolve('clientBlocks');
    c.jobs.register(queuedDeliveries(c.extensions, c));

    const plugins = await registerPlugins(resolved, {
      extensions: c.extensions,
      services: c.services,
      logger,
      recordsFor: (name) => recordStore(sql, c.clock, name),
      provide: provideService(container, provided),
      dependencies: c.dependencies,
      securityEvents: c.securityEvents,
      webFor: (plugin, catalogs) => pluginWeb(plugin, c, catalogs),
      serve: (plugin, start) => void starts.push({ plugin, start }),
      jobs: c.jobs,
    });
    // Before the apps are loaded and the first request: no news is missed from then on.
    const others = provided.has('peerBus') ? container.resolve<PeerBusService>('peerBus') : undefined;
    await bus.open(others, { url: database.url, workers: config.server.workers });
    if (provided.has('tracing')) tracing.use(c.tracing);
    if (provided.has('metrics')) metrics.use(c.metrics);
    joinPluginApps(config, c.extensions);
    checkComposition(config, c.extensions, logger);
    const configSettings = appSettings(config, resolved, c.extensions);
    container.register({
      appSettings: asValue({ get: (id: string) => configSettings.get(id) ?? c.clients.storedSettings(id) }),
      appCheck: asValue(appChecker(config, resolved, c.extensions)),
      loadedPlugins: asValue(plugins),
    });
    // After appSettings: the client registry it builds must see the plugins' app keys.
    checkMetadataMembers(c);
    // The apps stored in the database, before the first request (decision 0051).
    await c.storedClients.start();
    // Revocations written by processes the peer bus does not reach (SQLite; decision 0089).
    await c.invalidationLog.start();

    const web = buildWeb(c);
    let purge: { stop(): Promise<void> } | null = null;
    return {
      app: web.listener,
      express: web.express,
      fastRoutes: web.fastRoutes,
      config,
      logger,
      container,
      plugins,
      serve: (serving) => startAll(starts.map(({ plugin, start }) => ({ plugin, start: () => start(serving) }))),
      beginShutdown: () => {
        c.lifecycle.draining = true;
      },
      startBackgroundJobs: () => {
        c.jobs.start();
        purge ??= startPurgeJob(sql, c.clock, logger, config.maintenance);
      },
      idle: () => settle(c),
      close: async () => {
        await purge?.stop();
        await c.invalidationLog.stop();
        await settle(c);
        await c.jobs.stop();
        await c.securityEvents.drain();
        await c.sharedCounters.close(); // after the last hit
        await container.dispose();
        await bus.close();
        await sql.close();
        await sequelize.close();
        // Last: the spans of everything above are exported before the exporter stops.
        await tracing.shutdown();
      },
    };
  } catch (err) {
    await closeCounters?.();
    await bus.close();
    await opened?.close();
    await sequelize.close();
    throw err;
  }
}

/** Background initiations queue deliveries, and deliveries may finish more: wait until both are quiet. */
async function settle(c: Cradle): Promise<void> {
  do {
    await c.verification.idle();
    await c.jobs.idle();
    await c.securityEvents.drain();
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
  // Built on SQLite, where a bus to the others is not needed: the configured database may need one.
  if (/^postgres/.test(loaded.config.database.url) && !app.container.hasRegistration('peerBus'))
    throw new BootError('CONFIG_INVALID', NO_PEER_BUS);
  return { plugins: app.plugins };
}
