import { expect } from 'chai';
import request from 'supertest';
import { buildApp, createLogger, type Gatehouse } from '@gatehouse-auth/core';
import { TEST_ADMIN_TOKEN, testConfig } from '../support/config.js';
import { fixturePlugin } from '../support/paths.js';
import { LogCapture } from '../support/log-capture.js';

const validPlugin = { path: fixturePlugin('valid') };
/** The admin API's routes: the invalid-body and log tests below post to them. */
const adminApi = { name: '@gatehouse-auth/admin-api' };
/** The services the admin API runs on (decision 0063). */
const management = { name: '@gatehouse-auth/management' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The Gatehouse API error envelope. */
function errorEnvelope(status: number, code: string, message: string, type: string, requestId: string | undefined) {
  return { success: false, status, error: { code, error: message, type, status, referenceNumber: requestId } };
}

describe('HTTP', () => {
  let gatehouse: Gatehouse;
  let logs: LogCapture;
  before(async () => {
    logs = new LogCapture();
    gatehouse = await buildApp(
      testConfig([validPlugin, management, adminApi], { admin: { token: TEST_ADMIN_TOKEN } }),
      {
        logger: createLogger('info', logs),
      },
    );
  });
  after(async () => {
    await gatehouse.close();
  });

  describe('health', () => {
    it('GET /health/live answers 200, not cached', async () => {
      const res = await request(gatehouse.app).get('/health/live').expect(200);
      expect(res.body).to.deep.equal({ status: 'ok' });
      expect(res.headers['cache-control']).to.equal('no-store');
    });

    it('GET /health/ready answers 200 when the database answers', async () => {
      const res = await request(gatehouse.app).get('/health/ready').expect(200);
      expect(res.body).to.deep.equal({ status: 'ok' });
      expect(res.headers['cache-control']).to.equal('no-store');
    });

    it('GET /health/ready answers 503 after beginShutdown, while live stays 200', async () => {
      const draining = await buildApp(testConfig());
      try {
        await request(draining.app).get('/health/ready').expect(200);
        draining.beginShutdown();
        const res = await request(draining.app).get('/health/ready').expect(503);
        expect(res.body).to.deep.equal({ status: 'unavailable', reason: 'shutting down' });
        await request(draining.app).get('/health/live').expect(200);
      } finally {
        await draining.close();
      }
    });

    it('GET /health/ready answers 503 when the database is gone', async () => {
      const broken = await buildApp(testConfig());
      await broken.container.cradle.sql.close();
      const res = await request(broken.app).get('/health/ready').expect(503);
      expect(res.body.status).to.equal('unavailable');
    });
  });

  describe('request ids and errors', () => {
    it('an unknown path is a 404 envelope whose referenceNumber is the X-Request-Id header', async () => {
      const res = await request(gatehouse.app).get('/no/such/thing').expect(404);
      const id = res.headers['x-request-id'];
      expect(id).to.match(UUID);
      expect(res.body).to.deep.equal(errorEnvelope(404, 'NOT_FOUND', 'no such endpoint', 'NotFound', id));
    });

    it('each request gets its own id', async () => {
      const a = await request(gatehouse.app).get('/nope');
      const b = await request(gatehouse.app).get('/nope');
      expect(a.headers['x-request-id']).not.to.equal(b.headers['x-request-id']);
    });

    it('keeps a well-formed incoming X-Request-Id', async () => {
      const res = await request(gatehouse.app).get('/nope').set('X-Request-Id', 'lb-1234:abc.def_9').expect(404);
      expect(res.headers['x-request-id']).to.equal('lb-1234:abc.def_9');
      expect(res.body.error.referenceNumber).to.equal('lb-1234:abc.def_9');
    });

    it('replaces a malformed or oversized incoming X-Request-Id', async () => {
      for (const bad of ['has spaces in it', 'x'.repeat(129), 'semi;colon']) {
        const res = await request(gatehouse.app).get('/nope').set('X-Request-Id', bad).expect(404);
        expect(res.headers['x-request-id']).to.match(UUID);
        expect(res.body.error.referenceNumber).to.equal(res.headers['x-request-id']);
      }
    });

    it('a fault in a plugin route is a bare 500 INTERNAL_ERROR, logged with the request id and cause', async () => {
      const res = await request(gatehouse.app)
        .get('/fixture/fault')
        .set('Authorization', 'Bearer fault-path-token-4711')
        .expect(500);
      const id = String(res.headers['x-request-id']);
      expect(id).to.match(UUID);
      expect(res.body).to.deep.equal(
        errorEnvelope(500, 'INTERNAL_ERROR', 'internal server error', 'InternalServerError', id),
      );
      expect(res.text).not.to.include('5f3a');
      const logged = logs.entries.find(
        (e) => e.msg === 'unhandled fault' && (e.req as { id?: string } | undefined)?.id === id,
      );
      expect(logged, 'the fault is logged with the request id').to.not.equal(undefined);
      expect((logged!.err as { message: string }).message).to.equal('fixture fault with internal detail 5f3a');
      expect(logs.text).not.to.include('fault-path-token-4711');
    });

    it('a plugin route answers normally', async () => {
      const res = await request(gatehouse.app).get('/fixture/hello').expect(200);
      expect(res.body.hello).to.equal('world');
    });

    it('invalid JSON is 400 INVALID_REQUEST_BODY (admin API and plugin routes)', async () => {
      const admin = await request(gatehouse.app)
        .post('/admin/users')
        .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .set('Content-Type', 'application/json')
        .send('{"username": ')
        .expect(400);
      expect(admin.body).to.deep.equal(
        errorEnvelope(
          400,
          'INVALID_REQUEST_BODY',
          'the request body is not valid',
          'BadRequest',
          admin.headers['x-request-id'],
        ),
      );
      const plugin = await request(gatehouse.app)
        .post('/fixture/log-body')
        .set('Content-Type', 'application/json')
        .send('{not json')
        .expect(400);
      expect(plugin.body.error.code).to.equal('INVALID_REQUEST_BODY');
    });

    it('a body over the limit is 413 PAYLOAD_TOO_LARGE', async () => {
      const res = await request(gatehouse.app)
        .post('/admin/users')
        .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .send({ username: 'x'.repeat(30_000) })
        .expect(413);
      expect(res.body.error.code).to.equal('PAYLOAD_TOO_LARGE');
    });

    it('applies server.trust_proxy to express', async () => {
      const proxied = await buildApp(testConfig([], { server: { trust_proxy: 1 } }));
      try {
        expect(proxied.express.get('trust proxy')).to.equal(1);
      } finally {
        await proxied.close();
      }
    });
  });

  describe('log redaction', () => {
    it('never logs the Authorization header, cookies, or secret query parameters', async () => {
      const before = logs.lines.length;
      const res = await request(gatehouse.app)
        .get('/admin/users?limit=5&password=hunter2-query&code=731904')
        .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .set('Cookie', 'session=cookie-secret-value')
        .expect(200);
      const lines = logs.lines.slice(before).join('');
      expect(lines).not.to.include(TEST_ADMIN_TOKEN);
      expect(lines).not.to.include('hunter2-query');
      expect(lines).not.to.include('731904');
      expect(lines).not.to.include('cookie-secret-value');
      // The request itself was logged, with the secrets replaced.
      const entry = logs.entries
        .slice(before)
        .find((e) => (e.req as { id?: string } | undefined)?.id === res.headers['x-request-id']);
      const req = entry!.req as { url: string; headers: Record<string, string> };
      expect(req.headers.authorization).to.equal('[redacted]');
      expect(req.headers.cookie).to.equal('[redacted]');
      expect(req.url).to.equal('/admin/users?limit=5&password=%5Bredacted%5D&code=%5Bredacted%5D');
    });

    it('a rejected admin token is not logged either', async () => {
      const before = logs.lines.length;
      await request(gatehouse.app)
        .get('/admin/users')
        .set('Authorization', 'Bearer guessed-token-value-xyz')
        .expect(401);
      expect(logs.lines.length).to.be.greaterThan(before);
      expect(logs.lines.slice(before).join('')).not.to.include('guessed-token-value-xyz');
    });

    it('a password a plugin logs inside an object is redacted', async () => {
      const before = logs.lines.length;
      await request(gatehouse.app)
        .post('/fixture/log-body')
        .send({ username: 'gina', password: 'correct horse battery staple', otp: '123987' })
        .expect(200);
      const fresh = logs.entries.slice(before);
      const logged = fresh.find((e) => e.msg === 'fixture received a body');
      expect(logged).to.deep.include({ plugin: '@fixture/valid' });
      expect(logged!.body).to.deep.equal({ username: 'gina', password: '[redacted]', otp: '[redacted]' });
      expect(logs.lines.slice(before).join('')).not.to.include('correct horse battery staple');
    });

    it('a password nested deeper in a logged object is redacted', () => {
      const capture = new LogCapture();
      createLogger('info', capture).info({ request: { body: { password: 'deep-secret-1' } } }, 'x');
      expect(capture.text).not.to.include('deep-secret-1');
    });

    it('top-level secret fields of a log call are redacted', () => {
      const capture = new LogCapture();
      const logger = createLogger('info', capture);
      logger.info({ password: 'p1', token: 't1', client_secret: 'c1', nested: { code: '999111' } }, 'x');
      expect(capture.entries[0]).to.deep.include({
        password: '[redacted]',
        token: '[redacted]',
        client_secret: '[redacted]',
        nested: { code: '[redacted]' },
      });
    });
  });
});
