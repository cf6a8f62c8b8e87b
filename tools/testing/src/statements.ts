/**
 * What `countStatements` wraps: the core's storage driver (under `Sql`), seen only through the
 * two calls every statement goes through. The core does not export its driver type: a test
 * reaches the driver through the server it built.
 */
export interface StatementDriver {
  query(sql: string, ...rest: never[]): Promise<unknown>;
  transaction(work: (bound: this) => Promise<unknown>): Promise<unknown>;
}

/**
 * Counts every statement a driver runs from now on, those inside transactions too: the
 * statement budgets' tests and the bench's statements per TOTP pair. With `keepText`, `log`
 * keeps each statement's first 90 characters (a test shows them when a budget is exceeded).
 */
export function countStatements(
  driver: StatementDriver,
  opts: { keepText?: boolean } = {},
): { n: number; log: string[] } {
  const counter = { n: 0, log: [] as string[] };
  // The driver as this function changes it: its two calls, with any arguments.
  type Loose = {
    query: (sql: string, ...rest: unknown[]) => Promise<unknown>;
    transaction: (work: (bound: Loose) => Promise<unknown>) => Promise<unknown>;
  };
  const wrap = (d: Loose): Loose => {
    const query = d.query.bind(d);
    const transaction = d.transaction.bind(d);
    // Every argument passed on: the SQLite driver's own transaction calls query with a third.
    d.query = (sql, ...rest) => {
      counter.n++;
      if (opts.keepText) counter.log.push(sql.replace(/\s+/g, ' ').slice(0, 90));
      return query(sql, ...rest);
    };
    d.transaction = (work) => transaction((bound) => work(bound === d ? bound : wrap(bound)));
    return d;
  };
  wrap(driver as unknown as Loose);
  return counter;
}
