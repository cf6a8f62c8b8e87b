/**
 * Bench-only: fills oauth_tokens with synthetic access tokens straight through a running
 * Gatehouse's storage (scenario h, growth). Runs inside the Gatehouse child on an IPC message,
 * never over HTTP. The rows have the shape `TokenService.issue` gives a standalone opaque token:
 * id = SHA-256 (base64url) of a random token, grant_id = its own id (no grant row), the client,
 * scope and `{ jti, format, aud }` data, created now and expiring in an hour.
 */
import { createHash, randomBytes } from 'node:crypto';

/** The part of Gatehouse's `Sql` the seeding needs (`gatehouse.container.cradle.sql`). */
export interface SeedSql {
  select<T extends object>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  exec(sql: string, params?: Record<string, unknown>): Promise<void>;
  tx<T>(work: (sql: SeedSql) => Promise<T>): Promise<T>;
}

export interface SeedRequest {
  type: 'seed';
  /** Rows oauth_tokens should hold when done (the ones already there count). */
  target: number;
  clientId: string;
  scope: string;
  /** Stop when this much time has passed, even short of `target`. */
  budgetMs: number;
  /** Raw tokens of seeded rows to hand back, spread over this call's rows (for lookups that miss the cache). */
  sample: number;
}

export interface SeedReply {
  type: 'seeded';
  /** Rows in oauth_tokens afterwards. */
  rows: number;
  inserted: number;
  elapsedMs: number;
  /** True when the budget ran out before `target`. */
  truncated: boolean;
  /** Raw values of some seeded tokens (they introspect active for `clientId`). */
  sample: string[];
  error?: string;
}

/** Rows per INSERT statement: 4 bound values each, well under SQLite's 32,766 variables. */
const ROWS_PER_STATEMENT = 1000;
/** Rows per transaction: one commit (and WAL sync) per 5,000 rows; requests wait at most one of them. */
const ROWS_PER_TRANSACTION = 5000;
const TTL_MS = 3_600_000;

/** `INSERT … VALUES (…), (…)` for `rows` rows; the same text for every full batch, so it is prepared once. */
function insertStatement(rows: number): string {
  const values = Array.from(
    { length: rows },
    (_, i) => `(:id${i}, 'access', :id${i}, :clientId, NULL, :scope, :data${i}, :now${i}, :exp${i}, NULL, NULL, NULL)`,
  );
  return `INSERT INTO oauth_tokens (id, kind, grant_id, client_id, subject, scope, data, created_at, expires_at,
    revoked_at, rotated_at, parent_id) VALUES ${values.join(',\n')}`;
}

/** Inserts rows until oauth_tokens holds `target` or the budget is spent; yields to requests between transactions. */
export async function seedTokens(sql: SeedSql, req: SeedRequest): Promise<SeedReply> {
  const started = Date.now();
  const count = async () => (await sql.select<{ n: number | string }>('SELECT COUNT(*) AS n FROM oauth_tokens'))[0]!.n;
  const before = Number(await count());
  const wanted = Math.max(0, req.target - before);
  const aud = JSON.stringify([req.clientId]);
  const sample: string[] = [];
  const sampleEvery = Math.max(1, Math.floor(wanted / Math.max(1, req.sample)));
  let inserted = 0;
  let truncated = false;

  const fullStatement = insertStatement(ROWS_PER_STATEMENT);
  while (inserted < wanted) {
    if (Date.now() - started > req.budgetMs) {
      truncated = true;
      break;
    }
    const inThisTransaction = Math.min(ROWS_PER_TRANSACTION, wanted - inserted);
    await sql.tx(async (db) => {
      for (let done = 0; done < inThisTransaction;) {
        const rows = Math.min(ROWS_PER_STATEMENT, inThisTransaction - done);
        const params: Record<string, unknown> = { clientId: req.clientId, scope: req.scope };
        const random = randomBytes(48 * rows);
        const now = Date.now();
        for (let i = 0; i < rows; i += 1) {
          // Like randomToken(32) and randomToken(16): the token is stored only by its SHA-256.
          const token = random.subarray(i * 48, i * 48 + 32).toString('base64url');
          const jti = random.subarray(i * 48 + 32, (i + 1) * 48).toString('base64url');
          params[`id${i}`] = createHash('sha256').update(token).digest('base64url');
          params[`data${i}`] = `{"jti":"${jti}","format":"opaque","aud":${aud}}`;
          params[`now${i}`] = now;
          params[`exp${i}`] = now + TTL_MS;
          if ((inserted + done + i) % sampleEvery === 0 && sample.length < req.sample) sample.push(token);
        }
        await db.exec(rows === ROWS_PER_STATEMENT ? fullStatement : insertStatement(rows), params);
        done += rows;
      }
    });
    inserted += inThisTransaction;
    // Let anything else on the event loop run between transactions.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return {
    type: 'seeded',
    rows: Number(await count()),
    inserted,
    elapsedMs: Date.now() - started,
    truncated,
    sample,
  };
}
