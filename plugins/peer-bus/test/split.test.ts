/**
 * The PostgreSQL peer bus splits long news into NOTIFY-sized pieces (8000 bytes at most). Every
 * part of the news must arrive: the keys of every list, the client blocks, and the apps' reload
 * (which the split used to drop when it came with a long list). Two servers on one database.
 */
import { expect } from 'chai';
import { buildApp, createLogger, type Gatehouse } from '@gatehouse-auth/core';
import { PEER_BUS_POSTGRES, testConfig } from '../../../test/support/config.js';
import { LogCapture } from '../../../test/support/log-capture.js';
import { withPostgresDatabase } from '../../../test/support/postgres.js';

/** What the bus carries (the core's `PeerNews`). */
type PeerNews = Parameters<Gatehouse['container']['cradle']['peers']['publish']>[0];

describe('PostgreSQL peer bus: long news split into pieces', function () {
  this.timeout(20_000);
  const db = withPostgresDatabase();
  let sender: Gatehouse | null = null;
  let receiver: Gatehouse | null = null;
  after(async () => {
    await sender?.close();
    await receiver?.close();
  });

  it('delivers every key, every block and the apps reload of a news too long for one NOTIFY', async () => {
    const logger = createLogger('warn', new LogCapture());
    const config = testConfig([PEER_BUS_POSTGRES], { database: { url: db.url } });
    sender = await buildApp(config, { logger });
    receiver = await buildApp(config, { logger });
    const received: PeerNews[] = [];
    receiver.container.cradle.peers.subscribe({
      receive: (news) => void received.push(news),
      connected: () => undefined,
    });
    // Both nodes hear each other's heartbeat before the publication waits for acknowledgements.
    await new Promise((resolve) => setTimeout(resolve, 300));

    const keys = Array.from({ length: 200 }, (_, i) => `key-${i}`);
    const grants = Array.from({ length: 95 }, (_, i) => `grant-${i}`);
    const blocked = Array.from({ length: 100 }, (_, i) => ({ key: `client-${i}|127.0.0.1`, until: 1 }));
    await sender.container.cradle.peers.publish({ revoked: { keys, grants }, blocked, clients: true });

    const deadline = Date.now() + 5000;
    const all = () => ({
      keys: received.flatMap((n) => n.revoked?.keys ?? []),
      grants: received.flatMap((n) => n.revoked?.grants ?? []),
      blocked: received.flatMap((n) => n.blocked ?? []),
      clients: received.some((n) => n.clients === true),
    });
    while (all().keys.length < keys.length || !all().clients) {
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const got = all();
    expect(received.length, 'pieces').to.be.greaterThan(1);
    expect([...got.keys].sort()).to.deep.equal([...keys].sort());
    expect([...got.grants].sort()).to.deep.equal([...grants].sort());
    expect(got.blocked).to.have.length(blocked.length);
    expect(got.clients, 'the apps reload').to.equal(true);
  });
});
