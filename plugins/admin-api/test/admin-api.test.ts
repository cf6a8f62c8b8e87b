/**
 * The admin REST API (decision 44): the users directory behind the admin token, as the core
 * answered it before it became @gatehouse-auth/admin-api. Left out of `plugins:`, /admin/*
 * answers 404 while the core's other admin-token endpoints keep working; on its routes, wrong
 * admin tokens are throttled per address like everywhere else the token is accepted.
 */
import { expect } from 'chai';
import request from 'supertest';
import { buildApp, createLogger, type Gatehouse, type RouteSpec } from '@gatehouse-auth/core';
import { FakeClock, registerWithFakes } from '@gatehouse-auth/testing';
import adminApiPlugin from '@gatehouse-auth/admin-api';
import { TEST_ADMIN_TOKEN, testConfig } from '../../../test/support/config.js';
import { expectError } from '../../../test/verification/steps.js';

const adminApi = { name: '@gatehouse-auth/admin-api' };
/** The services the admin API runs on (decision 0063). */
const management = { name: '@gatehouse-auth/management' };

/** The Gatehouse API error envelope. */
function errorEnvelope(status: number, code: string, message: string, type: string, requestId: string | undefined) {
  return { success: false, status, error: { code, error: message, type, status, referenceNumber: requestId } };
}

describe('@gatehouse-auth/admin-api over HTTP', () => {
  let gatehouse: Gatehouse;
  before(async () => {
    gatehouse = await buildApp(testConfig([management, adminApi], { admin: { token: TEST_ADMIN_TOKEN } }), {
      logger: createLogger('silent'),
    });
  });
  after(async () => {
    await gatehouse.close();
  });

  describe('admin API', () => {
    const auth = (token = TEST_ADMIN_TOKEN) => ({ Authorization: `Bearer ${token}` });

    it('without admin.token configured: 403 ADMIN_API_DISABLED, whatever is presented', async () => {
      const closed = await buildApp(testConfig([management, adminApi]));
      try {
        for (const headers of [{}, auth(), auth('')]) {
          const res = await request(closed.app).get('/admin/users').set(headers).expect(403);
          expect(res.body.error.code).to.equal('ADMIN_API_DISABLED');
        }
        await request(closed.app).post('/admin/users').send({ username: 'x' }).expect(403);
      } finally {
        await closed.close();
      }
    });

    it('a missing or wrong token: 401 UNAUTHORIZED', async () => {
      for (const headers of [{}, auth(`${TEST_ADMIN_TOKEN}x`), auth('short'), { Authorization: TEST_ADMIN_TOKEN }]) {
        const res = await request(gatehouse.app).get('/admin/users').set(headers).expect(401);
        expect(res.body).to.deep.equal(
          errorEnvelope(
            401,
            'UNAUTHORIZED',
            'a valid admin bearer token is required',
            'Unauthorized',
            res.headers['x-request-id'],
          ),
        );
      }
      await request(gatehouse.app).post('/admin/users').set(auth('wrong')).send({ username: 'mallory' }).expect(401);
      expect(await gatehouse.container.cradle.users.findByIdentifier('mallory')).to.equal(null);
    });

    it('creates a user (201), lists it and gets it', async () => {
      const created = await request(gatehouse.app)
        .post('/admin/users')
        .set(auth())
        .send({ username: 'dora', email: 'Dora@Example.com', phone: '+4915112345678' })
        .expect(201);
      const user = created.body.data;
      expect(created.body).to.deep.equal({
        success: true,
        status: 201,
        data: { id: user.id, username: 'dora', email: 'dora@example.com', phone: '+4915112345678', status: 'active' },
      });
      const list = await request(gatehouse.app).get('/admin/users').set(auth()).expect(200);
      expect(list.body.data).to.deep.include(user);
      const paged = await request(gatehouse.app).get('/admin/users?limit=1&offset=0').set(auth()).expect(200);
      expect(paged.body.data).to.have.length(1);
      const got = await request(gatehouse.app).get(`/admin/users/${user.id}`).set(auth()).expect(200);
      expect(got.body).to.deep.equal({ success: true, status: 200, data: user });
    });

    it("its actions are userAccounts' audited ones: admin.<action>, the admin token as the actor", async () => {
      const created = await request(gatehouse.app)
        .post('/admin/users')
        .set(auth())
        .send({ username: 'ines' })
        .expect(201);
      const id = created.body.data.id as string;
      await request(gatehouse.app).post(`/admin/users/${id}/factors/sms/unlock`).set(auth()).expect(200);
      const events = await gatehouse.container.cradle.events.recent({
        userId: id,
        types: ['admin.user_created', 'factor.unlocked', 'admin.factor_unlocked'],
        limit: 10,
      });
      expect(events.map((e) => e.type).sort()).to.deep.equal([
        'admin.factor_unlocked',
        'admin.user_created',
        'factor.unlocked',
      ]);
      const audit = events.find((e) => e.type === 'admin.factor_unlocked')!;
      expect(audit.data).to.deep.equal({ actor: 'admin-token', method: 'SMS' });
    });

    it('an unknown user id is 404 USER_NOT_FOUND', async () => {
      const res = await request(gatehouse.app)
        .get('/admin/users/00000000-0000-0000-0000-000000000000')
        .set(auth())
        .expect(404);
      expect(res.body.error.code).to.equal('USER_NOT_FOUND');
    });

    it('invalid input is 400 INVALID_FIELD naming the field', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'username'],
        [{ username: 42 }, 'username'],
        [{ username: 'eve', email: 'nope' }, 'email'],
        [{ username: 'eve', phone: '12345' }, 'phone'],
      ];
      for (const [body, field] of cases) {
        const res = await request(gatehouse.app).post('/admin/users').set(auth()).send(body).expect(400);
        expect(res.body.error.code).to.equal('INVALID_FIELD');
        expect(res.body.error.details).to.deep.equal({ field });
      }
      expect(await gatehouse.container.cradle.users.findByIdentifier('eve')).to.equal(null);
    });

    it('a duplicate is 409 USER_EXISTS', async () => {
      await request(gatehouse.app).post('/admin/users').set(auth()).send({ username: 'frank' }).expect(201);
      const res = await request(gatehouse.app).post('/admin/users').set(auth()).send({ username: 'frank' }).expect(409);
      expect(res.body.error.code).to.equal('USER_EXISTS');
    });

    it('sets and clears required actions (admin.required_actions_set); bad input is 400 INVALID_FIELD', async () => {
      const created = await request(gatehouse.app).post('/admin/users').set(auth()).send({ username: 'grace' });
      const id = created.body.data.id as string;
      const path = `/admin/users/${id}/required-actions`;
      expect((await request(gatehouse.app).get(path).set(auth()).expect(200)).body.data).to.deep.equal({ actions: [] });
      const set = await request(gatehouse.app)
        .put(path)
        .set(auth())
        .send({ actions: ['second_factor', 'change_password'] })
        .expect(200);
      expect(set.body.data).to.deep.equal({ actions: ['change_password', 'second_factor'] });
      expect((await request(gatehouse.app).get(path).set(auth()).expect(200)).body.data.actions).to.have.length(2);
      for (const body of [{}, { actions: ['reboot'] }, { actions: 'change_password' }, { actions: [], extra: 1 }]) {
        const res = await request(gatehouse.app).put(path).set(auth()).send(body).expect(400);
        expect(res.body.error.code).to.equal('INVALID_FIELD');
      }
      await request(gatehouse.app).put(path).set(auth()).send({ actions: [] }).expect(200);
      expect((await request(gatehouse.app).get(path).set(auth()).expect(200)).body.data).to.deep.equal({ actions: [] });
      const events = await gatehouse.container.cradle.services.history.recent({
        types: ['admin.required_actions_set'],
        userId: id,
        limit: 5,
      });
      expect(events.map((e) => e.data)).to.deep.equal([
        { actor: 'admin-token', actions: '' },
        { actor: 'admin-token', actions: 'change_password,second_factor' },
      ]);
      const none = await request(gatehouse.app)
        .put('/admin/users/00000000-0000-0000-0000-000000000000/required-actions')
        .set(auth())
        .send({ actions: [] })
        .expect(404);
      expect(none.body.error.code).to.equal('USER_NOT_FOUND');
      await request(gatehouse.app).put(path).send({ actions: [] }).expect(401);
    });

    it('a non-integer limit is 400 INVALID_FIELD', async () => {
      const res = await request(gatehouse.app).get('/admin/users?limit=ten').set(auth()).expect(400);
      expect(res.body.error.code).to.equal('INVALID_FIELD');
    });
  });
});

describe('admin API left out of plugins: (decision 44)', () => {
  let gatehouse: Gatehouse;
  before(async () => {
    gatehouse = await buildApp(
      testConfig(
        [
          { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
          { name: '@gatehouse-auth/openapi' },
          { name: '@gatehouse-auth/metrics-prometheus', options: { expose: 'admin' } },
          { name: '@gatehouse-auth/management' },
          { name: '@gatehouse-auth/setup-api' },
        ],
        {
          admin: { token: TEST_ADMIN_TOKEN },
        },
      ),
      { logger: createLogger('silent') },
    );
  });
  after(() => gatehouse?.close());

  it('/admin/users* answers 404, with the admin token or without', async () => {
    const auth = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    for (const [method, path] of [
      ['get', '/admin/users'],
      ['post', '/admin/users'],
      ['get', '/admin/users/some-id'],
      ['patch', '/admin/users/some-id/profile'],
      ['delete', '/admin/users/some-id/sessions'],
      ['post', '/admin/users/some-id/factors/SMS/unlock'],
    ] as const) {
      expectError(await request(gatehouse.app)[method](path).set(auth), 404, 'NOT_FOUND');
      expectError(await request(gatehouse.app)[method](path), 404, 'NOT_FOUND');
    }
  });

  it('its operations leave /openapi.json', async () => {
    const doc = (await request(gatehouse.app).get('/openapi.json').expect(200)).body as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/admin'))).to.deep.equal([]);
  });

  it('the core endpoints the admin token opens keep working: /health/dependencies, /metrics', async () => {
    const auth = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    await request(gatehouse.app).get('/health/dependencies').set(auth).expect(200);
    await request(gatehouse.app).get('/metrics').set(auth).expect(200);
    expectError(await request(gatehouse.app).get('/health/dependencies'), 401, 'UNAUTHORIZED');
  });

  it('the setup API keeps taking the admin token with sub', async () => {
    const user = await gatehouse.container.cradle.users.create({ username: 'olga' });
    const res = await request(gatehouse.app)
      .post('/verification-actions-srv/setup/PASSWORD/initiation')
      .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ sub: user.id, password: 'correct horse battery staple 42' });
    expect(res.status, res.text).to.equal(200);
    expectError(
      await request(gatehouse.app)
        .post('/verification-actions-srv/setup/PASSWORD/initiation')
        .set('Authorization', 'Bearer wrong-admin-token-0123456789abcdef')
        .send({ sub: user.id, password: 'correct horse battery staple 42' }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('admin API: wrong admin tokens are throttled on its routes', function () {
  const clock = new FakeClock(new Date());
  let gatehouse: Gatehouse;
  before(async () => {
    gatehouse = await buildApp(
      testConfig([management, adminApi], { server: { trust_proxy: true }, admin: { token: TEST_ADMIN_TOKEN } }),
      { logger: createLogger('silent'), clock },
    );
  });
  after(() => gatehouse?.close());

  it('20 wrong tokens at /admin/users/:id block the address: 429 with Retry-After there and on /health/dependencies', async () => {
    const ip = '198.51.100.77';
    const get = (path: string, token: string) =>
      request(gatehouse.app).get(path).set('X-Forwarded-For', ip).set('Authorization', `Bearer ${token}`);
    for (let i = 0; i < 20; i++) expectError(await get('/admin/users/x', `wrong-token-${i}`), 401, 'UNAUTHORIZED');
    for (const path of ['/admin/users', '/admin/users/x/sessions', '/health/dependencies']) {
      const res = await get(path, TEST_ADMIN_TOKEN);
      expectError(res, 429, 'TOO_MANY_ATTEMPTS');
      expect(res.headers['retry-after']).to.equal('300');
    }
    // Another address is not blocked.
    await request(gatehouse.app)
      .get('/admin/users')
      .set('X-Forwarded-For', '198.51.100.78')
      .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .expect(200);
    clock.advance(301);
    await get('/admin/users', TEST_ADMIN_TOKEN).expect(200);
  });
});

describe('admin API registered without a server (plugin API 1.3)', () => {
  it('adds one route group at /admin with its eighteen operations; the token check needs a server', async () => {
    const registered = await registerWithFakes(adminApiPlugin);
    expect(registered.routes).to.have.length(1);
    expect(registered.routes[0]!.path).to.equal('/admin');
    // A list: only declarations that name other plugins' registrations need a function.
    const operations = registered.routes[0]!.operations as readonly RouteSpec[];
    expect(operations.map((op) => `${op.method} ${op.path}`)).to.deep.equal([
      'post /users',
      'get /users',
      'get /users/:id',
      'get /users/:id/profile',
      'patch /users/:id/profile',
      'get /users/:id/sessions',
      'delete /users/:id/sessions/:sid',
      'delete /users/:id/sessions',
      'post /users/:id/factors/:method/unlock',
      'get /users/:id/required-actions',
      'put /users/:id/required-actions',
      'get /apps',
      'post /apps',
      'get /apps/:client_id',
      'put /apps/:client_id',
      'patch /apps/:client_id',
      'delete /apps/:client_id',
      'post /apps/:client_id/secret',
    ]);
    expect(() => registered.api.web.requireAdmin({} as never)).to.throw(
      /api\.web\.requireAdmin needs a running server/,
    );
  });
});
