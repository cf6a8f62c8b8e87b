import type { Logger } from 'pino';
import type { QueryInterface, Sequelize } from 'sequelize';
import { SequelizeStorage, Umzug } from 'umzug';
import type { Migration } from './migration.js';

export type { Migration } from './migration.js';
import { m001Users } from './migrations/001-users.js';
import { m002Stores } from './migrations/002-stores.js';
import { m003LoginFlows } from './migrations/003-login-flows.js';
import { m004OAuth } from './migrations/004-oauth.js';
import { m005TokenParents } from './migrations/005-token-parents.js';
import { m006UserIdentifiers } from './migrations/006-user-identifiers.js';
import { m007BoundedWrites } from './migrations/007-bounded-writes.js';
import { m008Jobs } from './migrations/008-jobs.js';
import { m009Logout } from './migrations/009-logout.js';
import { m010Devices } from './migrations/010-devices.js';
import { m011RateWindows } from './migrations/011-rate-windows.js';
import { m012Clients } from './migrations/012-clients.js';
import { m013StandaloneTokenIndex } from './migrations/013-standalone-token-index.js';
import { m014TokenInvalidations } from './migrations/014-token-invalidations.js';

/**
 * Every migration, in order. An explicit list rather than a glob: a stale file in dist/
 * can never run by accident.
 */
export const MIGRATIONS: Migration[] = [
  m001Users,
  m002Stores,
  m003LoginFlows,
  m004OAuth,
  m005TokenParents,
  m006UserIdentifiers,
  m007BoundedWrites,
  m008Jobs,
  m009Logout,
  m010Devices,
  m011RateWindows,
  m012Clients,
  m013StandaloneTokenIndex,
  m014TokenInvalidations,
];

function migrator(sequelize: Sequelize, logger: Logger): Umzug<QueryInterface> {
  return new Umzug({
    migrations: MIGRATIONS,
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: 'gatehouse_migrations' }),
    logger: {
      info: (msg) => logger.info(msg, 'migration'),
      warn: (msg) => logger.warn(msg, 'migration'),
      error: (msg) => logger.error(msg, 'migration'),
      debug: (msg) => logger.debug(msg, 'migration'),
    },
  });
}

/** An arbitrary constant: the advisory lock that serialises migrations across nodes. */
const MIGRATION_LOCK = 7_301_944_217;

/**
 * Applies pending migrations; returns the names applied. On PostgreSQL, nodes starting at once
 * take turns behind an advisory lock, held by a transaction for the whole run.
 */
export async function migrate(sequelize: Sequelize, logger: Logger): Promise<string[]> {
  const run = async () => (await migrator(sequelize, logger).up()).map((m) => m.name);
  if (sequelize.getDialect() !== 'postgres') return run();
  return sequelize.transaction(async (transaction) => {
    await sequelize.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`, { transaction });
    return run();
  });
}

export async function pendingMigrations(sequelize: Sequelize, logger: Logger): Promise<string[]> {
  return (await migrator(sequelize, logger).pending()).map((m) => m.name);
}
