/**
 * The PostgreSQL peer bus (decisions 29 and 74) after its connection is lost: it tries again every
 * second until a connection listens, however many attempts fail, and news flows again once it
 * is back. A single failed reconnect used to end the trying, leaving the token cache off until a
 * restart. Two servers: one whose database (its pool and its bus) is reached through a proxy.
 */
import { expect } from 'chai';
import { buildApp, createLogger, type Gatehouse } from '@gatehouse-auth/core';
import { PEER_BUS_POSTGRES, testConfig } from '../../../test/support/config.js';
import { LogCapture } from '../../../test/support/log-capture.js';
import { withPostgresDatabase } from '../../../test/support/postgres.js';
import { TcpProxy } from '../../../test/support/tcp-proxy.js';

describe('PostgreSQL peer bus: back after an outage of several retries (issue 30)', function () {
  this.timeout(30_000);
  const db = withPostgresDatabase();
  let proxy: TcpProxy;
  let behind: Gatehouse | null = null;
  let direct: Gatehouse | null = null;

  before(async () => {
    const url = new URL(db.url);
    proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.listen();
  });
  after(async () => {
    await behind?.close();
    await direct?.close();
    await proxy?.close();
  });

  const until = async (what: string, ok: () => boolean, ms: number) => {
    const deadline = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('reconnects after three failed attempts, and receives news again', async () => {
    const throughProxy = new URL(db.url);
    throughProxy.port = String(proxy.port);
    const logger = createLogger('warn', new LogCapture());
    const server = (url: string) => buildApp(testConfig([PEER_BUS_POSTGRES], { database: { url } }), { logger });
    behind = await server(throughProxy.toString());
    direct = await server(db.url);
    const states: boolean[] = [];
    const received: { revoked?: { keys?: string[] } }[] = [];
    behind.container.cradle.peers.subscribe({
      receive: (news) => void received.push(news),
      connected: (up) => void states.push(up),
    });
    expect(states).to.deep.equal([true]);

    await proxy.cut();
    await until('the bus notices the loss', () => states.at(-1) === false, 5000);
    // Refused for longer than three retries (one a second).
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(states.at(-1)).to.equal(false);
    await proxy.restore();
    await until('the bus is connected again', () => states.at(-1) === true, 5000);

    await direct.container.cradle.peers.publish({ revoked: { keys: ['after-the-outage'] } });
    await until(
      'news from a peer arrives',
      () => received.some((n) => n.revoked?.keys?.[0] === 'after-the-outage'),
      5000,
    );
  });
});
