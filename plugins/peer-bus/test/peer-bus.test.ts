/**
 * `@gatehouse-auth/peer-bus` on the plugin API (decisions 74 and 87): a server on
 * PostgreSQL or with `server.workers` without a `peerBus` does not start (nor passes `config
 * check`), since it would serve tokens from its cache that another node revoked; with the plugin,
 * two servers on one database hear each other's news from their first request, and each closes
 * its listening connection when it stops. A provider the contract check finds incomplete is
 * refused, one whose connection is refused stops start-up and is closed, and on SQLite a lone
 * process starts with it and hears its own news. The transport's reconnecting and the long news' pieces are
 * reconnect.test.ts and split.test.ts; the cluster workers' channel is
 * test/scale/cluster-token-cache.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { buildApp, createLogger, type Gatehouse, type GatehouseConfig } from '@gatehouse-auth/core';
import { runCli } from '../../../test/support/cli.js';
import { PEER_BUS_POSTGRES, testConfig, testConfigInput, type PluginEntryInput } from '../../../test/support/config.js';
import { withPostgresDatabase } from '../../../test/support/postgres.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

const NO_TRANSPORT =
  'database.url: several nodes on PostgreSQL tell each other of revoked tokens through the plugin @gatehouse-auth/peer-bus; list it under plugins:';
const NO_BUS_WORKERS =
  'server.workers: the workers of a cluster tell each other of revoked tokens through the plugin @gatehouse-auth/peer-bus (through their primary on SQLite); list it under plugins:';

/** The start-up error of a server with this config. */
async function startupError(config: GatehouseConfig): Promise<Error> {
  return buildApp(config, { logger: createLogger('silent') }).then(
    async (app) => {
      await app.close();
      return expect.fail('expected start-up to fail');
    },
    (err: unknown) => err as Error,
  );
}

describe('@gatehouse-auth/peer-bus', function () {
  this.timeout(20_000);
  const db = withPostgresDatabase();
  const onPostgres = (plugins: PluginEntryInput[]) => testConfig(plugins, { database: { url: db.url } });
  const apps: Gatehouse[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  const listeners = async (app: Gatehouse): Promise<number> => {
    const row = await app.container.cradle.sql.one<{ n: string | number }>(
      `SELECT count(*) AS n FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = 'gatehouse-peer-bus'`,
    );
    return Number(row?.n);
  };

  it('without it, a server on PostgreSQL stops at start-up with one line naming the plugin', async () => {
    const failure = await startupError(onPostgres([]));
    expect(failure.message).to.equal(NO_TRANSPORT);
    expect((failure as { code?: string }).code).to.equal('CONFIG_INVALID');
  });

  it('without it, `gatehouse config check` and `start` of a PostgreSQL config exit 1 with that line', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-peer-bus-'));
    try {
      const file = (name: string, plugins: PluginEntryInput[]) => {
        const at = path.join(dir, name);
        writeFileSync(at, JSON.stringify(testConfigInput(plugins, { database: { url: db.url } })));
        return at;
      };
      const without = file('without.yaml', []);
      const [check, start] = await Promise.all([
        runCli(['config', 'check', '--config', without], { timeoutMs: 30_000 }),
        runCli(['start', '--config', without], { env: { PORT: '0' }, timeoutMs: 30_000 }),
      ]);
      for (const run of [check, start])
        expect(run).to.deep.include({ code: 1, stderr: `gatehouse: ${NO_TRANSPORT}\n` });
      // `config check` builds on SQLite, where the transport is unused: it checks the configured URL.
      const listed = await runCli(['config', 'check', '--config', file('with.yaml', [PEER_BUS_POSTGRES])], {
        timeoutMs: 30_000,
      });
      expect(listed.code, listed.stderr).to.equal(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('without it, `start` with server.workers exits 1 with that line too (its workers are not restarted to stop again)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-peer-bus-'));
    try {
      const at = path.join(dir, 'workers.yaml');
      writeFileSync(at, JSON.stringify(testConfigInput([], { database: { url: db.url }, server: { workers: 2 } })));
      const start = await runCli(['start', '--config', at], { env: { PORT: '0' }, timeoutMs: 30_000 });
      // Each worker that started says so; the primary stops them all at the first.
      expect(start.code, start.stderr).to.equal(1);
      expect(start.stderr).to.include(`gatehouse: ${NO_TRANSPORT}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('two servers on one database hear each other from the start; each closes its listener when it stops', async () => {
    const a = await buildApp(onPostgres([PEER_BUS_POSTGRES]), { logger: createLogger('silent') });
    apps.push(a);
    const b = await buildApp(onPostgres([PEER_BUS_POSTGRES]), { logger: createLogger('silent') });
    apps.push(b);
    expect(await listeners(a)).to.equal(2);
    const heard: unknown[] = [];
    b.container.cradle.peers.subscribe({ receive: (news) => void heard.push(news), connected: () => undefined });
    // A's publication waits for B's acknowledgement once they heard each other's hello.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await a.container.cradle.peers.publish({ revoked: { keys: ['revoked-on-a'] } });
    expect(heard).to.deep.include({ revoked: { keys: ['revoked-on-a'] } });
    await apps.pop()!.close();
    expect(await listeners(a)).to.equal(1);
  });

  it('refuses a peerBus provider that the contract check finds incomplete', async () => {
    const failure = await startupError(onPostgres([{ path: fixture('half-bus.js') }]));
    expect(failure.message).to.include('plugin @fixture/half-bus: service "peerBus" has no publish function');
  });

  it("stops start-up when the bus cannot connect, and closes it; it was handed the database's URL", async () => {
    const { seen } = (await import(fixture('refused-bus.js'))) as {
      seen: { opened: number; closed: number; databaseUrl: string };
    };
    const failure = await startupError(onPostgres([{ path: fixture('refused-bus.js') }]));
    expect(failure.message).to.equal('connection refused');
    expect(seen).to.deep.equal({ opened: 1, closed: 1, databaseUrl: db.url });
  });

  it('on SQLite, a lone process: the server starts with it, its bus carries news here', async () => {
    const app = await buildApp(testConfig([PEER_BUS_POSTGRES]), { logger: createLogger('silent') });
    apps.push(app);
    const heard: unknown[] = [];
    app.container.cradle.peers.subscribe({ receive: (news) => void heard.push(news), connected: () => undefined });
    await app.container.cradle.peers.publish({ clients: true });
    expect(heard).to.deep.equal([{ clients: true }]);
  });

  it('without it, server.workers other than 1 stops start-up on SQLite too, in one line naming the plugin', async () => {
    for (const workers of [2, 0]) {
      const failure = await startupError(testConfig([], { server: { workers } }));
      expect(failure.message).to.equal(NO_BUS_WORKERS);
      expect((failure as { code?: string }).code).to.equal('CONFIG_INVALID');
    }
    // With it, the same config starts (outside a cluster, as the CLI's commands run).
    const app = await buildApp(testConfig([PEER_BUS_POSTGRES], { server: { workers: 2 } }), {
      logger: createLogger('silent'),
    });
    apps.push(app);
  });

  it('without it, `start` with server.workers on SQLite exits 1 with that line', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-peer-bus-'));
    try {
      const at = path.join(dir, 'workers.yaml');
      const database = { url: `sqlite:${path.join(dir, 'g.db')}` };
      writeFileSync(at, JSON.stringify(testConfigInput([], { database, server: { workers: 2 } })));
      const [check, start] = await Promise.all([
        runCli(['config', 'check', '--config', at], { timeoutMs: 30_000 }),
        runCli(['start', '--config', at], { env: { PORT: '0' }, timeoutMs: 30_000 }),
      ]);
      expect(check).to.deep.include({ code: 1, stderr: `gatehouse: ${NO_BUS_WORKERS}\n` });
      expect(start.code, start.stderr).to.equal(1);
      expect(start.stderr).to.include(`gatehouse: ${NO_BUS_WORKERS}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
