import { expect } from 'chai';
import { errorReply, replyLogger } from '../../core/dist/http/error-handler.js';
import { isStoreUnavailable } from '../../core/dist/storage/drivers.js';

/** An error as the PostgreSQL driver throws it (marked so by the driver): a message, and a code when it has one. */
const driverError = (message: string, code?: string, cause?: unknown) =>
  Object.assign(new Error(message, cause ? { cause } : undefined), code ? { code } : {}, {
    [Symbol.for('gatehouse.databaseError')]: true,
  });

describe('a database that cannot answer: 503, never a fault (issue 30)', () => {
  it('recognises refused, reset, timed-out and shut-down connections, and SQLite locked past its timeout', () => {
    for (const err of [
      driverError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      driverError('read ECONNRESET', 'ECONNRESET'),
      driverError('terminating connection due to administrator command', '57P01'),
      driverError('sorry, too many clients already', '53300'),
      driverError('Connection terminated unexpectedly'),
      driverError('timeout exceeded when trying to connect'),
      driverError('Query read timeout'),
      driverError('database is locked', 'SQLITE_BUSY'),
      driverError('disk I/O error', 'SQLITE_IOERR_WRITE'),
      driverError('statement failed', undefined, driverError('connect ECONNREFUSED', 'ECONNREFUSED')),
    ]) {
      expect(isStoreUnavailable(err), err.message).to.equal(true);
    }
  });

  it('a socket error from elsewhere (a webhook, a client going away) is not the database', () => {
    for (const [message, code] of [
      ['connect ECONNREFUSED 203.0.113.9:443', 'ECONNREFUSED'],
      ['aborted', 'ECONNRESET'],
    ]) {
      expect(isStoreUnavailable(Object.assign(new Error(message), { code })), message).to.equal(false);
    }
    // SQLSTATEs and SQLite's codes say so by themselves.
    expect(isStoreUnavailable(Object.assign(new Error('shutting down'), { code: '57P01' }))).to.equal(true);
    expect(isStoreUnavailable(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))).to.equal(true);
  });

  it('does not take a wrong statement or a constraint for an outage', () => {
    for (const err of [
      driverError('syntax error at or near "SELEC"', '42601'),
      driverError('duplicate key value violates unique constraint', '23505'),
      driverError('UNIQUE constraint failed: users.username', 'SQLITE_CONSTRAINT_UNIQUE'),
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      null,
      'a string',
    ]) {
      expect(isStoreUnavailable(err), String(err)).to.equal(false);
    }
  });

  it('answers 503 with Retry-After in the style of the endpoint; other faults stay 500 and are logged', () => {
    const down = driverError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED');
    const api = errorReply(down, 'req-1');
    expect(api).to.deep.include({ status: 503, fault: false, unavailable: true });
    expect(api.headers['Retry-After']).to.equal('5');
    expect((api.body as { error: { code: string } }).error.code).to.equal('STORE_UNAVAILABLE');
    expect(errorReply(down, 'req-1', 'oauth').body).to.deep.equal({
      error: 'temporarily_unavailable',
      error_description: 'the database is unavailable; retry shortly',
    });

    const bug = new TypeError('x is undefined');
    expect(errorReply(bug, 'req-2')).to.deep.include({ status: 500, fault: true });
    expect(errorReply(bug, 'req-2', 'oauth').body).to.deep.equal({
      error: 'server_error',
      error_description: 'internal server error',
    });
  });

  it('warns once per outage window, per server: a second server in the process warns for its own outage', () => {
    const down = errorReply(driverError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'), 'req-3');
    const warnings: unknown[][] = [];
    const log = { warn: (...args: unknown[]) => warnings.push(args), error: () => undefined } as never;
    const first = replyLogger();
    for (let i = 0; i < 5; i++) first(down, new Error('refused'), log);
    expect(warnings).to.have.length(1);
    // A server built later in the same process (a test, the demo) is not silenced by the first.
    replyLogger()(down, new Error('refused'), log);
    expect(warnings).to.have.length(2);
  });
});
