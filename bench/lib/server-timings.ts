/**
 * --server-latency, Gatehouse only: where a request's handling waits (lib/server-latency.ts
 * reports these timers with the rest). Each SQL statement from its `driver.query` call to its
 * promise settling, writes (INSERT, UPDATE, DELETE, a WITH that writes) and reads (SELECT, a WITH
 * that does not) apart: under SQLite a write outside a transaction settles after its group commit.
 * Each `driver.transaction` call, its wait for the connection included. Each `jwtSigning.sign`
 * call (with the worker-threads plugin, the signing thread's round trip). Nothing is wrapped
 * without BENCH_SERVER_LATENCY=1.
 */
import type { JwtSigning } from '@gatehouse-auth/core';
import { latencyEnabled, timer } from './server-latency.js';

/** The core's storage driver (`cradle.sql.driver`), seen through its two calls (as countStatements does). */
interface Driver {
  query(sql: string, ...rest: never[]): Promise<unknown>;
  transaction(work: (bound: this) => Promise<unknown>): Promise<unknown>;
}

const WRITE = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;
const READ = /^\s*SELECT\b/i;
const WITH = /^\s*WITH\b/i;
const WRITES_IN_WITH = /\b(INSERT|UPDATE|DELETE)\b/i;

/** Times the driver's statements and transactions, those on a transaction's bound driver too. */
export function timeStatements(driver: Driver): void {
  if (!latencyEnabled()) return;
  const writes = timer('sql writes');
  const reads = timer('sql reads');
  const transactions = timer('transactions');
  // The driver as this function changes it: its two calls, with any arguments.
  type Loose = {
    query: (sql: string, ...rest: unknown[]) => Promise<unknown>;
    transaction: (work: (bound: Loose) => Promise<unknown>) => Promise<unknown>;
  };
  const wrap = (d: Loose, top: boolean): Loose => {
    const query = d.query.bind(d);
    const transaction = d.transaction.bind(d);
    d.query = (sql, ...rest) => {
      // The SQLite driver's bound driver runs its statements through the top one's query, with a
      // third argument (true): timed once, by the bound driver's wrapper.
      if (top && rest[1] === true) return query(sql, ...rest);
      const write = WRITE.test(sql) || (WITH.test(sql) && WRITES_IN_WITH.test(sql));
      const time = write ? writes : READ.test(sql) || WITH.test(sql) ? reads : null;
      return time ? time(() => query(sql, ...rest)) : query(sql, ...rest);
    };
    const bounded = (work: (bound: Loose) => Promise<unknown>) =>
      transaction((bound) => work(bound === d ? bound : wrap(bound, false)));
    d.transaction = top ? (work) => transactions(() => bounded(work)) : bounded;
    return d;
  };
  wrap(driver as unknown as Loose, true);
}

/** Times the signing service's calls (the same object the token service reads at each token). */
export function timeSigning(signing: JwtSigning): void {
  if (!latencyEnabled()) return;
  const signs = timer('signatures');
  const sign = signing.sign.bind(signing);
  signing.sign = (...args) => signs(() => sign(...args));
}
