import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { LoadedConfig } from './config/load.js';
import { startPurgeJob } from './maintenance.js';
import { resolvePlugins } from './plugins/loader.js';
import { portFields, startAll } from './plugins/serve.js';
import { loadSecretBox, systemClock } from './services.js';
import { openDatabase } from './storage/database.js';
import { migrate } from './storage/migrate.js';
import { relayPeerNews } from './peer-bus.js';
import { openDriver } from './storage/drivers.js';
import { Sql } from './storage/sql.js';

/**
 * The primary of `server.workers > 1`: migrates once, forks the workers (which share the port),
 * restarts a worker that dies, runs the purge job and the plugins' `primary` hooks, and on
 * SIGTERM lets every worker drain.
 */
export async function runPrimary(loaded: LoadedConfig, workers: number, logger: Logger): Promise<void> {
  const { config } = loaded;
  // Generate the key file (if any) before the workers race for it.
  loadSecretBox(config, logger);
  const db = await openDatabase({ url: config.database.url, logger, poolMax: 2 });
  await migrate(db, logger);
  const purge =
    config.maintenance.purge_interval_seconds > 0
      ? startPurgeJob(new Sql(await openDriver(db, config.database.url, 2)), systemClock, logger, config.maintenance)
      : null;

  let stopping = false;
  const fork = (): Worker => cluster.fork({ GATEHOUSE_WORKER: '1' });
  let listened = false;
  cluster.on('listening', () => (listened = true));
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    // Failed before any worker listened: the config, which every worker would refuse alike.
    if (!listened && code !== 0) return void stop('SIGTERM', 1);
    logger.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another');
    setTimeout(fork, 1000).unref();
  });
  relayPeerNews();
  // Only the plugins with a `primary` hook run here (decision 67), before the workers start: a
  // listener that answers for all of them, e.g. the workers' metrics added up.
  const hooked = (await resolvePlugins(config.plugins, loaded.baseDir)).filter((r) => r.plugin.primary);
  const hooks = await startAll(
    hooked.map(({ plugin, version, options }) => ({
      plugin: plugin.name,
      start: () =>
        plugin.primary!(
          { plugin: { name: plugin.name, version }, logger: logger.child({ plugin: plugin.name }) },
          options,
        ),
    })),
  );
  for (let i = 0; i < workers; i++) fork();
  logger.info({ workers, ...portFields(hooks.ports) }, 'gatehouse primary started');

  const stop = async (signal: NodeJS.Signals, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping workers');
    const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => Boolean(w));
    await Promise.all(
      alive.map(
        (w) =>
          new Promise<void>((resolve) => {
            w.once('exit', () => resolve());
            w.process.kill('SIGTERM');
          }),
      ),
    );
    await hooks.close();
    await purge?.stop();
    await db.close();
    logger.info('all workers stopped');
    process.exit(exitCode);
  };
  // Not `stop` itself: a signal's listener is also handed the signal's number.
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}
