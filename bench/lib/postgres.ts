import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';

/** Where the bench creates its throw-away PostgreSQL database (as test/support/postgres.ts does). */
export const POSTGRES_ADMIN_URL = process.env.GATEHOUSE_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

// The parts of `pg` used here; the package ships no types and @types/pg is not installed.
interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
}
const pg = createRequire(import.meta.url)('pg') as {
  Client: new (config: { connectionString: string; connectionTimeoutMillis?: number }) => PgClient;
};

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database `gh_bench_<random>` on 127.0.0.1; `drop()` removes it. */
export async function createBenchDatabase(): Promise<BenchDatabase> {
  const admin = new URL(POSTGRES_ADMIN_URL);
  if (admin.hostname !== '127.0.0.1' && admin.hostname !== 'localhost') {
    throw new Error(`bench: PostgreSQL must be on the loopback, not ${admin.hostname}`);
  }
  const name = `gh_bench_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
