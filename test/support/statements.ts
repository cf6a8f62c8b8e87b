/** Counting the SQL statements a request costs (the statement budgets of issue 15). */
import type { Gatehouse } from '@gatehouse-auth/core';

type Driver = Gatehouse['container']['cradle']['sql']['driver'];

/** Counts every statement the driver runs, those inside transactions too; `log` keeps their text. */
export function countStatements(driver: Driver): { n: number; log: string[] } {
  const counter = { n: 0, log: [] as string[] };
  const wrap = (d: Driver): Driver => {
    const query = d.query.bind(d);
    const transaction = d.transaction.bind(d);
    // Every argument passed on: the SQLite driver's own transaction calls query with a third.
    d.query = ((...args: Parameters<Driver['query']>) => {
      counter.n++;
      counter.log.push(args[0].replace(/\s+/g, ' ').slice(0, 90));
      return query(...args);
    }) as Driver['query'];
    d.transaction = ((work: (bound: Driver) => Promise<unknown>) =>
      transaction((bound) => work(bound === d ? bound : wrap(bound)))) as Driver['transaction'];
    return d;
  };
  wrap(driver);
  return counter;
}
