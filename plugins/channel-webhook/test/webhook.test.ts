import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { pino } from 'pino';
import type { DeliveryChannel } from '@gatehouse-auth/core';
import { fakeServices, registerWithFakes, silentLogger, type FakeServices } from '@gatehouse-auth/testing';
import plugin, {
  endpointOptions,
  parseRetryAfter,
  retryDelayMs,
  signPayload,
  verifySignature,
  webhookChannel,
} from '../src/index.js';

const SECRET = 'whsec_0123456789abcdef0123456789abcdef';

interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the provider does with one request; 'hang' never answers. */
type Reply = ((res: ServerResponse) => void) | 'hang';

const status =
  (code: number, headers: Record<string, string> = {}): Reply =>
  (res) => {
    res.writeHead(code, { 'Content-Type': 'application/json', ...headers });
    res.end('{}');
  };

interface Provider {
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 that answers with `replies` in turn (the last one repeats). */
async function startProvider(replies: Reply[]): Promise<Provider> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const reply = replies[Math.min(received.length, replies.length) - 1]!;
      if (reply !== 'hang') reply(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/sms?tenant=1`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function endpoint(url: string, extra: Record<string, unknown> = {}) {
  return { id: 'sms-provider', kinds: ['sms', 'voice'], url, secret: SECRET, ...extra };
}

async function channelFor(url: string, extra: Record<string, unknown> = {}, services?: FakeServices) {
  const registered = await registerWithFakes(plugin, { endpoints: [endpoint(url, extra)] }, services);
  expect(registered.channels).to.have.length(1);
  return registered.channels[0]!;
}

/** A channel whose back-off waits are recorded instead of slept. */
function recordingChannel(url: string, extra: Record<string, unknown> = {}, random = 0.5) {
  const sleeps: number[] = [];
  const channel = webhookChannel(endpointOptions.parse(endpoint(url, extra)), fakeServices(), silentLogger, {
    sleep: async (ms) => void sleeps.push(ms),
    random: () => random,
  });
  return { channel, sleeps };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(Error);
    return err as Error;
  }
  expect.fail('expected the promise to reject');
}

const sms = { kind: 'sms' as const, to: '+15551230000', text: 'Your code is 493817' };

describe('@gatehouse-auth/channel-webhook', () => {
  let provider: Provider | undefined;
  afterEach(async () => {
    await provider?.close();
    provider = undefined;
  });

  describe('options', () => {
    it('applies the endpoint defaults and registers one channel per endpoint', async () => {
      const parsed = plugin.options!.parse({ endpoints: [endpoint('https://sms.example.com/send')] });
      expect(parsed).to.deep.equal({
        endpoints: [
          {
            id: 'sms-provider',
            kinds: ['sms', 'voice'],
            url: 'https://sms.example.com/send',
            secret: SECRET,
            timeout_ms: 5000,
            max_retries: 3,
            backoff_ms: 200,
          },
        ],
      });
      const registered = await registerWithFakes(plugin, {
        endpoints: [
          endpoint('https://sms.example.com/send'),
          { id: 'push', kinds: ['push'], url: 'https://push.example.com/v1', secret: SECRET },
        ],
      });
      expect(registered.channels.map((c) => [c.id, c.kinds])).to.deep.equal([
        ['sms-provider', ['sms', 'voice']],
        ['push', ['push']],
      ]);
    });

    it('refuses invalid endpoints', () => {
      const schema = plugin.options!;
      const good = endpoint('https://sms.example.com/send');
      expect(schema.safeParse({ endpoints: [good] }).success).to.equal(true);
      for (const bad of [
        {},
        { endpoints: [] },
        { endpoints: [{ ...good, kinds: [] }] },
        { endpoints: [{ ...good, kinds: ['fax'] }] },
        { endpoints: [{ ...good, url: '/relative' }] },
        { endpoints: [{ ...good, url: 'ftp://sms.example.com/' }] },
        { endpoints: [{ ...good, secret: 'x'.repeat(31) }] },
        { endpoints: [{ ...good, timeout_ms: 0 }] },
        { endpoints: [{ ...good, max_retries: -1 }] },
        { endpoints: [{ ...good, extra: true }] },
        { endpoints: [good, { ...good, kinds: ['push'] }] },
      ]) {
        expect(schema.safeParse(bad).success, JSON.stringify(bad)).to.equal(false);
      }
    });

    it('warns about plain http to a host other than loopback', async () => {
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
      const registered = await registerWithFakes(plugin, { endpoints: [endpoint('https://a.example.com/')] });
      const options = plugin.options!.parse({
        endpoints: [endpoint('http://127.0.0.1:9/'), { ...endpoint('http://sms.example.com/'), id: 'plain' }],
      });
      // Registered again into the same api for its log lines only: its dependency checks are already there.
      await plugin.register({ ...registered.api, logger, dependency: () => undefined }, options);
      const entries = lines.map((l) => JSON.parse(l) as { level: number; channel: string; msg: string });
      expect(entries.map((e) => [e.level, e.channel])).to.deep.equal([[40, 'plain']]);
      expect(lines.join('')).not.to.contain(SECRET);
    });
  });

  describe('send', () => {
    it('POSTs the signed JSON message with the documented headers', async () => {
      provider = await startProvider([status(202)]);
      const services = fakeServices();
      const channel = await channelFor(provider.url, {}, services);
      await channel.send({
        kind: 'voice',
        to: '+15551230000',
        subject: 'Call',
        text: 'Your code is 4 9 3',
        data: { lang: 'en' },
      });

      expect(provider.received).to.have.length(1);
      const req = provider.received[0]!;
      expect(req.method).to.equal('POST');
      expect(req.url).to.equal('/hooks/sms?tenant=1');
      expect(req.headers['content-type']).to.equal('application/json');
      expect(req.headers['user-agent']).to.equal('Gatehouse-Webhook');
      const timestamp = req.headers['x-gatehouse-timestamp'] as string;
      expect(timestamp).to.equal(String(Math.floor(services.clock.now().getTime() / 1000)));

      const body = JSON.parse(req.body) as Record<string, unknown>;
      expect(body).to.deep.equal({
        id: body.id,
        kind: 'voice',
        to: '+15551230000',
        subject: 'Call',
        text: 'Your code is 4 9 3',
        data: { lang: 'en' },
      });
      expect(body.id).to.be.a('string').and.to.have.length.greaterThan(15);
      expect(req.headers['idempotency-key']).to.equal(body.id);

      const signature = req.headers['x-gatehouse-signature'] as string;
      const recomputed = createHmac('sha256', SECRET).update(`${timestamp}.${req.body}`).digest('hex');
      expect(signature).to.equal(`v1=${recomputed}`);
      expect(verifySignature(SECRET, timestamp, req.body, signature)).to.equal(true);
      expect(
        verifySignature(SECRET, timestamp, req.body, signature, { toleranceSeconds: 300, now: services.clock.now() }),
      ).to.equal(true);
    });

    it('leaves out subject and data when the message has none, and uses a new id per message', async () => {
      provider = await startProvider([status(200)]);
      const channel = await channelFor(provider.url);
      await channel.send(sms);
      await channel.send(sms);
      const [first, second] = provider.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
      expect(Object.keys(first!)).to.deep.equal(['id', 'kind', 'to', 'text']);
      expect(first).to.deep.include({ kind: 'sms', to: '+15551230000', text: 'Your code is 493817' });
      expect(first!.id).not.to.equal(second!.id);
    });

    it('retries 500 twice then succeeds, with the same body and Idempotency-Key', async () => {
      provider = await startProvider([status(500), status(500), status(200)]);
      const channel = await channelFor(provider.url, { backoff_ms: 5 });
      await channel.send(sms);
      expect(provider.received).to.have.length(3);
      const keys = provider.received.map((r) => r.headers['idempotency-key']);
      expect(new Set(keys).size).to.equal(1);
      expect(new Set(provider.received.map((r) => r.body)).size).to.equal(1);
      for (const r of provider.received) {
        const ts = r.headers['x-gatehouse-timestamp'] as string;
        expect(verifySignature(SECRET, ts, r.body, r.headers['x-gatehouse-signature'] as string)).to.equal(true);
      }
    });

    it('backs off exponentially with up to 20% jitter', async () => {
      provider = await startProvider([status(502)]);
      const low = recordingChannel(provider.url, { backoff_ms: 200 }, 0);
      await rejection(low.channel.send(sms));
      expect(low.sleeps).to.deep.equal([200, 400, 800]);
      const high = recordingChannel(provider.url, { backoff_ms: 200 }, 0.999999);
      await rejection(high.channel.send(sms));
      expect(high.sleeps).to.deep.equal([240, 480, 960]);
    });

    it('gives up after 1 + max_retries attempts of 503 and names the endpoint, not the secret', async () => {
      provider = await startProvider([status(503)]);
      const channel = await channelFor(provider.url, { backoff_ms: 1 });
      const err = await rejection(channel.send(sms));
      expect(provider.received).to.have.length(4);
      expect(err.message).to.equal('webhook channel "sms-provider" failed after 4 attempts: last status 503');
      expect(err.message).not.to.contain(SECRET);
    });

    it('honours max_retries 0', async () => {
      provider = await startProvider([status(500), status(200)]);
      const channel = await channelFor(provider.url, { max_retries: 0 });
      const err = await rejection(channel.send(sms));
      expect(err.message).to.equal('webhook channel "sms-provider" failed after 1 attempts: last status 500');
      expect(provider.received).to.have.length(1);
    });

    it('does not retry a 400, nor follow a redirect', async () => {
      provider = await startProvider([status(400), status(200)]);
      const channel = await channelFor(provider.url, { backoff_ms: 1 });
      const err = await rejection(channel.send(sms));
      expect(err.message).to.equal('webhook channel "sms-provider" was refused: status 400 (not retried)');
      expect(provider.received).to.have.length(1);
      await provider.close();

      provider = await startProvider([status(307, { Location: 'http://127.0.0.1:9/elsewhere' })]);
      const redirected = await channelFor(provider.url, { backoff_ms: 1 });
      const err2 = await rejection(redirected.send(sms));
      expect(err2.message).to.equal('webhook channel "sms-provider" was refused: status 307 (not retried)');
      expect(provider.received).to.have.length(1);
    });

    it('rejects after the retries when the provider never answers', async () => {
      provider = await startProvider(['hang']);
      const channel = await channelFor(provider.url, { timeout_ms: 100, max_retries: 2, backoff_ms: 1 });
      const started = Date.now();
      const err = await rejection(channel.send(sms));
      expect(err.message).to.equal('webhook channel "sms-provider" failed after 3 attempts: last timeout after 100 ms');
      expect(provider.received).to.have.length(3);
      expect(Date.now() - started).to.be.within(300, 3000);
    });

    it('recovers when only the first attempt times out', async () => {
      provider = await startProvider(['hang', status(200)]);
      const channel = await channelFor(provider.url, { timeout_ms: 100, backoff_ms: 1 });
      await channel.send(sms);
      expect(provider.received).to.have.length(2);
      expect(provider.received[0]!.headers['idempotency-key']).to.equal(
        provider.received[1]!.headers['idempotency-key'],
      );
    });

    it('retries network errors', async () => {
      provider = await startProvider([status(200)]);
      const url = provider.url;
      await provider.close();
      provider = undefined;
      const channel = await channelFor(url, { max_retries: 1, backoff_ms: 1 });
      const err = await rejection(channel.send(sms));
      expect(err.message).to.equal(
        'webhook channel "sms-provider" failed after 2 attempts: last network error ECONNREFUSED',
      );
    });

    it('waits as long as Retry-After says, capped at 10 seconds', async () => {
      provider = await startProvider([
        status(429, { 'Retry-After': '2' }),
        status(503, { 'Retry-After': '3600' }),
        status(200),
      ]);
      const { channel, sleeps } = recordingChannel(provider.url);
      await channel.send(sms);
      expect(sleeps).to.deep.equal([2000, 10000]);
      expect(provider.received).to.have.length(3);
    });

    it('refuses kinds the endpoint does not carry, without a request', async () => {
      provider = await startProvider([status(200)]);
      const channel: DeliveryChannel = await channelFor(provider.url);
      const err = await rejection(channel.send({ kind: 'email', to: 'a@example.test', text: 'x' }));
      expect(err.message).to.equal('webhook channel "sms-provider" does not send email');
      expect(provider.received).to.deep.equal([]);
    });
  });

  describe('verifySignature', () => {
    const body = '{"id":"abc","kind":"sms","to":"+15551230000","text":"Code: 1"}';
    const ts = '1767268800';
    const header = signPayload(SECRET, ts, body);

    it('accepts the right signature, as string or Buffer body', () => {
      expect(header).to.match(/^v1=[0-9a-f]{64}$/);
      expect(verifySignature(SECRET, ts, body, header)).to.equal(true);
      expect(verifySignature(SECRET, Number(ts), Buffer.from(body), header)).to.equal(true);
    });

    it('refuses a wrong secret, body, timestamp or header', () => {
      expect(verifySignature(SECRET + 'x', ts, body, header)).to.equal(false);
      expect(verifySignature(SECRET, ts, body.replace('Code: 1', 'Code: 2'), header)).to.equal(false);
      expect(verifySignature(SECRET, '1767268801', body, header)).to.equal(false);
      expect(verifySignature(SECRET, ts, body, header.replace('v1=', 'v0='))).to.equal(false);
      expect(verifySignature(SECRET, ts, body, header.slice(0, -1))).to.equal(false);
      expect(verifySignature(SECRET, ts, body, undefined)).to.equal(false);
      expect(verifySignature(SECRET, undefined, body, header)).to.equal(false);
      expect(verifySignature(SECRET, 'not-a-time', body, signPayload(SECRET, 'not-a-time', body))).to.equal(false);
    });

    it('refuses timestamps outside the tolerance', () => {
      const at = (seconds: number) => new Date((Number(ts) + seconds) * 1000);
      expect(verifySignature(SECRET, ts, body, header, { toleranceSeconds: 300, now: at(300) })).to.equal(true);
      expect(verifySignature(SECRET, ts, body, header, { toleranceSeconds: 300, now: at(301) })).to.equal(false);
      expect(verifySignature(SECRET, ts, body, header, { toleranceSeconds: 300, now: at(-301) })).to.equal(false);
    });
  });

  describe('retry timing helpers', () => {
    it('parseRetryAfter reads seconds and HTTP dates', () => {
      const now = new Date('2026-01-01T12:00:00Z');
      expect(parseRetryAfter(null, now)).to.equal(null);
      expect(parseRetryAfter('', now)).to.equal(null);
      expect(parseRetryAfter('soon', now)).to.equal(null);
      expect(parseRetryAfter('7', now)).to.equal(7000);
      expect(parseRetryAfter('Thu, 01 Jan 2026 12:00:05 GMT', now)).to.equal(5000);
      expect(parseRetryAfter('Thu, 01 Jan 2026 11:00:00 GMT', now)).to.equal(0);
    });

    it('retryDelayMs doubles, adds jitter and caps Retry-After', () => {
      expect(retryDelayMs({ retry: 0, backoffMs: 200, retryAfterMs: null, random: 0 })).to.equal(200);
      expect(retryDelayMs({ retry: 2, backoffMs: 200, retryAfterMs: null, random: 0.5 })).to.equal(880);
      expect(retryDelayMs({ retry: 0, backoffMs: 200, retryAfterMs: 3000, random: 0.5 })).to.equal(3000);
      expect(retryDelayMs({ retry: 0, backoffMs: 200, retryAfterMs: 60_000, random: 0.5 })).to.equal(10_000);
    });
  });
});

describe('@gatehouse-auth/channel-webhook dependency check (/health/dependencies)', () => {
  const listening = async (onConnection: (socket: Socket) => void) => {
    const server = createTcpServer(onConnection);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, port: (server.address() as AddressInfo).port };
  };
  const checkFor = async (url: string) => {
    const endpoint = { id: 'sms-provider', kinds: ['sms'], url, secret: 's'.repeat(32), timeout_ms: 1000 };
    const registered = await registerWithFakes(plugin, { endpoints: [endpoint] });
    return registered.dependencies.get('webhook:sms-provider')!;
  };
  const failure = (check: () => Promise<unknown>) =>
    check().then(
      () => null,
      (e: Error) => e.message,
    );

  it('passes once the host accepts a connection, with no request sent', async () => {
    let received = '';
    const { server, port } = await listening((socket) => socket.on('data', (d) => (received += String(d))));
    try {
      await (
        await checkFor(`http://127.0.0.1:${port}/hook`)
      )();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(received).to.equal('');
    } finally {
      server.close();
    }
  });

  it('fails for a host that refuses, and for https that does not complete a TLS handshake', async () => {
    // An HTTP answer where a TLS handshake was expected (read on, so the server sees the close).
    const { server, port } = await listening((socket) => socket.resume().end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    try {
      expect(await failure(await checkFor(`https://127.0.0.1:${port}/hook`))).to.match(
        /^127\.0\.0\.1:\d+: ERR_SSL_WRONG_VERSION_NUMBER$/,
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await failure(await checkFor(`http://127.0.0.1:${port}/hook`))).to.equal(`127.0.0.1:${port}: ECONNREFUSED`);
  });
});
