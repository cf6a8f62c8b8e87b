import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';

/**
 * PostgreSQL for tests: 127.0.0.1:5432, trust auth, user postgres, database `test`
 * (`.ci/run` makes sure a server answers). GATEHOUSE_TEST_POSTGRES_URL points elsewhere.
 */
export const POSTGRES_ADMIN_URL = process.env.GATEHOUSE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

// The parts of `pg` used here; the package ships no types and @types/pg is not installed.
interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}
interface PgModule {
  Client: new (config: { connectionString: string; connectionTimeoutMillis?: number }) => PgClient;
}
const pg = createRequire(import.meta.url)('pg') as PgModule;

/** Runs `fn` with a client connected to `url`, and always disconnects. */
async function withClient<T>(url: string, fn: (client: PgClient) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** `postgres://u@h:p/test` → `postgres://u@h:p/<database>` */
export function postgresUrl(database: string, base = POSTGRES_ADMIN_URL): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Why PostgreSQL cannot be used, or null when it answers. */
export async function postgresUnavailableReason(): Promise<string | null> {
  try {
    await withClient(POSTGRES_ADMIN_URL, (c) => c.query('SELECT 1'));
    return null;
  } catch (err) {
    return `${POSTGRES_ADMIN_URL}: ${(err as Error).message}`;
  }
}

export interface PostgresDatabase {
  /** The URL of this suite's own database; valid inside tests and hooks after `before`. */
  readonly url: string;
  readonly name: string;
}

/**
 * Call inside a mocha `describe`: creates a fresh database `gh_test_<random>` before the suite
 * and drops it after. When PostgreSQL does not answer, the suite fails under CI=true and is
 * skipped (with a message) otherwise.
 */
export function withPostgresDatabase(): PostgresDatabase {
  const name = `gh_test_${randomBytes(6).toString('hex')}`;
  let created = false;
  const db: PostgresDatabase = {
    name,
    get url() {
      if (!created) throw new Error('the PostgreSQL test database is not created yet (use it inside tests)');
      return postgresUrl(name);
    },
  };
  before(async function () {
    this.timeout(20_000);
    const reason = await postgresUnavailableReason();
    if (reason) {
      if (process.env.CI === 'true') throw new Error(`PostgreSQL is required under CI but not available: ${reason}`);
      console.log(`      PostgreSQL is not available (${reason}); skipping the PostgreSQL tests`);
      this.skip();
    }
    await withClient(POSTGRES_ADMIN_URL, (c) => c.query(`CREATE DATABASE ${name}`));
    created = true;
  });
  after(async function () {
    this.timeout(20_000);
    if (!created) return;
    await withClient(POSTGRES_ADMIN_URL, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    created = false;
  });
  return db;
}
