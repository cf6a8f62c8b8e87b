/**
 * Decision 0089: on SQLite a revocation is also written to `token_invalidations`, and each
 * process applies the rows other processes wrote (test/scale/cli-revocation-cache.test.ts drives
 * it through the CLI and a running server).
 */
import { expect } from 'chai';
import pino from 'pino';
import { FakeClock } from '@gatehouse-auth/testing';
import { ActiveTokenCache } from '@gatehouse-auth/core';
import { InvalidationLog } from '../../core/dist/oauth/invalidation-log.js';
import { purgeExpired } from '../../core/dist/maintenance.js';
import { startServer, type OAuthServer } from './support.js';

type Sql = OAuthServer['gatehouse']['container']['cradle']['sql'];

describe('InvalidationLog: revocations through the SQLite file (decision 0089)', function () {
  const clock = new FakeClock(new Date('2026-01-01T00:00:00Z'));
  const logger = pino({ level: 'silent' });
  let server: OAuthServer;
  let sql: Sql;
  before(async () => {
    server = await startServer();
    sql = server.gatehouse.container.cradle.sql;
  });
  after(() => server.close());

  const cached = (key: string, grantId: string) => {
    const cache = new ActiveTokenCache(100, 60_000, clock);
    cache.set(
      key,
      {
        active: true,
        token: {
          key,
          kind: 'access',
          grantId,
          clientId: 'c',
          subject: 'u',
          scope: [],
          data: {},
          createdAt: clock.now(),
          expiresAt: new Date(clock.now().getTime() + 60_000),
        },
      } as never,
      cache.generation,
    );
    return cache;
  };
  const log = (cache: ActiveTokenCache, over: Partial<{ pollMs: number; keepMs: number; sql: Sql }> = {}) =>
    new InvalidationLog({ sql, clock, cache, logger, pollMs: 1000, keepMs: 300_000, ...over });

  it("a process applies the other processes' rows once, in order, and skips its own", async () => {
    const writerCache = cached('k1', 'g1');
    const readerCache = cached('k1', 'g1');
    const writer = log(writerCache);
    const reader = log(readerCache);
    await writer.start();
    await reader.start();
    await writer.record({ grants: ['g1'] });
    const before = writerCache.generation;
    await writer.poll();
    expect(writerCache.generation, 'its own row is not applied again').to.equal(before);
    expect(readerCache.get('k1')).to.not.equal(null);
    await reader.poll();
    expect(readerCache.get('k1'), 'the grant was revoked elsewhere').to.equal(null);
    const after = readerCache.generation;
    await reader.poll();
    expect(readerCache.generation, 'a row is applied once').to.equal(after);
    await writer.stop();
    await reader.stop();
  });

  it('one read catches up with more rows than a page (1,000)', async () => {
    const readerCache = cached('k-last', 'g-last');
    const reader = log(readerCache);
    await reader.start();
    const writer = log(cached('k0', 'g0'));
    for (let i = 0; i < 1200; i++) await writer.record({ keys: [`other-${i}`] });
    await writer.record({ keys: ['k-last'] });
    await reader.poll();
    expect(readerCache.get('k-last'), 'the 1,201st row was applied').to.equal(null);
    await reader.stop();
  });

  it('a process started later begins after the newest row', async () => {
    await log(cached('k0', 'g0')).record({ keys: ['k2'] });
    const cache = cached('k2', 'g2');
    const late = log(cache);
    await late.start();
    await late.poll();
    expect(cache.get('k2'), 'a row written before it started is not its news').to.not.equal(null);
    await late.stop();
  });

  it('writes nothing when the poll is off, and the purge removes rows past their time', async () => {
    const count = async () =>
      Number((await sql.one<{ n: number }>('SELECT COUNT(*) AS n FROM token_invalidations'))!.n);
    const n = await count();
    await log(cached('k3', 'g3'), { pollMs: 0 }).record({ keys: ['k3'] });
    expect(await count()).to.equal(n);
    await log(cached('k4', 'g4'), { keepMs: 1000 }).record({ keys: ['k4'] });
    expect(await count()).to.equal(n + 1);
    const later = new FakeClock(new Date(clock.now().getTime() + 2000));
    const removed = await purgeExpired(sql, later, { batchSize: 100, maxBatches: 1, eventRetentionDays: 30 });
    expect(removed.token_invalidations).to.equal(1);
  });

  it('a failed read empties the cache', async () => {
    const cache = cached('k5', 'g5');
    const broken = {
      dialect: 'sqlite',
      select: () => Promise.reject(new Error('disk I/O error')),
      one: () => Promise.resolve({ id: 0 }),
    } as unknown as Sql;
    const failing = log(cache, { sql: broken, pollMs: 10 });
    await failing.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(cache.size).to.equal(0);
    await failing.stop();
  });
});
