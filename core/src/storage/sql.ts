import type { Driver, Params } from './drivers.js';

export type { Params };

/**
 * Raw-SQL helpers for the stores. Portable between SQLite and PostgreSQL: named `:params`
 * (arrays expand for `IN (...)`), times as epoch milliseconds, JSON as text, `RETURNING` for
 * conditional writes.
 */
export class Sql {
  constructor(readonly driver: Driver) {}

  get dialect(): Driver['dialect'] {
    return this.driver.dialect;
  }

  /**
   * Runs `work` in one transaction; its queries must go through the Sql it is given. Keep
   * transactions rare: single use is done with conditional updates, not transactions.
   */
  tx<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return this.driver.transaction((bound) => work(new Sql(bound)));
  }

  select<T extends object = Record<string, unknown>>(sql: string, params: Params = {}): Promise<T[]> {
    return this.driver.query<T>(sql, params);
  }

  async one<T extends object = Record<string, unknown>>(sql: string, params: Params = {}): Promise<T | null> {
    return (await this.select<T>(sql, params))[0] ?? null;
  }

  /** Runs a write; with a RETURNING clause the affected rows come back (use them to count). */
  write<T extends object = Record<string, unknown>>(sql: string, params: Params = {}): Promise<T[]> {
    return this.driver.query<T>(sql, params);
  }

  /** Runs a conditional write with a RETURNING clause: whether it changed a row (of racing callers, one wins). */
  async changed(sql: string, params: Params = {}): Promise<boolean> {
    return (await this.driver.query(sql, params)).length > 0;
  }

  async exec(sql: string, params: Params = {}): Promise<void> {
    await this.driver.query(sql, params);
  }

  close(): Promise<void> {
    return this.driver.close();
  }
}

/** BIGINT columns come back as strings from PostgreSQL. */
export function num(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

export function dateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : new Date(num(value));
}

export function parseJson<T>(text: unknown): T {
  return JSON.parse(String(text)) as T;
}
