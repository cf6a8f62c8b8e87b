import type { Driver } from '../storage/drivers.js';
import type { Tracing } from './tracing.js';

/** The SQL keyword a statement starts with (SELECT, INSERT, ...), for the span's name. */
function operationOf(sql: string): string {
  return /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
}

/**
 * The driver with a span per statement and per transaction, inside a trace only: the job
 * poller's and the purge's statements, every second on every node, would each be a trace of
 * one span. The statement's text goes in, with its `:name` placeholders; the values bound to
 * them never do. `tracing` is asked at each call: a plugin provides it after the driver is opened.
 */
export function tracedDriver(driver: Driver, tracing: Tracing): Driver {
  const system = driver.dialect === 'postgres' ? 'postgresql' : 'sqlite';
  const wrap = (inner: Driver): Driver => ({
    dialect: inner.dialect,
    query: (sql, params) => {
      if (!tracing.inTrace()) return inner.query(sql, params);
      const operation = operationOf(sql);
      return tracing.span(
        `db ${operation}`,
        { 'db.system.name': system, 'db.operation.name': operation, 'db.query.text': sql },
        () => inner.query(sql, params),
      );
    },
    transaction: (work) =>
      !tracing.inTrace()
        ? inner.transaction((bound) => work(wrap(bound)))
        : tracing.span('db transaction', { 'db.system.name': system }, () =>
            inner.transaction((bound) => work(wrap(bound))),
          ),
    close: () => inner.close(),
    stats: () => inner.stats(),
  });
  return wrap(driver);
}
