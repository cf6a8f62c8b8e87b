/**
 * Prometheus metrics with @gatehouse-auth/metrics-prometheus loaded (docs/operations.md#metrics,
 * decisions 25 and 67): what is counted, under which labels, and where /metrics answers (its own
 * loopback listener, or the main port behind the admin token).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { buildApp, listen, parseConfig } from '@gatehouse-auth/core';
import { metricsOptions } from '@gatehouse-auth/metrics-prometheus';
import { ADMIN_TOKEN, type VerificationApp } from '../../../test/verification/support.js';
import {
  dataOf,
  expectError,
  initiate,
  passwordUser,
  PASSWORD,
  resetVerdict,
  verify,
  WRONG_PASSWORD,
  type ScriptedVerdict,
} from '../../../test/verification/steps.js';
import { withPostgresDatabase } from '../../../test/support/postgres.js';
import { fixturePlugin } from '../../../test/support/paths.js';
import { freePort } from '../../../test/oauth/support.js';
import { basic, MACHINE, startObservedApp } from '../../../test/core/observed-app.js';

/** The plugin's entry in `plugins:` with these options. */
const prometheus = (options: Record<string, unknown> = {}) => ({
  name: '@gatehouse-auth/metrics-prometheus',
  options,
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    expect(m, `not a sample line: ${line}`).to.not.equal(null);
    const labels: Record<string, string> = {};
    for (const pair of (m![2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!;
    }
    samples.push({ name: m![1]!, labels, value: Number(m![3]) });
  }
  return samples;
}

/** The value of the sample with exactly these labels; undefined when there is none. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter(
    (s) => s.name === name && JSON.stringify(sorted(s.labels)) === JSON.stringify(sorted(labels)),
  );
  expect(found.length, `${name}${JSON.stringify(labels)} appears more than once`).to.be.at.most(1);
  return found[0]?.value;
}

const sorted = (labels: Record<string, string>) => Object.fromEntries(Object.entries(labels).sort());

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

async function scrapeMain(v: VerificationApp): Promise<Sample[]> {
  const res = await v.http.get('/metrics').set(admin);
  expect(res.status, res.text).to.equal(200);
  expect(res.headers['content-type']).to.equal('text/plain; version=0.0.4; charset=utf-8');
  expect(res.headers['cache-control']).to.equal('no-store');
  return parseExposition(res.text);
}

describe('metrics on the main port (expose: admin)', function () {
  this.timeout(30_000);
  let v: VerificationApp;
  let verdict: ScriptedVerdict;

  before(async () => {
    // Security notices by email through the capturing channel: the FDS deny below sends one.
    v = await startObservedApp(
      {},
      {
        plugins: [
          prometheus({ expose: 'admin' }),
          { path: fixturePlugin('valid') },
          { name: '@gatehouse-auth/admin-api' },
          { name: '@gatehouse-auth/notices-security', options: { email_channel: 'capture' } },
        ],
      },
    );
    verdict = await resetVerdict();
  });
  after(() => v.close());
  afterEach(() => resetVerdict());

  it('answers 401 UNAUTHORIZED without the admin token, or with another one', async () => {
    expectError(await v.http.get('/metrics'), 401, 'UNAUTHORIZED');
    expectError(await v.http.get('/metrics').set('Authorization', 'Bearer not-the-admin-token'), 401, 'UNAUTHORIZED');
    expectError(await v.http.get('/metrics').set('Authorization', `Basic ${ADMIN_TOKEN}`), 401, 'UNAUTHORIZED');
  });

  it('counts tokens issued and refused by grant type, never by the grant_type a caller made up', async () => {
    const ok = await v.http
      .post('/oauth/token')
      .type('form')
      .set('Authorization', basic(MACHINE.id, MACHINE.secret))
      .send({ grant_type: 'client_credentials', scope: 'reports' });
    expect(ok.status, ok.text).to.equal(200);
    const wrongSecret = await v.http
      .post('/oauth/token')
      .type('form')
      .set('Authorization', basic(MACHINE.id, 'wrong-secret-0123456789abcdef0123456789ab'))
      .send({ grant_type: 'client_credentials' });
    expect(wrongSecret.status).to.equal(401);
    const madeUp = await v.http
      .post('/oauth/token')
      .type('form')
      .set('Authorization', basic(MACHINE.id, MACHINE.secret))
      .send({ grant_type: 'urn:example:made-up-4711' });
    expect(madeUp.status).to.equal(400);
    expect(madeUp.body.error).to.equal('unsupported_grant_type');

    const m = await scrapeMain(v);
    expect(valueOf(m, 'gatehouse_tokens_issued_total', { grant_type: 'client_credentials' })).to.equal(1);
    expect(
      valueOf(m, 'gatehouse_token_errors_total', { grant_type: 'client_credentials', error: 'invalid_client' }),
    ).to.equal(1);
    expect(
      valueOf(m, 'gatehouse_token_errors_total', { grant_type: 'unsupported', error: 'unsupported_grant_type' }),
    ).to.equal(1);
    const text = (await v.http.get('/metrics').set(admin)).text;
    expect(text).to.not.include('made-up-4711');
    expect(text).to.not.include(MACHINE.secret);
    // The token endpoint is a fast route: counted under its path, with the statuses it answered.
    expect(
      valueOf(m, 'gatehouse_http_requests_total', { method: 'POST', route: '/oauth/token', status: '200' }),
    ).to.equal(1);
    expect(
      valueOf(m, 'gatehouse_http_requests_total', { method: 'POST', route: '/oauth/token', status: '401' }),
    ).to.equal(1);
    expect(
      valueOf(m, 'gatehouse_http_request_duration_seconds_count', { method: 'POST', route: '/oauth/token' }),
    ).to.equal(3);
  });

  it('counts verifications by method and error code, FDS verdicts by rule, deliveries by channel', async () => {
    const user = await passwordUser(v, 'metrics');
    const before = await scrapeMain(v);
    const count = (samples: Sample[], name: string, labels: Record<string, string>) =>
      valueOf(samples, name, labels) ?? 0;

    // A wrong password: VERIFICATION_FAILED; the rules do not run on a wrong proof.
    const first = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    expectError(
      await verify(v, 'PASSWORD', { exchange_id: first.exchangeId, password: WRONG_PASSWORD }),
      401,
      'VERIFICATION_FAILED',
    );
    // A right one the rule denies: answered alike at the first stage, and counted as a deny.
    const second = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    verdict.next = { action: 'deny', reason: 'test' };
    expectError(
      await verify(v, 'PASSWORD', { exchange_id: second.exchangeId, password: PASSWORD }),
      401,
      'VERIFICATION_FAILED',
    );
    // A right one allowed.
    verdict.next = { action: 'allow' };
    const third = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    dataOf(await verify(v, 'PASSWORD', { exchange_id: third.exchangeId, password: PASSWORD }));
    // A used exchange, and a method nobody registered (its name is not a label).
    expectError(
      await verify(v, 'PASSWORD', { exchange_id: third.exchangeId, password: PASSWORD }),
      409,
      'EXCHANGE_USED',
    );
    expectError(await verify(v, 'NOSUCHMETHOD42', { exchange_id: third.exchangeId }), 404, 'METHOD_NOT_FOUND');
    // An SMS code through the capturing channel, an email through the one that always fails.
    await initiate(v, 'SMS', await v.flow(), { identifier: user.username });
    await initiate(v, 'EMAIL', await v.flow(), { identifier: user.username });
    await v.gatehouse.idle();
    await v.gatehouse.container.cradle.securityEvents.drain();

    const after = await scrapeMain(v);
    const delta = (name: string, labels: Record<string, string>) =>
      count(after, name, labels) - count(before, name, labels);
    const failure = (code: string) => ({ method: 'PASSWORD', outcome: 'failure', error_code: code });
    expect(delta('gatehouse_verifications_total', failure('VERIFICATION_FAILED'))).to.equal(2);
    expect(delta('gatehouse_verifications_total', failure('EXCHANGE_USED'))).to.equal(1);
    expect(
      delta('gatehouse_verifications_total', { method: 'PASSWORD', outcome: 'success', error_code: 'none' }),
    ).to.equal(1);
    expect(
      delta('gatehouse_verifications_total', { method: 'unknown', outcome: 'failure', error_code: 'METHOD_NOT_FOUND' }),
    ).to.equal(1);
    expect(delta('gatehouse_fds_verdicts_total', { rule: 'scripted', phase: 'verification', action: 'deny' })).to.equal(
      1,
    );
    // Initiations run the rules too (three of PASSWORD, one each of SMS and EMAIL).
    expect(delta('gatehouse_fds_verdicts_total', { rule: 'scripted', phase: 'initiation', action: 'allow' })).to.equal(
      5,
    );
    expect(
      delta('gatehouse_fds_verdicts_total', { rule: 'scripted', phase: 'verification', action: 'allow' }),
    ).to.equal(1);
    expect(delta('gatehouse_deliveries_total', { channel: 'capture', kind: 'sms', outcome: 'sent' })).to.equal(1);
    expect(delta('gatehouse_deliveries_total', { channel: 'broken', kind: 'email', outcome: 'failed' })).to.equal(1);
    // The notice of the blocked sign-in, sent by @gatehouse-auth/notices-security rather than a job.
    expect(delta('gatehouse_deliveries_total', { channel: 'capture', kind: 'email', outcome: 'sent' })).to.equal(1);
    expect(
      delta('gatehouse_http_requests_total', {
        method: 'POST',
        route: '/verification-srv/authentication/:method/verification',
        status: '401',
      }),
    ).to.equal(2);
    const text = (await v.http.get('/metrics').set(admin)).text;
    for (const secret of [PASSWORD, WRONG_PASSWORD, user.username, user.phone, user.email, 'NOSUCHMETHOD42']) {
      expect(text).to.not.include(secret);
    }
  });

  it('labels express routes by template, and every unmatched path as one', async () => {
    const user = await passwordUser(v, 'route');
    const found = await v.http.get(`/admin/users/${user.id}`).set(admin);
    expect(found.status).to.equal(200);
    expectError(await v.http.get('/no/such/path/unlisted-segment'), 404, 'NOT_FOUND');
    const m = await scrapeMain(v);
    expect(
      valueOf(m, 'gatehouse_http_requests_total', { method: 'GET', route: '/admin/users/:id', status: '200' }),
    ).to.be.at.least(1);
    expect(
      valueOf(m, 'gatehouse_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }),
    ).to.be.at.least(1);
    const text = (await v.http.get('/metrics').set(admin)).text;
    expect(text).to.not.include(user.id);
    // A path segment, not digits: a metric's value may contain any digits by chance.
    expect(text).to.not.include('unlisted-segment');
  });

  it("labels a plugin's routes with the path they are mounted at, also when they fail", async () => {
    expect((await v.http.get('/fixture/hello')).status).to.equal(200);
    expectError(await v.http.get('/fixture/fault'), 500, 'INTERNAL_ERROR');
    const m = await scrapeMain(v);
    expect(
      valueOf(m, 'gatehouse_http_requests_total', { method: 'GET', route: '/fixture/hello', status: '200' }),
    ).to.equal(1);
    expect(
      valueOf(m, 'gatehouse_http_requests_total', { method: 'GET', route: '/fixture/fault', status: '500' }),
    ).to.equal(1);
  });

  it('has the gauges of the database, the hashing queue and the jobs, and the process metrics', async () => {
    const m = await scrapeMain(v);
    expect(valueOf(m, 'gatehouse_db_write_batch_pending')).to.equal(0);
    expect(valueOf(m, 'gatehouse_db_wal_pages')).to.be.a('number').and.at.least(0);
    expect(valueOf(m, 'gatehouse_password_hashing_running')).to.equal(0);
    expect(valueOf(m, 'gatehouse_password_hashing_waiting')).to.equal(0);
    expect(valueOf(m, 'gatehouse_jobs_running')).to.equal(0);
    // SQLite has no pool: its gauges stay empty rather than say 0 connections.
    expect(m.some((s) => s.name === 'gatehouse_db_pool_connections')).to.equal(false);
    expect(valueOf(m, 'process_cpu_user_seconds_total')).to.be.greaterThan(0);
    expect(valueOf(m, 'nodejs_eventloop_lag_seconds')).to.be.a('number');
  });
});

describe('metrics on their own listener (expose: listener, the default)', function () {
  this.timeout(30_000);

  it('serves GET /metrics on the metrics port only, and nothing else there', async () => {
    const v = await startObservedApp({}, { plugins: [prometheus({ port: 0 })] });
    const running = await listen(v.gatehouse);
    try {
      expect(running.listeners.metrics).to.be.a('number').and.not.equal(running.port);
      const main = `http://127.0.0.1:${running.port}`;
      const side = `http://127.0.0.1:${running.listeners.metrics}`;
      const token = await fetch(`${main}/oauth/token`, {
        method: 'POST',
        headers: {
          Authorization: basic(MACHINE.id, MACHINE.secret),
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      });
      expect(token.status).to.equal(200);
      // Not on the public port, not even with the admin token.
      const onMain = await fetch(`${main}/metrics`, { headers: admin });
      expect(onMain.status).to.equal(404);
      expect(((await onMain.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');

      const scraped = await fetch(`${side}/metrics`);
      expect(scraped.status).to.equal(200);
      expect(scraped.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
      const m = parseExposition(await scraped.text());
      expect(valueOf(m, 'gatehouse_tokens_issued_total', { grant_type: 'client_credentials' })).to.equal(1);
      expect(
        valueOf(m, 'gatehouse_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }),
      ).to.equal(1);

      expect((await fetch(`${side}/metrics`, { method: 'POST' })).status).to.equal(405);
      expect((await fetch(`${side}/oauth/token`)).status).to.equal(404);
      expect((await fetch(`${side}/`)).status).to.equal(404);
    } finally {
      await running.shutdown();
    }
    // Closed with the server.
    const closed = await fetch(`http://127.0.0.1:${running.listeners.metrics}/metrics`).then(
      () => 'answered',
      () => 'refused',
    );
    expect(closed).to.equal('refused');
  });

  it('refuses to start when the metrics port is taken, naming the port option', async () => {
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    const v = await startObservedApp({}, { plugins: [prometheus({ port })] });
    try {
      const failure = await listen(v.gatehouse).then(
        () => null,
        (err: unknown) => err as Error,
      );
      expect(failure?.name).to.equal('BootError');
      expect(failure?.message).to.equal(
        `plugin @gatehouse-auth/metrics-prometheus: options.port: 127.0.0.1:${port} is already in use; stop what listens there or set another port`,
      );
    } finally {
      await v.close();
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('is off without the plugin: no listener, and /metrics on the main port is 404', async () => {
    const v = await startObservedApp({});
    const running = await listen(v.gatehouse);
    try {
      expect(running.listeners).to.deep.equal({});
      expect(metricsOptions.parse({})).to.deep.include({
        expose: 'listener',
        host: '127.0.0.1',
        port: 9464,
      });
      expectError(await v.http.get('/metrics').set(admin), 404, 'NOT_FOUND');
    } finally {
      await running.shutdown();
    }
  });

  it('shares the main port with compat-cidaas, whose routes are mounted at the root', async () => {
    // A plugin mount is one path per plugin: both at `/` stopped start-up as a duplicate.
    const v = await startObservedApp(
      {},
      { plugins: [prometheus({ expose: 'admin' }), { name: '@gatehouse-auth/compat-cidaas' }] },
    );
    try {
      const scrape = await v.http.get('/metrics').set(admin);
      expect(scrape.status).to.equal(200);
      expect(scrape.text).to.match(/^# HELP /m);
      const generate = await v.http.post('/authz-srv/authrequest/authz/generate').send({});
      expect(generate.status, 'compat-cidaas answers its own path').to.not.equal(404);
    } finally {
      await v.close();
    }
  });

  it('refuses to start with metrics on the main port without an admin token, or on its port', async () => {
    const base = { dev_mode: true, database: { url: 'sqlite::memory:' }, log: { level: 'silent' } };
    const unguarded = parseConfig({ ...base, plugins: [prometheus({ expose: 'admin' })] }, {});
    const refused = await buildApp(unguarded).then(
      async (app) => void (await app.close()),
      (err: unknown) => err as Error,
    );
    expect(String(refused)).to.match(/metrics-prometheus.*expose: admin needs admin\.token set/);
    const port = await freePort();
    const shared = await buildApp(
      parseConfig({ ...base, server: { host: '127.0.0.1', port }, plugins: [prometheus({ port })] }, {}),
    );
    try {
      const failure = await listen(shared).then(
        async (running) => void (await running.shutdown()),
        (err: unknown) => err as Error,
      );
      expect(String(failure)).to.match(/options\.port must differ from server\.port/);
    } finally {
      await shared.close();
    }
  });

  it('refuses the former core metrics: section at start-up, naming the plugin', () => {
    expect(() => parseConfig({ metrics: { enabled: true } }, {})).to.throw(
      /^metrics: the Prometheus exporter is now the plugin @gatehouse-auth\/metrics-prometheus; list it under plugins:/,
    );
  });
});

describe('metrics on PostgreSQL', function () {
  this.timeout(30_000);
  const db = withPostgresDatabase();

  it('gauges the pool: idle and busy connections, and queries waiting for one', async () => {
    const v = await startObservedApp({}, { databaseUrl: db.url, plugins: [prometheus({ expose: 'admin' })] });
    try {
      // The pool opens connections on first use: a token request uses one, then leaves it idle.
      const token = await v.http
        .post('/oauth/token')
        .type('form')
        .set('Authorization', basic(MACHINE.id, MACHINE.secret))
        .send({ grant_type: 'client_credentials' });
      expect(token.status, token.text).to.equal(200);
      const m = await scrapeMain(v);
      const idle = valueOf(m, 'gatehouse_db_pool_connections', { state: 'idle' });
      const busy = valueOf(m, 'gatehouse_db_pool_connections', { state: 'busy' });
      expect(idle).to.be.a('number').and.at.least(1);
      expect(busy).to.equal(0);
      expect(valueOf(m, 'gatehouse_db_pool_waiting')).to.equal(0);
      expect(
        m.some((s) => s.name === 'gatehouse_db_write_batch_pending' || s.name === 'gatehouse_db_wal_pages'),
      ).to.equal(false);
    } finally {
      await v.close();
    }
  });
});
