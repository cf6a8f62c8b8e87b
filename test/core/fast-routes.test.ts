/**
 * withFastRoutes: the plain node:http listener in front of express. Fake endpoints and a fake
 * fallback on a real server (127.0.0.1, port 0): exact (method, path) matching, the fallback for
 * everything else, request ids, error mapping and logging, the client address under the trust
 * function, and the reply writer.
 */
import http, { type IncomingMessage, type RequestListener, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { ApiError, createLogger, OAuthError } from '@gatehouse-auth/core';
import { readJson } from '../../core/dist/http/body.js';
import { sendReply, withFastRoutes, type Endpoint, type FastRoute } from '../../core/dist/http/fast-routes.js';
import { LogCapture } from '../support/log-capture.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What an endpoint saw of a request. */
interface Seen {
  name: string;
  method: string | undefined;
  url: string | undefined;
  ip: string;
  id: string;
}

interface Harness {
  base: string;
  /** Every endpoint call, in order. */
  seen: Seen[];
  /** The URLs the fallback received, in order. */
  fallback: { method: string | undefined; url: string | undefined; id: unknown }[];
  logs: LogCapture;
  close(): Promise<void>;
}

const servers: Server[] = [];

/** An endpoint that records the call and answers 200 with what it saw. */
function recorder(name: string, seen: Seen[]): Endpoint {
  return async (req: IncomingMessage, ip: string) => {
    const entry = { name, method: req.method, url: req.url, ip, id: req.id };
    seen.push(entry);
    return { status: 200, headers: { 'X-Endpoint': name }, body: entry };
  };
}

async function serve(
  routes: (seen: Seen[]) => FastRoute[],
  trustProxy: (addr: string, i: number) => boolean = () => false,
): Promise<Harness> {
  const seen: Seen[] = [];
  const fallbackCalls: Harness['fallback'] = [];
  const logs = new LogCapture();
  const fallback: RequestListener = (req, res) => {
    fallbackCalls.push({ method: req.method, url: req.url, id: (req as { id?: unknown }).id });
    res.writeHead(404, { 'Content-Type': 'text/plain', 'X-Fallback': 'yes' });
    res.end('fallback');
  };
  const listener = withFastRoutes({
    routes: routes(seen),
    fallback,
    logger: createLogger('info', logs),
    trustProxy,
  });
  const server = http.createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    seen,
    fallback: fallbackCalls,
    logs,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('withFastRoutes', () => {
  after(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  });

  describe('matching', () => {
    let h: Harness;
    before(async () => {
      h = await serve((seen) => [
        { method: 'POST', path: '/token', endpoint: recorder('token-post', seen) },
        { method: '*', path: '/token', endpoint: recorder('token-any', seen) },
        { method: 'POST', path: '/only-post', endpoint: recorder('only-post', seen) },
        { method: '*', path: '/any', endpoint: recorder('any', seen) },
      ]);
    });
    beforeEach(() => {
      h.seen.length = 0;
      h.fallback.length = 0;
    });

    it('serves an exact (method, path) match from the endpoint, with a JSON body', async () => {
      const res = await fetch(`${h.base}/only-post`, { method: 'POST' });
      expect(res.status).to.equal(200);
      expect(res.headers.get('x-endpoint')).to.equal('only-post');
      expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
      const text = await res.text();
      expect(res.headers.get('content-length')).to.equal(String(Buffer.byteLength(text)));
      const body = JSON.parse(text) as Seen;
      expect(body).to.include({ name: 'only-post', method: 'POST', url: '/only-post', ip: '127.0.0.1' });
      expect(h.seen).to.have.length(1);
      expect(h.fallback).to.have.length(0);
    });

    it('a method-specific entry wins over `*` on the same path; other methods take the `*` entry', async () => {
      const post = await fetch(`${h.base}/token`, { method: 'POST' });
      expect(post.headers.get('x-endpoint')).to.equal('token-post');
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
        const res = await fetch(`${h.base}/token`, { method });
        expect(res.status, method).to.equal(200);
        expect(res.headers.get('x-endpoint'), method).to.equal('token-any');
      }
      expect(h.seen.map((s) => s.method)).to.deep.equal(['POST', 'GET', 'PUT', 'DELETE', 'PATCH']);
      expect(h.fallback).to.have.length(0);
    });

    it('`*` answers every method, including POST', async () => {
      for (const method of ['GET', 'POST', 'OPTIONS']) {
        const res = await fetch(`${h.base}/any`, { method });
        expect(res.status, method).to.equal(200);
        expect(res.headers.get('x-endpoint'), method).to.equal('any');
      }
      expect(h.fallback).to.have.length(0);
    });

    it('another method on a POST-only path goes to the fallback', async () => {
      const res = await fetch(`${h.base}/only-post`);
      expect(res.status).to.equal(404);
      expect(res.headers.get('x-fallback')).to.equal('yes');
      expect(await res.text()).to.equal('fallback');
      expect(h.seen).to.have.length(0);
      expect(h.fallback).to.deep.equal([{ method: 'GET', url: '/only-post', id: undefined }]);
    });

    it('other spellings (case, trailing slash, double slash, prefix) go to the fallback untouched', async () => {
      const paths = ['/ONLY-POST', '/Only-Post', '/only-post/', '//only-post', '/only-post/x', '/x/only-post', '/only'];
      for (const path of paths) {
        const res = await fetch(`${h.base}${path}`, { method: 'POST' });
        expect(res.status, path).to.equal(404);
        expect(res.headers.get('x-fallback'), path).to.equal('yes');
        // The fallback gets the request as it came: no request id of the fast path's own.
        expect(res.headers.get('x-request-id'), path).to.equal(null);
      }
      expect(h.seen).to.have.length(0);
      expect(h.fallback.map((f) => f.url)).to.deep.equal(paths);
      expect(h.fallback.every((f) => f.id === undefined)).to.equal(true);
    });

    it('the query string is ignored for matching; the endpoint still sees the full URL', async () => {
      const res = await fetch(`${h.base}/only-post?a=1&b=/x`, { method: 'POST' });
      expect(res.status).to.equal(200);
      expect(res.headers.get('x-endpoint')).to.equal('only-post');
      expect(h.seen[0]!.url).to.equal('/only-post?a=1&b=/x');
      const empty = await fetch(`${h.base}/only-post?`, { method: 'POST' });
      expect(empty.headers.get('x-endpoint')).to.equal('only-post');
      const slashThenQuery = await fetch(`${h.base}/only-post/?a=1`, { method: 'POST' });
      expect(slashThenQuery.headers.get('x-fallback')).to.equal('yes');
      expect(h.fallback.map((f) => f.url)).to.deep.equal(['/only-post/?a=1']);
    });

    it('an unmatched path goes to the fallback, once', async () => {
      const res = await fetch(`${h.base}/elsewhere?x=1`, { method: 'PUT', body: 'hello' });
      expect(res.status).to.equal(404);
      expect(await res.text()).to.equal('fallback');
      expect(h.fallback).to.deep.equal([{ method: 'PUT', url: '/elsewhere?x=1', id: undefined }]);
      expect(h.seen).to.have.length(0);
    });
  });

  describe('request ids and the access log', () => {
    let h: Harness;
    before(async () => {
      h = await serve((seen) => [{ method: 'POST', path: '/t', endpoint: recorder('t', seen) }]);
    });

    it('sets X-Request-Id (a UUID) and hands the same id to the endpoint; each request its own', async () => {
      const a = await fetch(`${h.base}/t`, { method: 'POST' });
      const b = await fetch(`${h.base}/t`, { method: 'POST' });
      const idA = a.headers.get('x-request-id');
      const idB = b.headers.get('x-request-id');
      expect(idA).to.match(UUID);
      expect(idB).to.match(UUID);
      expect(idA).not.to.equal(idB);
      expect(((await a.json()) as Seen).id).to.equal(idA);
      expect(((await b.json()) as Seen).id).to.equal(idB);
    });

    it('keeps a well-formed incoming X-Request-Id and replaces a malformed one', async () => {
      const kept = await fetch(`${h.base}/t`, { method: 'POST', headers: { 'X-Request-Id': 'lb-1234:abc.def_9' } });
      expect(kept.headers.get('x-request-id')).to.equal('lb-1234:abc.def_9');
      expect(((await kept.json()) as Seen).id).to.equal('lb-1234:abc.def_9');
      for (const bad of ['has spaces', 'x'.repeat(129), 'semi;colon']) {
        const res = await fetch(`${h.base}/t`, { method: 'POST', headers: { 'X-Request-Id': bad } });
        const id = res.headers.get('x-request-id');
        expect(id, bad).to.match(UUID);
        expect(((await res.json()) as Seen).id, bad).to.equal(id);
      }
    });

    it('writes one `request completed` line per served request, with its id and status', async () => {
      const res = await fetch(`${h.base}/t`, { method: 'POST', headers: { 'X-Request-Id': 'access-log-1' } });
      expect(res.status).to.equal(200);
      await res.text();
      const lines = h.logs.entries.filter((e) => e.msg === 'request completed' && e.reqId === 'access-log-1');
      expect(lines).to.have.length(1);
      expect(lines[0]!.level).to.equal(30);
      expect((lines[0]!.res as { statusCode: number }).statusCode).to.equal(200);
      expect((lines[0]!.req as { method: string; url: string }).url).to.equal('/t');
    });
  });

  describe('errors', () => {
    let h: Harness;
    before(async () => {
      h = await serve(() => [
        {
          method: 'POST',
          path: '/client',
          endpoint: async () => {
            throw new OAuthError('invalid_client', 'x');
          },
        },
        {
          method: 'GET',
          path: '/405',
          endpoint: async () => {
            throw new OAuthError('invalid_request', 'POST only', 405, { Allow: 'POST' });
          },
        },
        {
          method: 'POST',
          path: '/api-error',
          endpoint: async () => {
            throw new ApiError(409, 'EXCHANGE_USED', 'the exchange was used');
          },
        },
        {
          method: 'POST',
          path: '/fault',
          endpoint: async () => {
            throw new Error('database password is hunter2 (internal detail 7c1e)');
          },
        },
        {
          method: 'POST',
          path: '/unwritable',
          // JSON.stringify throws on a BigInt: the reply itself cannot be written.
          endpoint: async () => ({ status: 200, body: { n: 1n } }),
        },
        {
          method: 'POST',
          path: '/read-body',
          endpoint: async (req) => ({ status: 200, body: { read: await readJson(req) } }),
        },
        {
          method: 'POST',
          path: '/sync-fault',
          // Not async: throws before any promise exists.
          endpoint: (() => {
            throw new TypeError('sync boom 91aa');
          }) as unknown as Endpoint,
        },
      ]);
    });

    it('a protocol error answers its status, WWW-Authenticate and JSON body, and is not logged as a fault', async () => {
      const res = await fetch(`${h.base}/client`, { method: 'POST', headers: { 'X-Request-Id': 'proto-1' } });
      expect(res.status).to.equal(401);
      expect(res.headers.get('www-authenticate')).to.equal('Basic realm="gatehouse"');
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('pragma')).to.equal('no-cache');
      expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
      expect(res.headers.get('x-request-id')).to.equal('proto-1');
      expect(await res.json()).to.deep.equal({ error: 'invalid_client', error_description: 'x' });
      expect(h.logs.entries.some((e) => e.msg === 'unhandled fault')).to.equal(false);
    });

    it('a protocol error’s extra headers (Allow) and explicit status are kept', async () => {
      const res = await fetch(`${h.base}/405`);
      expect(res.status).to.equal(405);
      expect(res.headers.get('allow')).to.equal('POST');
      expect(res.headers.get('www-authenticate')).to.equal(null);
      expect(await res.json()).to.deep.equal({ error: 'invalid_request', error_description: 'POST only' });
    });

    it('an ApiError answers the Gatehouse envelope with the request id as referenceNumber', async () => {
      const res = await fetch(`${h.base}/api-error`, { method: 'POST', headers: { 'X-Request-Id': 'api-err-7' } });
      expect(res.status).to.equal(409);
      expect(await res.json()).to.deep.equal({
        success: false,
        status: 409,
        error: {
          code: 'EXCHANGE_USED',
          error: 'the exchange was used',
          type: 'Conflict',
          status: 409,
          referenceNumber: 'api-err-7',
        },
      });
    });

    it('a plain Error is a bare 500 INTERNAL_ERROR with the request id, logged, its message not shown', async () => {
      const res = await fetch(`${h.base}/fault`, { method: 'POST' });
      expect(res.status).to.equal(500);
      const id = res.headers.get('x-request-id');
      expect(id).to.match(UUID);
      const text = await res.text();
      expect(JSON.parse(text)).to.deep.equal({
        success: false,
        status: 500,
        error: {
          code: 'INTERNAL_ERROR',
          error: 'internal server error',
          type: 'InternalServerError',
          status: 500,
          referenceNumber: id,
        },
      });
      expect(text).not.to.include('7c1e');
      expect(text).not.to.include('hunter2');
      expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
      const fault = h.logs.entries.find(
        (e) => e.msg === 'unhandled fault' && (e.req as { id?: string } | undefined)?.id === id,
      );
      expect(fault, 'the fault is logged under the request id').to.not.equal(undefined);
      expect(fault!.level).to.equal(50);
      expect((fault!.err as { message: string }).message).to.equal(
        'database password is hunter2 (internal detail 7c1e)',
      );
      // The access log line of a 5xx is at error level.
      const access = h.logs.entries.find((e) => e.msg === 'request completed' && e.reqId === id);
      expect(access?.level).to.equal(50);
    });

    it('an endpoint that throws synchronously is a 500 too, not a crashed listener', async () => {
      const res = await fetch(`${h.base}/sync-fault`, { method: 'POST' });
      expect(res.status).to.equal(500);
      const id = res.headers.get('x-request-id');
      const body = (await res.json()) as { error: { code: string; referenceNumber: string } };
      expect(body.error).to.include({ code: 'INTERNAL_ERROR', referenceNumber: id });
      const fault = h.logs.entries.find(
        (e) => e.msg === 'unhandled fault' && (e.req as { id?: string } | undefined)?.id === id,
      );
      expect((fault?.err as { message?: string } | undefined)?.message).to.equal('sync boom 91aa');
      // And the server still answers.
      expect((await fetch(`${h.base}/client`, { method: 'POST' })).status).to.equal(401);
    });

    it('a client that goes away mid-body is its own mistake: no fault logged, the server still answers', async () => {
      const { hostname, port } = new URL(h.base);
      await new Promise<void>((resolve) => {
        const socket = net.connect({ host: hostname, port: Number(port) }, () => {
          socket.write(
            'POST /read-body HTTP/1.1\r\nHost: x\r\nX-Request-Id: gone-1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
          );
          setTimeout(() => socket.destroy(), 50);
        });
        socket.on('close', () => resolve());
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const faults = h.logs.entries.filter(
        (e) => e.level === 50 && (e.req as { id?: string } | undefined)?.id === 'gone-1',
      );
      expect(faults).to.deep.equal([]);
      const res = await fetch(`${h.base}/read-body`, {
        method: 'POST',
        body: '{"a":1}',
        headers: { 'Content-Type': 'application/json' },
      });
      expect(await res.json()).to.deep.equal({ read: { a: 1 } });
    });

    it('a reply that cannot be written is a logged 500 under the request id, as in express', async () => {
      const res = await fetch(`${h.base}/unwritable`, { method: 'POST', headers: { 'X-Request-Id': 'unwritable-1' } });
      expect(res.status).to.equal(500);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('INTERNAL_ERROR');
      const logged = h.logs.entries.find(
        (e) => e.level === 50 && (e.req as { id?: string } | undefined)?.id === 'unwritable-1',
      );
      expect(logged, 'the failure is logged').to.not.equal(undefined);
      expect((logged!.err as { message: string }).message).to.match(/BigInt/);
      expect((await fetch(`${h.base}/client`, { method: 'POST' })).status).to.equal(401);
    });
  });

  describe('client address and trust proxy', () => {
    const xff = { 'X-Forwarded-For': '203.0.113.7, 198.51.100.2' };
    const ipOf = async (base: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${base}/ip`, { method: 'POST', headers });
      expect(res.status).to.equal(200);
      return ((await res.json()) as Seen).ip;
    };

    it('trust nothing: X-Forwarded-For is ignored, the socket address is used', async () => {
      const h = await serve(
        (seen) => [{ method: 'POST', path: '/ip', endpoint: recorder('ip', seen) }],
        () => false,
      );
      expect(await ipOf(h.base, xff)).to.equal('127.0.0.1');
      expect(await ipOf(h.base)).to.equal('127.0.0.1');
    });

    it('trust one hop: the last X-Forwarded-For entry is the client', async () => {
      const h = await serve(
        (seen) => [{ method: 'POST', path: '/ip', endpoint: recorder('ip', seen) }],
        (_addr, i) => i < 1,
      );
      expect(await ipOf(h.base, xff)).to.equal('198.51.100.2');
      expect(await ipOf(h.base, { 'X-Forwarded-For': '203.0.113.9' })).to.equal('203.0.113.9');
      expect(await ipOf(h.base)).to.equal('127.0.0.1');
    });

    it('the trust function is asked about the socket address first', async () => {
      const asked: [string, number][] = [];
      const h = await serve(
        (seen) => [{ method: 'POST', path: '/ip', endpoint: recorder('ip', seen) }],
        (addr, i) => {
          asked.push([addr, i]);
          return addr === '127.0.0.1';
        },
      );
      expect(await ipOf(h.base, xff)).to.equal('198.51.100.2');
      expect(asked).to.deep.equal([
        ['127.0.0.1', 0],
        ['198.51.100.2', 1],
      ]);
    });
  });

  describe('replies', () => {
    let h: Harness;
    before(async () => {
      h = await serve(() => [
        {
          method: 'POST',
          path: '/empty',
          endpoint: async () => ({ status: 200, headers: { 'Cache-Control': 'no-store' } }),
        },
        { method: 'POST', path: '/no-headers', endpoint: async () => ({ status: 204 }) },
        {
          method: 'POST',
          path: '/unicode',
          endpoint: async () => ({ status: 201, body: { name: 'Zoë ✓ 𝄞' } }),
        },
      ]);
    });

    it('a reply without body: Content-Length 0, no Content-Type, its headers kept', async () => {
      const res = await fetch(`${h.base}/empty`, { method: 'POST' });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-length')).to.equal('0');
      expect(res.headers.get('content-type')).to.equal(null);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('x-request-id')).to.match(UUID);
      expect(await res.text()).to.equal('');
    });

    it('a reply with neither body nor headers', async () => {
      const res = await fetch(`${h.base}/no-headers`, { method: 'POST' });
      expect(res.status).to.equal(204);
      expect(await res.text()).to.equal('');
    });

    it('Content-Length counts bytes, not characters', async () => {
      const res = await fetch(`${h.base}/unicode`, { method: 'POST' });
      expect(res.status).to.equal(201);
      const expected = JSON.stringify({ name: 'Zoë ✓ 𝄞' });
      expect(res.headers.get('content-length')).to.equal(String(Buffer.byteLength(expected)));
      expect(Buffer.byteLength(expected)).to.be.greaterThan(expected.length);
      expect(await res.text()).to.equal(expected);
    });

    it('sendReply on a bare response writes status, headers and body in one go', async () => {
      const server = http.createServer((_req, res) =>
        sendReply(res, { status: 202, headers: { 'X-A': '1' }, body: { ok: true } }),
      );
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/anything`);
      expect(res.status).to.equal(202);
      expect(res.headers.get('x-a')).to.equal('1');
      expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
      expect(res.headers.get('content-length')).to.equal(String('{"ok":true}'.length));
      expect(await res.text()).to.equal('{"ok":true}');
    });
  });
});
