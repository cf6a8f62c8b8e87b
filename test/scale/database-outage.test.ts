/**
 * What a client sees while PostgreSQL is gone (issue 30): the server, talking to the database
 * through a TCP proxy the test cuts (connections refused and reset) and blackholes (connections
 * accepted, nothing answered), answers 503 with Retry-After and a code that says so — at the
 * token endpoint in OAuth's format — within the configured timeouts, logs a warning now and then
 * instead of a stack per request, and serves again once the database is back, without a restart.
 */
import { expect } from 'chai';
import supertest from 'supertest';
import { buildApp, createLogger, parseConfig, type Gatehouse } from '@gatehouse-auth/core';
import { LogCapture } from '../support/log-capture.js';
import { withPostgresDatabase } from '../support/postgres.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { PEER_BUS_POSTGRES } from '../support/config.js';

const SECRET = 'outage-client-secret-0123456789abcdef0123';
const ADMIN = 'outage-admin-token-0123456789abcdef0123456';

describe('PostgreSQL unavailable: 503 with Retry-After, fast, and back without a restart (issue 30)', function () {
  this.timeout(60_000);
  const db = withPostgresDatabase();
  let proxy: TcpProxy;
  let gatehouse: Gatehouse;
  let logs: LogCapture;
  let agent: ReturnType<typeof supertest>;

  before(async () => {
    const url = new URL(db.url);
    proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
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
        plugins: [
          { name: '@gatehouse-auth/grant-client-credentials' },
          { name: '@gatehouse-auth/management' },
          { name: '@gatehouse-auth/admin-api' },
          PEER_BUS_POSTGRES,
        ],
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
