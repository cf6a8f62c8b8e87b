import type { DatabaseStats } from '@gatehouse-auth/plugin-api';
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Sequelize } from 'sequelize';
import { rmSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { isTemporary } from './database.js';
import { BackgroundCheckpointer, type CheckpointerOptions } from './checkpointer.js';

export type Params = Record<string, unknown>;

/**
 * The raw database access under `Sql`: one SQLite connection with prepared statements, or a
 * PostgreSQL pool with named prepared statements. Sequelize stays for migrations only: on the
 * hot paths it cost a third of the time (a stack trace per query, a model layer per row).
 */
export interface Driver {
  readonly dialect: 'sqlite' | 'postgres';
  /** Runs a statement; returns its rows (SELECT, or a write with RETURNING). */
  query<T>(sql: string, params: Params): Promise<T[]>;
  /** Runs `work` in one transaction on a driver bound to it. */
  transaction<T>(work: (driver: Driver) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** What the driver can tell of its load now, for the metrics' gauges. */
  stats(): DriverStats;
}

/** A PostgreSQL pool's connections, or SQLite's write batch and WAL size (the contract's type). */
export type DriverStats = DatabaseStats;

const PARAM = /:([A-Za-z_][A-Za-z0-9_]*)/g;

/** Expands array parameters (`IN (:types)`) into one placeholder per element. */
function expand(sql: string, params: Params): { text: string; values: Params } {
  const values: Params = {};
  const text = sql.replace(PARAM, (match, name: string) => {
    if (!(name in params)) throw new Error(`missing SQL parameter :${name}`);
    const value = params[name];
    if (!Array.isArray(value)) {
      values[name] = value;
      return match;
    }
    if (value.length === 0) return 'NULL';
    return value
      .map((v, i) => {
        values[`${name}_${i}`] = v;
        return `:${name}_${i}`;
      })
      .join(', ');
  });
  return { text, values };
}

/** A statement's outcome: its rows (RETURNING) or the error it threw. */
type Outcome = { rows: unknown[] } | { error: unknown };

/** Runs a write: RETURNING rows come back, a plain write answers none. */
function runWrite(statement: BetterSqlite3.Statement, params: Params): Outcome {
  try {
    if (statement.reader) return { rows: statement.all(params) };
    statement.run(params);
    return { rows: [] };
  } catch (error) {
    return { error: error ?? new Error('statement failed') };
  }
}

const bindable = (v: unknown) => (v === undefined ? null : typeof v === 'boolean' ? (v ? 1 : 0) : v);

/**
 * SQLite through better-sqlite3: prepared statements run synchronously on the event loop in
 * microseconds, where node-sqlite3 queued each one through the thread pool on a single
 * connection (the bench's bottleneck: the server sat idle waiting for it).
 */
class SqliteDriver implements Driver {
  readonly dialect = 'sqlite';
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  /** While a transaction runs on the connection, other statements and transactions wait for it. */
  private gate: Promise<void> | null = null;
  /** While the checkpointer holds the writes, the group commit and new transactions wait for it. */
  private held: Promise<void> | null = null;
  readonly checkpointer: BackgroundCheckpointer;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly file: string,
    checkpoints: Partial<CheckpointerOptions> = {},
  ) {
    this.checkpointer = new BackgroundCheckpointer(db, file, () => this.holdWrites(), checkpoints);
  }

  /** The parameter names of each SQL text without array parameters, found once. */
  private readonly names = new Map<string, string[]>();

  async query<T>(sql: string, params: Params, inTransaction = false): Promise<T[]> {
    while (!inTransaction && this.gate) await this.gate;
    let text = sql;
    const bound: Record<string, unknown> = {};
    const names = this.names.get(sql);
    if (names) {
      // The hot path: a known statement with scalar parameters needs no parsing.
      for (const name of names) {
        const value = params[name];
        if (!(name in params) || Array.isArray(value))
          throw new Error(`SQL parameter :${name} is missing or not a scalar`);
        bound[name] = bindable(value);
      }
    } else {
      const expanded = expand(sql, params);
      text = expanded.text;
      for (const [k, v] of Object.entries(expanded.values)) bound[k] = bindable(v);
      if (!Object.values(params).some(Array.isArray)) this.names.set(sql, Object.keys(expanded.values));
    }
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    if (statement.readonly) {
      if (statement.reader) return statement.all(bound) as T[];
      statement.run(bound); // e.g. PRAGMA x = y: read-only, no rows
      return [];
    }
    this.checkpointer.wrote();
    if (!inTransaction) return (await this.groupCommit(statement, bound)) as T[];
    const outcome = runWrite(statement, bound);
    if ('error' in outcome) throw outcome.error;
    return outcome.rows as T[];
  }

  private pendingWrites: { statement: BetterSqlite3.Statement; params: Params; done: (o: Outcome) => void }[] = [];

  /**
   * Group commit: writes outside a transaction that arrive in the same turn of the event loop
   * (one per concurrent request, typically) commit together in one transaction, at the end of
   * the turn. Each write still succeeds or fails on its own (a failed statement is backed out
   * alone), and each caller resumes only after the commit, with its RETURNING rows. The
   * statements run one after another, so a conditional update still has exactly one winner.
   * A commit per write cost the token endpoint a WAL commit per token.
   */
  private groupCommit(statement: BetterSqlite3.Statement, params: Params): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      if (this.pendingWrites.length === 0) setImmediate(this.flushWrites);
      this.pendingWrites.push({
        statement,
        params,
        done: (outcome) => ('error' in outcome ? reject(outcome.error) : resolve(outcome.rows)),
      });
    });
  }

  private readonly flushWrites = () => {
    if (this.pendingWrites.length === 0) return; // flushed early, by transaction() or close()
    // A transaction() between its BEGIN and COMMIT owns the connection, and a hold keeps writes
    // back: flush once it ends.
    if (this.db.inTransaction || this.held) {
      void ((this.db.inTransaction ? this.gate : this.held) ?? Promise.resolve()).then(() =>
        setImmediate(this.flushWrites),
      );
      return;
    }
    const batch = this.pendingWrites;
    this.pendingWrites = [];
    if (batch.length === 1) {
      const [only] = batch as [(typeof batch)[0]];
      return only.done(runWrite(only.statement, only.params));
    }
    const outcomes: Outcome[] = [];
    try {
      this.db.exec('BEGIN IMMEDIATE');
      for (const write of batch) {
        const outcome = runWrite(write.statement, write.params);
        // Most errors back out their statement only; one that ended the transaction fails them all.
        if ('error' in outcome && !this.db.inTransaction) throw outcome.error;
        outcomes.push(outcome);
      }
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      for (const write of batch) write.done({ error });
      return;
    }
    batch.forEach((write, i) => write.done(outcomes[i]!));
  };

  async transaction<T>(work: (driver: Driver) => Promise<T>): Promise<T> {
    // One at a time, and none while the checkpointer holds the writes (in order: the first to wake goes).
    while (this.gate || this.held) await (this.gate ?? this.held);
    // Writes queued before the transaction commit first: the transaction may depend on them.
    this.flushWrites();
    let release!: () => void;
    this.gate = new Promise<void>((resolve) => (release = resolve));
    const bound: Driver = {
      dialect: 'sqlite',
      query: (sql, params) => this.query(sql, params, true),
      transaction: (inner) => inner(bound),
      close: async () => undefined,
      stats: () => this.stats(),
    };
    try {
      this.db.exec('BEGIN IMMEDIATE');
      const result = await work(bound);
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw err;
    } finally {
      this.gate = null;
      release();
    }
  }

  /**
   * For the checkpointer: resolves once no transaction runs (writes outside one run only at the
   * end of a turn), and keeps new writes and transactions waiting until the release.
   */
  private async holdWrites(): Promise<() => void> {
    while (this.gate) await this.gate;
    let release!: () => void;
    this.held = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.held = null;
      release();
    };
  }

  stats(): DriverStats {
    return { dialect: 'sqlite', pendingWrites: this.pendingWrites.length, walPages: this.checkpointer.walPages };
  }

  async close(): Promise<void> {
    await this.checkpointer.stop(); // ends a hold, if one is on
    if (!this.db.inTransaction) this.flushWrites(); // writes of the last turn are not lost
    this.statements.clear();
    this.db.close();
    // The throwaway file behind `sqlite::memory:` goes with it.
    if (isTemporary(this.file)) {
      for (const suffix of ['', '-wal', '-shm']) rmSync(this.file + suffix, { force: true });
    }
  }
}

type Queryable = Pick<pg.Pool, 'query'>;

class PostgresDriver implements Driver {
  readonly dialect = 'postgres';
  /** Per expanded text: the text with `$n` placeholders, its parameters in that order, a statement name. */
  private readonly compiled = new Map<string, { text: string; order: string[]; name: string }>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly target: Queryable = pool,
  ) {}

  async query<T>(sql: string, params: Params): Promise<T[]> {
    const { text: expanded, values } = expand(sql, params);
    let compiled = this.compiled.get(expanded);
    if (!compiled) {
      // `:name` → `$n`, and a stable prepared-statement name per text.
      const order: string[] = [];
      const text = expanded.replace(PARAM, (_m, name: string) => {
        let i = order.indexOf(name);
        if (i < 0) i = order.push(name) - 1;
        return `$${i + 1}`;
      });
      compiled = { text, order, name: `gh_${createHash('sha1').update(text).digest('hex').slice(0, 20)}` };
      if (this.compiled.size < 1000) this.compiled.set(expanded, compiled);
    }
    const { text, name, order } = compiled;
    try {
      const result = await this.target.query({ text, name, values: order.map((n) => values[n] ?? null) });
      return result.rows as T[];
    } catch (err) {
      throw fromDatabase(err);
    }
  }

  async transaction<T>(work: (driver: Driver) => Promise<T>): Promise<T> {
    const client = await this.pool.connect().catch((err: unknown) => Promise.reject(fromDatabase(err)));
    let broken: unknown = undefined;
    try {
      await client.query('BEGIN');
      const result = await work(new PostgresDriver(this.pool, client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      // A connection that failed is dropped, not handed to the next request.
      if (isStoreUnavailable(err)) broken = err;
      throw fromDatabase(err);
    } finally {
      client.release(broken as Error | undefined);
    }
  }

  stats(): DriverStats {
    const { totalCount, idleCount, waitingCount } = this.pool;
    return { dialect: 'postgres', total: totalCount, idle: idleCount, waiting: waitingCount };
  }

  async close(): Promise<void> {
    if (this.target === this.pool) await this.pool.end();
  }
}

/**
 * Opens the raw driver next to the Sequelize instance that ran the migrations: the same SQLite
 * file (see `sqlitePath`: `sqlite::memory:` is a private temporary file), or a pg pool.
 */
export async function openDriver(
  sequelize: Sequelize,
  url: string,
  poolMax = 10,
  timeouts: { connectMs?: number; queryMs?: number } = {},
): Promise<Driver> {
  if (sequelize.getDialect() === 'sqlite') {
    return openSqliteDriver(String((sequelize as unknown as { options: { storage?: string } }).options.storage));
  }
  // Fail fast when the database is cut or silent: a 503 in a second beats every request hanging.
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    connectionTimeoutMillis: timeouts.connectMs ?? 1000,
    query_timeout: timeouts.queryMs ?? 5000,
  });
  pool.on('error', () => undefined); // an idle client's error is reported on its next use
  return new PostgresDriver(pool);
}

/** SQLite in WAL mode on `file`, with its background checkpointer (options for tests). */
export function openSqliteDriver(
  file: string,
  checkpoints: Partial<CheckpointerOptions> = {},
): Driver & { readonly checkpointer: BackgroundCheckpointer } {
  const db = new BetterSqlite3(file, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  return new SqliteDriver(db, file, checkpoints);
}

/** Set on errors the PostgreSQL driver threw: a socket error there is the database's. */
const FROM_DATABASE = Symbol.for('gatehouse.databaseError');

function fromDatabase(err: unknown): unknown {
  if (typeof err === 'object' && err !== null) (err as Record<symbol, unknown>)[FROM_DATABASE] = true;
  return err;
}

/** The socket's codes (refused, reset, unreachable, timed out): the database's when its driver threw them. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);
const UNAVAILABLE_CODES = new Set([
  // PostgreSQL: connection exceptions (08), too many connections, shutting down or starting.
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300',
  '57P01',
  '57P02',
  '57P03',
  // SQLite: locked past the busy timeout, disk full or failing, file gone.
  'SQLITE_BUSY',
  'SQLITE_FULL',
  'SQLITE_CANTOPEN',
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection timeout|Client has encountered a connection error/i;

/**
 * Whether an error says the database cannot be reached or answer now (not that a statement is
 * wrong): the request is worth retrying shortly, and the server is not at fault. A socket error
 * counts only when the database driver threw it (not a webhook's, not a client going away).
 */
export function isStoreUnavailable(err: unknown): boolean {
  const driver = typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[FROM_DATABASE] === true;
  type Failure = { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  for (let e = err as Failure, depth = 0; e && depth < 4; depth++, e = e.cause as Failure) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR')) return true;
    const socket = SOCKET_CODES.has(code) || (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message));
    if (driver && socket) return true;
  }
  return false;
}

/** A unique-key violation, with the column when the database names it; else null. */
export function uniqueViolation(err: unknown): { column: string | null } | null {
  const e = err as { code?: string; message?: string; detail?: string };
  if (String(e?.code).startsWith('SQLITE_CONSTRAINT') && /UNIQUE constraint failed/.test(e.message ?? '')) {
    return { column: /UNIQUE constraint failed: \w+\.(\w+)/.exec(e.message ?? '')?.[1] ?? null };
  }
  if (e?.code === '23505') return { column: /Key \((\w+)\)/.exec(e.detail ?? '')?.[1] ?? null };
  return null;
}
