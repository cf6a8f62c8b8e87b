import { expect } from 'chai';
import { buildApp, createLogger, parseConfig, type Gatehouse } from '@gatehouse-auth/core';
import { FakeClock } from '@gatehouse-auth/testing';
import { purgeExpired } from '../../core/dist/maintenance.js';

describe('purge of expired rows', () => {
  let gatehouse: Gatehouse;
  const clock = new FakeClock(new Date('2026-05-01T00:00:00Z'));

  before(async () => {
    const config = parseConfig(
      {
        database: { url: 'sqlite::memory:' },
        log: { level: 'silent' },
        secrets: { encryption_key: Buffer.alloc(32, 5).toString('base64') },
        plugins: [{ name: '@gatehouse-auth/grant-client-credentials' }],
        apps: [{ client_id: 'app', client_secret: 's'.repeat(40), grant_types: ['client_credentials'], scopes: ['a'] }],
      },
      {},
    );
    gatehouse = await buildApp(config, { logger: createLogger('silent'), clock });
  });
  after(() => gatehouse.close());

  it('deletes only what expired, in bounded batches, and keeps the rest', async () => {
    const { tokens, clients, flows, replay, events, sql } = gatehouse.container.cradle;
    const client = clients.get('app')!;
    const issue = () => tokens.issue({ client, subject: null, scope: ['a'], grantType: 'client_credentials' });
    const old = await Promise.all(Array.from({ length: 7 }, issue));
    await flows.create({ clientId: 'app', stages: [['PASSWORD']], ttlSeconds: 60 });
    await replay.use('test', 'jti-1', new Date(clock.now().getTime() + 1000));
    await events.record({ type: 'old.event' });

    clock.advance(3601 + 600); // the old tokens, the flow and the assertion id have expired
    const fresh = await issue();
    await events.record({ type: 'new.event' });

    const removed = await purgeExpired(sql, clock, { batchSize: 3, maxBatches: 100, eventRetentionDays: 90 });
    expect(removed).to.include({ oauth_tokens: 7, login_flows: 1, oauth_assertions: 1 });
    for (const t of old) expect((await tokens.inspect(t.access_token)).token).to.equal(undefined);
    expect((await tokens.inspect(fresh.access_token)).active).to.equal(true);
    expect(await events.count({ types: ['old.event', 'new.event'] })).to.equal(2);

    clock.advance(91 * 86_400);
    const later = await purgeExpired(sql, clock, { batchSize: 3, maxBatches: 100, eventRetentionDays: 90 });
    expect(later.events).to.be.at.least(2);
    expect(await events.count({ types: ['old.event', 'new.event'] })).to.equal(0);
  });

  it('stops after maxBatches, leaving the rest for the next run', async () => {
    const { tokens, clients, sql } = gatehouse.container.cradle;
    const client = clients.get('app')!;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        tokens.issue({ client, subject: null, scope: ['a'], grantType: 'client_credentials' }),
      ),
    );
    clock.advance(3601);
    const first = await purgeExpired(sql, clock, { batchSize: 2, maxBatches: 2, eventRetentionDays: 90 });
    expect(first.oauth_tokens).to.equal(4);
    const second = await purgeExpired(sql, clock, { batchSize: 100, maxBatches: 1, eventRetentionDays: 90 });
    expect(second.oauth_tokens).to.be.at.least(6);
  });
});
