import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Sequelize, type Options } from 'sequelize';
import type { Logger } from 'pino';

export interface DatabaseOptions {
  url: string;
  logger: Logger;
  logSql?: boolean;
  poolMax?: number;
}

const TEMPORARY = path.join(tmpdir(), 'gatehouse-memory-');

/** True for the throwaway file behind `sqlite::memory:`. */
export function isTemporary(storage: string): boolean {
  return storage.startsWith(TEMPORARY);
}

/**
 * `sqlite:./data/x.db` → `./data/x.db`. `sqlite::memory:` becomes a private temporary file
 * (deleted on close): the migrations' connection and the runtime driver are two SQLite
 * libraries, and an in-memory database exists only inside the connection that made it.
 */
export function sqlitePath(url: string): string {
  const rest = url.slice('sqlite:'.length);
  const file = rest.startsWith('//') ? rest.slice(2) : rest;
  return file === ':memory:' ? `${TEMPORARY}${randomUUID()}.db` : file;
}

/**
 * Opens the database named by `url`: a SQLite file (WAL) by default, PostgreSQL for
 * `postgres://` URLs. Does not run migrations (see migrate.ts).
 */
export async function openDatabase(opts: DatabaseOptions): Promise<Sequelize> {
  const logging: Options['logging'] = opts.logSql ? (sql: string) => opts.logger.debug({ sql }, 'sql') : false;
  let sequelize: Sequelize;
  if (opts.url.startsWith('sqlite:')) {
    const storage = sqlitePath(opts.url);
    mkdirSync(path.dirname(path.resolve(storage)), { recursive: true });
    sequelize = new Sequelize({
      dialect: 'sqlite',
      storage,
      logging,
      // One connection: migrations only (the stores use the runtime driver).
      pool: { max: 1, min: 1, idle: Number.MAX_SAFE_INTEGER },
      retry: { max: 5, match: [/SQLITE_BUSY/] },
    });
    preparePerConnection(sequelize);
    await sequelize.query('PRAGMA journal_mode = WAL');
  } else {
    sequelize = new Sequelize(opts.url, {
      dialect: 'postgres',
      logging,
      pool: { max: opts.poolMax ?? 10, min: 0, idle: 10_000 },
    });
    await sequelize.authenticate();
  }
  return sequelize;
}

interface SqliteConnection {
  exec(sql: string, callback: (err: Error | null) => void): void;
}

const PRAGMAS = 'PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;';

/**
 * Sequelize's SQLite dialect opens a new connection for each transaction and has no
 * afterConnect hook, so its getConnection is wrapped to give every connection the PRAGMAs
 * (above all busy_timeout: without it a second writer fails at once with SQLITE_BUSY).
 */
function preparePerConnection(sequelize: Sequelize): void {
  const manager = (
    sequelize as unknown as { connectionManager: { getConnection(o: unknown): Promise<SqliteConnection> } }
  ).connectionManager;
  const original = manager.getConnection.bind(manager);
  const prepared = new WeakSet<SqliteConnection>();
  manager.getConnection = async (options) => {
    const connection = await original(options);
    if (!prepared.has(connection)) {
      prepared.add(connection);
      await new Promise<void>((resolve, reject) => connection.exec(PRAGMAS, (err) => (err ? reject(err) : resolve())));
    }
    return connection;
  };
}
