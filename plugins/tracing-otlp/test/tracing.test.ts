/**
 * OpenTelemetry traces (docs/operations.md#tracing) with @gatehouse-auth/tracing-otlp loaded:
 * a real OTLP/HTTP sink, started here, receives what the server exports (JSON), and the spans'
 * names, parents and attributes are checked for a token request and a verification.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Logger } from 'pino';
import { createLogger, parseConfig } from '@gatehouse-auth/core';
import type { VerificationApp } from '../../../test/verification/support.js';
import { dataOf, initiate, passwordUser, PASSWORD, resetVerdict, verify } from '../../../test/verification/steps.js';
import { basic, MACHINE, startObservedApp } from '../../../test/core/observed-app.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
  status?: { code?: number; message?: string };
}

interface OtlpExport {
  resourceSpans: {
    resource: { attributes: { key: string; value: OtlpValue }[] };
    scopeSpans: { spans: OtlpSpan[] }[];
  }[];
}

/** An OTLP/HTTP traces endpoint that keeps every export it receives. */
async function startSink(): Promise<{
  url: string;
  exports: OtlpExport[];
  contentTypes: string[];
  close(): Promise<void>;
}> {
  const exports: OtlpExport[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        contentTypes.push(String(req.headers['content-type']));
        exports.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      } else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    exports,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const spansOf = (exports: OtlpExport[]) =>
  exports.flatMap((e) => e.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));

function attr(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue;
}

/** The one span with this name in this trace (or in any, without `traceId`). */
function only(spans: OtlpSpan[], name: string, traceId?: string): OtlpSpan {
  const found = spans.filter((s) => s.name === name && (!traceId || s.traceId === traceId));
  expect(found, `${name}: ${spans.map((s) => s.name).join(', ')}`).to.have.length(1);
  return found[0]!;
}

const SERVER = 2; // SPAN_KIND_SERVER

/** The observed app with this plugin loaded, given these options. */
const tracedApp = (options: Record<string, unknown>, logger?: Logger) =>
  startObservedApp({}, { plugins: [{ name: '@gatehouse-auth/tracing-otlp', options }], ...(logger ? { logger } : {}) });

describe('tracing over OTLP/HTTP', function () {
  this.timeout(30_000);
  let sink: Awaited<ReturnType<typeof startSink>>;
  let v: VerificationApp;

  before(async () => {
    sink = await startSink();
    v = await tracedApp({ otlp_endpoint: sink.url, service_name: 'gatehouse-test' });
    await resetVerdict();
  });
  after(async () => {
    await v?.close();
    await sink?.close();
  });
  beforeEach(async () => {
    await v.gatehouse.container.cradle.tracing.flush();
    sink.exports.length = 0;
  });

  it('exports a token request: the server span, the grant under it, the SQL under the grant', async () => {
    const res = await v.http
      .post('/oauth/token')
      .type('form')
      .set('Authorization', basic(MACHINE.id, MACHINE.secret))
      .send({ grant_type: 'client_credentials', scope: 'reports' });
    expect(res.status, res.text).to.equal(200);
    await v.gatehouse.container.cradle.tracing.flush();

    expect(sink.contentTypes.at(-1)).to.equal('application/json');
    const resource = sink.exports[0]!.resourceSpans[0]!.resource.attributes;
    expect(resource.find((a) => a.key === 'service.name')?.value.stringValue).to.equal('gatehouse-test');
    const spans = spansOf(sink.exports);
    const request = only(spans, 'POST /oauth/token');
    expect(request.kind).to.equal(SERVER);
    expect(request.parentSpanId ?? '').to.equal('');
    expect(attr(request, 'http.route')).to.equal('/oauth/token');
    expect(attr(request, 'http.response.status_code')).to.equal(200);
    const grant = only(spans, 'oauth.grant', request.traceId);
    expect(grant.parentSpanId).to.equal(request.spanId);
    expect(attr(grant, 'oauth.grant_type')).to.equal('client_credentials');
    const inserts = spans.filter((s) => s.traceId === request.traceId && s.name === 'db INSERT');
    expect(inserts.length).to.be.at.least(1);
    for (const insert of inserts) {
      expect(insert.parentSpanId).to.equal(grant.spanId);
      expect(attr(insert, 'db.system.name')).to.equal('sqlite');
      expect(String(attr(insert, 'db.query.text'))).to.match(/^\s*INSERT INTO/);
    }
    // Client authentication reads happen before the grant, under the request.
    const everything = JSON.stringify(sink.exports);
    expect(everything).to.not.include(MACHINE.secret);
    expect(everything).to.not.include(String((res.body as { access_token: string }).access_token));
  });

  it('exports a verification: the server span, verify, the method and the FDS rule under it', async () => {
    const user = await passwordUser(v, 'traced');
    const requestId = await v.flow();
    const { exchangeId } = await initiate(v, 'PASSWORD', requestId, { identifier: user.username });
    await v.gatehouse.container.cradle.tracing.flush();
    sink.exports.length = 0;

    dataOf(await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }));
    await v.gatehouse.container.cradle.tracing.flush();
    const spans = spansOf(sink.exports);
    const request = only(spans, 'POST /verification-srv/authentication/:method/verification');
    expect(request.kind).to.equal(SERVER);
    const verifySpan = only(spans, 'verification.verify', request.traceId);
    expect(verifySpan.parentSpanId).to.equal(request.spanId);
    expect(attr(verifySpan, 'gatehouse.method')).to.equal('PASSWORD');
    const method = only(spans, 'method.verify', request.traceId);
    expect(method.parentSpanId).to.equal(verifySpan.spanId);
    const rule = only(spans, 'fds.rule', request.traceId);
    expect(rule.parentSpanId).to.equal(verifySpan.spanId);
    expect(attr(rule, 'gatehouse.fds.rule')).to.equal('scripted');
    expect(attr(rule, 'gatehouse.fds.phase')).to.equal('verification');
    expect(attr(rule, 'gatehouse.fds.action')).to.equal('allow');
    expect(
      spans.some(
        (s) => s.traceId === request.traceId && s.parentSpanId === verifySpan.spanId && s.name === 'db SELECT',
      ),
    ).to.equal(true);

    const everything = JSON.stringify(sink.exports);
    for (const secret of [PASSWORD, exchangeId, user.username, user.email, user.phone]) {
      expect(everything).to.not.include(secret);
    }
  });

  it('marks a refused verification an error by its code only', async () => {
    const user = await passwordUser(v, 'refused');
    const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    await v.gatehouse.container.cradle.tracing.flush();
    sink.exports.length = 0;
    const wrong = 'not the password 4711';
    const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: wrong });
    expect(res.status).to.equal(401);
    await v.gatehouse.container.cradle.tracing.flush();
    const spans = spansOf(sink.exports);
    const verifySpan = only(spans, 'verification.verify');
    expect(verifySpan.status).to.deep.include({ code: 2, message: 'VERIFICATION_FAILED' });
    expect(JSON.stringify(sink.exports)).to.not.include(wrong);
  });

  it('traces no SQL outside a trace (the job poller, the purge)', async () => {
    const { jobs } = v.gatehouse.container.cradle;
    await jobs.runDue();
    await v.gatehouse.container.cradle.tracing.flush();
    expect(spansOf(sink.exports).map((s) => s.name)).to.deep.equal([]);
  });

  it('ignores an incoming traceparent unless accept_traceparent is set', async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await v.http.get('/health/live').set('traceparent', traceparent);
    await v.gatehouse.container.cradle.tracing.flush();
    const request = only(spansOf(sink.exports), 'GET /health/live');
    expect(request.traceId).to.not.equal('0af7651916cd43dd8448eb211c80319c');
    expect(request.parentSpanId ?? '').to.equal('');

    const trusting = await tracedApp({ otlp_endpoint: sink.url, accept_traceparent: true });
    try {
      sink.exports.length = 0;
      await trusting.http.get('/health/live').set('traceparent', traceparent);
      await trusting.gatehouse.container.cradle.tracing.flush();
      const continued = only(spansOf(sink.exports), 'GET /health/live');
      expect(continued.traceId).to.equal('0af7651916cd43dd8448eb211c80319c');
      expect(continued.parentSpanId).to.equal('b7ad6b7169203331');
    } finally {
      await trusting.close();
    }
  });

  it('logs a failing export (at most once a minute), without the credentials in its URL', async () => {
    const lines: string[] = [];
    const failing = http.createServer((_req, res) => res.writeHead(400).end());
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    const { port } = failing.address() as AddressInfo;
    const endpoint = `http://collector:secret-4711@127.0.0.1:${port}/v1/traces?key=k-4711`;
    const app = await tracedApp(
      { otlp_endpoint: endpoint },
      createLogger('warn', { write: (line: string) => void lines.push(line) }),
    );
    try {
      for (let i = 0; i < 2; i++) {
        expect((await app.http.get('/health/live')).status).to.equal(200);
        await app.gatehouse.container.cradle.tracing.flush();
      }
      const warnings = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'trace export failed; spans dropped');
      expect(warnings).to.have.length(1);
      expect(warnings[0]!.endpoint).to.equal(`http://127.0.0.1:${port}/v1/traces`);
      expect(lines.join('\n')).to.not.include('4711');
    } finally {
      await app.close();
      await new Promise<void>((resolve) => failing.close(() => resolve()));
    }
  });

  it('exports nothing without the plugin (no tracing at all)', async () => {
    const plain = await startObservedApp({});
    try {
      expect(plain.gatehouse.container.cradle.tracing.enabled).to.equal(false);
      sink.exports.length = 0;
      const res = await plain.http
        .post('/oauth/token')
        .type('form')
        .set('Authorization', basic(MACHINE.id, MACHINE.secret))
        .send({ grant_type: 'client_credentials' });
      expect(res.status).to.equal(200);
      await plain.gatehouse.container.cradle.tracing.flush();
      expect(sink.exports).to.deep.equal([]);
    } finally {
      await plain.close();
    }
  });

  it('refuses the former core tracing: section at start-up, naming the plugin', () => {
    expect(() => parseConfig({ tracing: { otlp_endpoint: sink.url } }, {})).to.throw(
      /^tracing: the OTLP exporter is now the plugin @gatehouse-auth\/tracing-otlp; move these keys to its options/,
    );
  });

  it('refuses the plugin without an endpoint', async () => {
    let failure: unknown;
    await tracedApp({}).then(
      (app) => app.close(),
      (err: unknown) => (failure = err),
    );
    expect(String(failure)).to.match(/otlp_endpoint/);
  });
});
