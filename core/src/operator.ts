import type { CliServer, SigningAlg } from '@gatehouse-auth/plugin-api';
import type { GatehouseConfig } from './config/schema.js';
import type { Gatehouse } from './gatehouse.js';
import { createLogger } from './http/logging.js';
import { KeyStore } from './oauth/keys.js';
import { loadSecretBox, systemClock } from './services.js';
import { openDatabase } from './storage/database.js';
import { openDriver } from './storage/drivers.js';
import { migrate } from './storage/migrate.js';
import { Sql } from './storage/sql.js';
import { userImportStore } from './users/import-store.js';

// The operator's operations on a config, outside of any request: what the `gatehouse` command
// (@gatehouse-auth/cli, decision 73) runs. Each opens what it needs and closes it.

/** Applies the pending migrations; answers their names (none: the database is up to date). */
export async function migrateDatabase(config: GatehouseConfig): Promise<string[]> {
  const logger = createLogger(config.log.level);
  const db = await openDatabase({ url: config.database.url, logger });
  try {
    return await migrate(db, logger);
  } finally {
    await db.close();
  }
}

/**
 * Publishes a new signing key of each algorithm; it signs after `oauth.key_activation_delay`.
 * The old keys stay published until every token they signed has expired.
 */
export function rotateSigningKeys(
  config: GatehouseConfig,
): Promise<{ kid: string; alg: SigningAlg; activatesAt: Date }[]> {
  return withKeyStore(config, async (keys, sql) => {
    // The apps stored in the database count too (decision 51): their entries as written.
    const stored = (await sql.select<{ settings: string }>('SELECT settings FROM clients')).map(
      (r) => JSON.parse(r.settings) as Record<string, unknown>,
    );
    const ttls = [...config.apps, ...stored].flatMap((a) => [a.access_token_ttl, a.id_token_ttl]);
    const longest = Math.max(3600, ...ttls.filter((n) => typeof n === 'number'));
    return keys.rotate(config.oauth.key_activation_delay, longest);
  });
}

/** The published signing keys, as the JWKS lists them. */
export function publishedSigningKeys(config: GatehouseConfig): Promise<{ kid: string; alg: string; use: string }[]> {
  return withKeyStore(config, async (keys) =>
    (await keys.jwks()).keys.map((k) => ({ kid: String(k.kid), alg: String(k.alg), use: String(k.use) })),
  );
}

/** The key store of the config's database (migrated first), closed after `use`. */
async function withKeyStore<T>(config: GatehouseConfig, use: (keys: KeyStore, sql: Sql) => Promise<T>): Promise<T> {
  const logger = createLogger('warn');
  const db = await openDatabase({ url: config.database.url, logger });
  let sql: Sql | undefined;
  try {
    await migrate(db, logger);
    sql = new Sql(await openDriver(db, config.database.url, 2));
    return await use(new KeyStore(sql, systemClock, loadSecretBox(config, logger), config.oauth.signing_algs), sql);
  } finally {
    await sql?.close();
    await db.close();
  }
}

/** What a plugin's command sees of the composed server (`CliContext.server()`). */
export function cliServer(gatehouse: Gatehouse): CliServer {
  const c = gatehouse.container.cradle;
  return {
    services: c.services,
    logger: gatehouse.logger,
    // Without its password: the command prints it.
    databaseUrl: gatehouse.config.database.url.replace(/^([a-z][\w+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@'),
    method: (id) => c.extensions.methods.get(id),
    userImport: userImportStore(c.sql, c.clock),
  };
}
