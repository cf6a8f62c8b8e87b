/**
 * Decision 70: the self-service setup API is @gatehouse-auth/setup-api, on `web.setup`. Left out
 * of `plugins:`, its paths answer 404 and leave /openapi.json, while the devices API under the
 * same prefix (the core's) keeps answering. Listed, its declarations name what the registered
 * methods add (the FACE photo's multipart body), read once every plugin has registered. The
 * behaviour of the API itself is tested where it was (test/verification/enrollment-auth.test.ts,
 * test/devices/face-multipart.test.ts, and the suites that set methods up through it).
 */
import { expect } from 'chai';
import request from 'supertest';
import { buildApp, createLogger, type Gatehouse, type RouteSpec } from '@gatehouse-auth/core';
import { registerWithFakes } from '@gatehouse-auth/testing';
import setupApiPlugin, { SETUP_MOUNT } from '@gatehouse-auth/setup-api';
import { TEST_ADMIN_TOKEN, testConfig } from '../../../test/support/config.js';
import { expectError } from '../../../test/verification/steps.js';

const plugins = [
  { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
  { name: '@gatehouse-auth/management' },
  { name: '@gatehouse-auth/openapi' },
  { name: '@gatehouse-auth/devices-api' },
];
const auth = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const OPERATIONS = [
  'setupInitiation',
  'setupScan',
  'setupVerification',
  'listUserMethods',
  'renameCredential',
  'removeMethod',
];

type OpenApi = { paths: Record<string, Record<string, { operationId: string; requestBody?: { content: object } }>> };

/** The operations /openapi.json documents under the setup prefix, as `method path operationId`. */
async function setupOperations(gatehouse: Gatehouse): Promise<OpenApi['paths']> {
  const doc = (await request(gatehouse.app).get('/openapi.json').expect(200)).body as OpenApi;
  return Object.fromEntries(Object.entries(doc.paths).filter(([p]) => p.startsWith(SETUP_MOUNT)));
}

describe('setup API left out of plugins: (decision 70)', () => {
  let gatehouse: Gatehouse;
  before(async () => {
    gatehouse = await buildApp(testConfig(plugins, { admin: { token: TEST_ADMIN_TOKEN } }), {
      logger: createLogger('silent'),
    });
  });
  after(() => gatehouse?.close());

  it('its paths answer 404, with the admin token or without', async () => {
    const user = await gatehouse.container.cradle.users.create({ username: 'nadia' });
    for (const [method, path] of [
      ['post', '/PASSWORD/initiation'],
      ['post', '/PASSWORD/scan'],
      ['post', '/PASSWORD/verification'],
      ['get', `/users/${user.id}/methods`],
      ['patch', `/users/${user.id}/methods/PASSWORD/some-credential`],
      ['delete', `/users/${user.id}/methods/PASSWORD`],
      ['delete', `/users/${user.id}/methods/PASSWORD/some-credential`],
    ] as const) {
      const body = { sub: user.id, password: 'correct horse battery staple 42', name: 'x' };
      const call = () => request(gatehouse.app)[method](SETUP_MOUNT + path);
      expectError(await call().set(auth).send(body), 404, 'NOT_FOUND');
      expectError(await call().send(body), 404, 'NOT_FOUND');
    }
    // A confirmation by a setup's exchange_id, without a bearer, too.
    expectError(
      await request(gatehouse.app).post(`${SETUP_MOUNT}/PASSWORD/verification`).send({ exchange_id: 'abc' }),
      404,
      'NOT_FOUND',
    );
  });

  it('its operations leave /openapi.json; the devices API under the same prefix stays', async () => {
    const paths = await setupOperations(gatehouse);
    const ids = Object.values(paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(ids.filter((id) => OPERATIONS.includes(id))).to.deep.equal([]);
    expect(Object.keys(paths).some((p) => p.includes('/devices'))).to.equal(true);
    const user = await gatehouse.container.cradle.users.create({ username: 'nadia-devices' });
    const devices = await request(gatehouse.app).get(`${SETUP_MOUNT}/users/${user.id}/devices`).set(auth);
    expect(devices.status, devices.text).to.equal(200);
  });
});

describe('setup API listed (decision 70)', () => {
  let gatehouse: Gatehouse;
  before(async () => {
    gatehouse = await buildApp(
      testConfig(
        [
          ...plugins,
          { name: '@gatehouse-auth/setup-api' },
          // Listed after the setup API: its declarations still name the photo's multipart body.
          { name: '@gatehouse-auth/method-face', options: { channel: 'outbox' } },
          { name: '@gatehouse-auth/channel-outbox' },
        ],
        { admin: { token: TEST_ADMIN_TOKEN } },
      ),
      { logger: createLogger('silent') },
    );
  });
  after(() => gatehouse?.close());

  it('/openapi.json documents its six operations under the prefix, multipart bodies for a method with files', async () => {
    const paths = await setupOperations(gatehouse);
    const ids = Object.values(paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(ids).to.include.members(OPERATIONS);
    const initiation = paths[`${SETUP_MOUNT}/{method}/initiation`]!.post!;
    expect(Object.keys(initiation.requestBody!.content)).to.include('multipart/form-data');
  });

  it('sets a password up with the admin token, lists and removes it', async () => {
    const user = await gatehouse.container.cradle.users.create({ username: 'oskar' });
    const set = await request(gatehouse.app)
      .post(`${SETUP_MOUNT}/PASSWORD/initiation`)
      .set(auth)
      .send({ sub: user.id, password: 'correct horse battery staple 42' });
    expect(set.status, set.text).to.equal(200);
    expect(set.headers['cache-control']).to.equal('no-store');
    const list = await request(gatehouse.app).get(`${SETUP_MOUNT}/users/${user.id}/methods`).set(auth).expect(200);
    const password = (list.body.data as { method: string; enrolled: boolean }[]).find((m) => m.method === 'PASSWORD');
    expect(password?.enrolled).to.equal(true);
    const removed = await request(gatehouse.app).delete(`${SETUP_MOUNT}/users/${user.id}/methods/PASSWORD`).set(auth);
    expect(removed.body).to.deep.include({ success: true, data: { removed: 1 } });
  });

  it('a multipart body where no method names the files is 400 INVALID_FIELD, as for a method without files', async () => {
    const user = await gatehouse.container.cradle.users.create({ username: 'quinn' });
    const multipart = (call: request.Test) =>
      call.set(auth).field('sub', user.id).attach('photo', Buffer.from('x'), 'a.jpg');
    const list = await multipart(request(gatehouse.app).get(`${SETUP_MOUNT}/users/${user.id}/methods`));
    expectError(list, 400, 'INVALID_FIELD');
    expect(list.body.error.error).to.equal('this call does not take multipart bodies');
    // The routes of a method that takes no files say so the same way.
    const step = await multipart(request(gatehouse.app).post(`${SETUP_MOUNT}/PASSWORD/initiation`));
    expectError(step, 400, 'INVALID_FIELD');
    expect(step.body.error.error).to.equal('PASSWORD does not take multipart bodies');
  });

  it('refuses a caller before reading the body: a wrong bearer with an invalid body is 401, not 400', async () => {
    const user = await gatehouse.container.cradle.users.create({ username: 'pia' });
    expectError(
      await request(gatehouse.app)
        .patch(`${SETUP_MOUNT}/users/${user.id}/methods/PASSWORD/some-credential`)
        .set('Authorization', 'Bearer not-a-token')
        .send({ name: '' }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('setup API registered without a server', () => {
  it('adds one route group at the setup prefix whose declarations are read once the server is built', async () => {
    const registered = await registerWithFakes(setupApiPlugin);
    expect(registered.routes).to.have.length(1);
    expect(registered.routes[0]!.path).to.equal(SETUP_MOUNT);
    const operations = registered.routes[0]!.operations as () => readonly RouteSpec[];
    expect(operations).to.be.a('function');
    // They name the registered methods, which only a server knows.
    expect(() => operations()).to.throw(/api\.web\.methods needs a running server/);
  });
});
