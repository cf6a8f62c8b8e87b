/**
 * What a client sees while PostgreSQL is gone (issue 30): the server, talking to the database
 * through a TCP proxy the test cuts (connections refused and reset) and blackholes (connections
 * accepted, nothing answered), answers 503 with Retry-After and a code that says so — at the
 * token endpoint in OAuth's format — within the configured timeouts, logs a warning now and then
 * instead of a stack per request, and serves again once the database is back, without a restart.
 */
import net from 'node:net';
import { expect } from 'chai';
import supertest from 'supertest';
import { buildApp, createLogger, parseConfig, type Gatehouse } from '@gatehouse-auth/core';
import { LogCapture } from '../support/log-capture.js';
import { withPostgresDatabase } from '../support/postgres.js';

const SECRET = 'outage-client-secret-0123456789abcdef0123';
const ADMIN = 'outage-admin-token-0123456789abcdef0123456';

/** A TCP proxy to PostgreSQL that can refuse, blackhole and pass again. */
class DatabaseProxy {
  private server: net.Server | null = null;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket | null }>();
  private mode: 'pass' | 'blackhole' = 'pass';
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async listen(): Promise<void> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  private accept(client: net.Socket): void {
    const pair = { client, upstream: null as net.Socket | null };
    this.pairs.add(pair);
    const drop = () => {
      client.destroy();
      pair.upstream?.destroy();
      this.pairs.delete(pair);
    };
    client.on('error', drop).on('close', drop);
    // Accepted, then silence: what a partition looks like to the server.
    if (this.mode === 'blackhole') return void client.on('data', () => undefined);
    const upstream = net.connect(this.target.port, this.target.host);
    pair.upstream = upstream;
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  }

  /** Connections refused and the open ones reset. */
  async cut(): Promise<void> {
    // close() calls back once every connection is gone: stop listening, then reset them.
    const closed = new Promise<void>((resolve) => this.server!.close(() => resolve()));
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream?.destroy();
    }
    this.pairs.clear();
    await closed;
  }

  /** Open connections go silent; new ones are accepted and never answered. */
  blackhole(): void {
    this.mode = 'blackhole';
    for (const { client, upstream } of this.pairs) {
      client.unpipe();
      upstream?.unpipe();
      client.on('data', () => undefined);
    }
  }

  /** Passes again (the silent connections are dropped, as a partition's end would find them). */
  async restore(): Promise<void> {
    this.mode = 'pass';
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream?.destroy();
    }
    this.pairs.clear();
    if (!this.server?.listening) await this.listen();
  }

  async close(): Promise<void> {
    await this.cut().catch(() => undefined);
  }
}

describe('PostgreSQL unavailable: 503 with Retry-After, fast, and back without a restart (issue 30)', function () {
  this.timeout(60_000);
  const db = withPostgresDatabase();
  let proxy: DatabaseProxy;
  let gatehouse: Gatehouse;
  let logs: LogCapture;
  let agent: ReturnType<typeof supertest>;

  before(async () => {
    const url = new URL(db.url);
    proxy = new DatabaseProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.listen();
    url.port = String(proxy.port);
    logs = new LogCapture();
    const config = parseConfig(
      {
        issuer: 'https://login.example.test',
        database: { url: url.toString(), connect_timeout_ms: 500, query_timeout_ms: 800 },
        log: { level: 'warn' },
        secrets: { encryption_key: Buffer.alloc(32, 7).toString('base64') },
        admin: { token: ADMIN },
        maintenance: { purge_interval_seconds: 0 },
        plugins: [{ name: '@gatehouse-auth/grant-client-credentials' }],
        apps: [
          {
            client_id: 'svc',
            client_secret: SECRET,
            grant_types: ['client_credentials'],
            scopes: ['api'],
            token_format: 'opaque',
          },
        ],
      },
      {},
    );
    gatehouse = await buildApp(config, { logger: createLogger('warn', logs) });
    agent = supertest(gatehouse.app);
  });
  after(async () => {
    await proxy?.restore();
    await gatehouse?.close();
    await proxy?.close();
  });

  const token = () =>
    agent.post('/oauth/token').auth('svc', SECRET).type('form').send({ grant_type: 'client_credentials' });
  const apiCall = () => agent.get('/admin/users').set('Authorization', `Bearer ${ADMIN}`);

  /** The answer and how long it took (ms). */
  async function timed<T>(request: () => Promise<T>): Promise<{ res: T; ms: number }> {
    const started = performance.now();
    const res = await request();
    return { res, ms: performance.now() - started };
  }

  const expectUnavailableAtToken = (res: supertest.Response) => {
    expect(res.status, res.text).to.equal(503);
    expect(res.headers['retry-after']).to.equal('5');
    expect(res.headers['cache-control']).to.include('no-store');
    expect(res.body).to.deep.equal({
      error: 'temporarily_unavailable',
      error_description: 'the database is unavailable; retry shortly',
    });
  };

  it('works through the proxy', async () => {
    const res = await token();
    expect(res.status, res.text).to.equal(200);
    expect((await apiCall()).status).to.equal(200);
  });

  it('cut: the token endpoint answers 503 temporarily_unavailable with Retry-After, at once; the API 503 STORE_UNAVAILABLE', async () => {
    await proxy.cut();
    for (let i = 0; i < 5; i++) {
      const { res, ms } = await timed(token);
      expectUnavailableAtToken(res);
      expect(ms).to.be.below(1000);
    }
    const api = await apiCall();
    expect(api.status, api.text).to.equal(503);
    expect(api.headers['retry-after']).to.equal('5');
    expect(api.body.error).to.include({ code: 'STORE_UNAVAILABLE', status: 503 });
  });

  it('logs one warning for the outage, not a stack per request', () => {
    const entries = logs.entries;
    expect(entries.filter((e) => e.msg === 'unhandled fault')).to.deep.equal([]);
    const warnings = entries.filter((e) => e.msg === 'database unavailable: answering 503 with Retry-After');
    expect(warnings).to.have.length(1);
    expect(JSON.stringify(warnings)).not.to.include('"stack"');
  });

  it('back: the next request succeeds without a restart', async () => {
    await proxy.restore();
    const res = await token();
    expect(res.status, res.text).to.equal(200);
  });

  it('blackholed (no answer at all): 503 within the query timeout, then back', async () => {
    proxy.blackhole();
    const { res, ms } = await timed(token);
    expectUnavailableAtToken(res);
    expect(ms).to.be.below(2000);
    // A new connection is accepted and never answered: the connect timeout ends the wait.
    const again = await timed(token);
    expectUnavailableAtToken(again.res);
    expect(again.ms).to.be.below(2000);
    await proxy.restore();
    const back = await token();
    expect(back.status, back.text).to.equal(200);
  });
});
