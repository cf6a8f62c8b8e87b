import type { Driver } from '../storage/drivers.js';

/**
 * Counts every statement a driver runs from now on, those inside transactions too: the
 * statement budgets' tests and the bench's statements per TOTP pair. With `keepText`, `log`
 * keeps each statement's first 90 characters (a test shows them when a budget is exceeded).
 */
export function countStatements(driver: Driver, opts: { keepText?: boolean } = {}): { n: number; log: string[] } {
  const counter = { n: 0, log: [] as string[] };
  const wrap = (d: Driver): Driver => {
    const query = d.query.bind(d);
    const transaction = d.transaction.bind(d);
    // Every argument passed on: the SQLite driver's own transaction calls query with a third.
    d.query = ((...args: Parameters<Driver['query']>) => {
      counter.n++;
      if (opts.keepText) counter.log.push(args[0].replace(/\s+/g, ' ').slice(0, 90));
      return query(...args);
    }) as Driver['query'];
    d.transaction = ((work: (bound: Driver) => Promise<unknown>) =>
      transaction((bound) => work(bound === d ? bound : wrap(bound)))) as Driver['transaction'];
    return d;
  };
  wrap(driver);
  return counter;
}
