import type { Logger } from 'pino';
import type { LoadedConfig } from './config/load.js';
import { startPurgeJob } from './maintenance.js';
import { resolvePlugins } from './plugins/loader.js';
import { startAll, type StartedTogether } from './plugins/serve.js';
import { loadSecretBox, systemClock } from './services.js';
import { openDatabase } from './storage/database.js';
import { migrate } from './storage/migrate.js';
import { openDriver } from './storage/drivers.js';
import { Sql } from './storage/sql.js';

/**
 * The core's share of the primary of `server.workers > 1` (the `gatehouse` command forks the
 * workers, restarts one that dies and lets them drain on SIGTERM: @gatehouse-auth/cli, decision
 * 82): migrates once, runs the purge job and runs the plugins' `primary` hooks (the peer bus's
 * relays the workers' news, decision 87). Call it before forking; `close` stops what it started,
 * once the workers exited.
 */
export async function startPrimary(loaded: LoadedConfig, logger: Logger): Promise<StartedTogether> {
  const { config } = loaded;
  // Generate the key file (if any) before the workers race for it.
  loadSecretBox(config, logger);
  const db = await openDatabase({ url: config.database.url, logger, poolMax: 2 });
  await migrate(db, logger);
  const purge =
    config.maintenance.purge_interval_seconds > 0
      ? startPurgeJob(new Sql(await openDriver(db, config.database.url, 2)), systemClock, logger, config.maintenance)
      : null;

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
  return {
    ports: hooks.ports,
    close: async () => {
      await hooks.close();
      await purge?.stop();
      await db.close();
    },
  };
}
