import { expect } from 'chai';
import { buildApp, createLogger, type Gatehouse } from '@gatehouse-auth/core';
import { peerBusFor, testConfig } from '../support/config.js';
import { withPostgresDatabase } from '../support/postgres.js';

function replaySuite(databaseUrl: () => string | undefined): void {
  let gatehouse: Gatehouse;
  before(async () => {
    const url = databaseUrl();
    gatehouse = await buildApp(testConfig(peerBusFor(url), url ? { database: { url } } : {}), {
      logger: createLogger('silent'),
    });
  });
  after(() => gatehouse?.close());

  it('an assertion id is usable once; a replay is refused, also in another namespace only its own', async () => {
    const { replay } = gatehouse.container.cradle;
    const exp = new Date(Date.now() + 60_000);
    expect(await replay.use('client_assertion:a', 'jti-1', exp)).to.equal(true);
    expect(await replay.use('client_assertion:a', 'jti-1', exp)).to.equal(false);
    expect(await replay.use('client_assertion:b', 'jti-1', exp)).to.equal(true);
  });

  it('of 10 concurrent uses of one id exactly one wins', async () => {
    const { replay } = gatehouse.container.cradle;
    const exp = new Date(Date.now() + 60_000);
    const results = await Promise.all(Array.from({ length: 10 }, () => replay.use('race', 'jti-2', exp)));
    expect(results.filter(Boolean)).to.have.length(1);
  });
}

describe('assertion id replay store', () => {
  describe('SQLite', () => replaySuite(() => undefined));
  describe('PostgreSQL', () => {
    const db = withPostgresDatabase();
    replaySuite(() => db.url);
  });
});

describe('Sql.write', () => {
  it('returns the rows of INSERT … RETURNING on SQLite too', async () => {
    const gatehouse = await buildApp(testConfig([]), { logger: createLogger('silent') });
    try {
      const rows = await gatehouse.container.cradle.sql.write<{ id: string }>(
        `INSERT INTO oauth_assertions (id, expires_at) VALUES ('probe', 1) RETURNING id`,
      );
      expect(rows).to.deep.equal([{ id: 'probe' }]);
    } finally {
      await gatehouse.close();
    }
  });
});
