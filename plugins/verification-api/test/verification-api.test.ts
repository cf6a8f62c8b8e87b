/**
 * Decision 78: the verification service's routes and the hosted page's continuation are
 * @gatehouse-auth/verification-api, on `web.verification`. Left out of `plugins:`, their paths
 * answer 404 (JSON on the fast path's paths too) and leave /openapi.json, and the hosted page
 * does not start without it. A plugin that checks nothing still gets the core's checks, and a
 * plugin's fast route answers JSON before express. The API's behaviour is tested where it was
 * (test/verification/*, on configs that list the plugin).
 */
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import request from 'supertest';
import { buildApp, createLogger, type Gatehouse, type RouteSpec } from '@gatehouse-auth/core';
import { registerWithFakes } from '@gatehouse-auth/testing';
import verificationApiPlugin, { VERIFICATION_PATHS } from '@gatehouse-auth/verification-api';
import { testConfig } from '../../../test/support/config.js';
import { expectError } from '../../../test/verification/steps.js';

const CARELESS = fileURLToPath(new URL('./fixtures/careless-verification.js', import.meta.url));
const plugins = [
  { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
  { name: '@gatehouse-auth/openapi' },
];
const OPERATIONS = [
  'initiateVerification',
  'performVerification',
  'cancelVerification',
  'verificationStatus',
  'notificationStatus',
  'continueHostedLogin',
];

async function build(list: Record<string, unknown>[]): Promise<Gatehouse> {
  return buildApp(testConfig(list), { logger: createLogger('silent') });
}

async function operationIds(gatehouse: Gatehouse): Promise<string[]> {
  const doc = (await request(gatehouse.app).get('/openapi.json').expect(200)).body as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  return Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
}

describe('verification API left out of plugins: (decision 78)', () => {
  let gatehouse: Gatehouse;
  before(async () => {
    gatehouse = await build(plugins);
  });
  after(() => gatehouse?.close());

  it('its paths answer 404, JSON and forms alike, and no fast route is left', async () => {
    const body = { request_id: 'r', identifier: 'nadia', exchange_id: 'e', password: 'x' };
    for (const path of [
      '/verification-srv/authentication/PASSWORD/initiation',
      '/verification-srv/authentication/PASSWORD/verification',
      '/verification-srv/authentication/PASSWORD/cancel',
      '/verification-srv/v2/notification/status/s',
      '/login/continue',
    ]) {
      expectError(await request(gatehouse.app).post(path).send(body), 404, 'NOT_FOUND');
      expectError(await request(gatehouse.app).post(path).type('form').send(body), 404, 'NOT_FOUND');
    }
    expectError(await request(gatehouse.app).get('/verification-srv/verificationstatus/s'), 404, 'NOT_FOUND');
    const { fastRoutes } = gatehouse;
    expect(fastRoutes.map((r) => r.path).filter((p) => p.startsWith('/verification-srv'))).to.deep.equal([]);
  });

  it('its operations leave /openapi.json', async () => {
    expect((await operationIds(gatehouse)).filter((id) => OPERATIONS.includes(id))).to.deep.equal([]);
  });

  it('the hosted page does not start without it, naming it', async () => {
    const error = await build([
      ...plugins,
      { name: '@gatehouse-auth/management' },
      { name: '@gatehouse-auth/page-login' },
    ])
      .then((g) => g.close().then(() => null))
      .catch((err: Error) => err);
    expect(error?.message).to.equal(
      'plugin @gatehouse-auth/page-login: depends on plugin @gatehouse-auth/verification-api, which is not configured',
    );
  });
});

describe('verification API listed (decision 78)', () => {
  let gatehouse: Gatehouse;
  before(async () => {
    gatehouse = await build([...plugins, { name: '@gatehouse-auth/verification-api' }, { path: CARELESS }]);
  });
  after(() => gatehouse?.close());

  it('documents its six operations, and serves the JSON initiation and verification on the fast path', async () => {
    expect(await operationIds(gatehouse)).to.include.members(OPERATIONS);
    const { fastRoutes } = gatehouse;
    expect(fastRoutes).to.deep.include.members([
      { method: 'POST', path: VERIFICATION_PATHS.initiate },
      { method: 'POST', path: VERIFICATION_PATHS.verify },
    ]);
  });

  it('answers as before: a body that is not an object is the declaration’s 400 INVALID_FIELD', async () => {
    const res = await request(gatehouse.app)
      .post('/verification-srv/authentication/PASSWORD/initiation')
      .set('Content-Type', 'application/json')
      .send('[1,2]');
    expectError(res, 400, 'INVALID_FIELD');
  });

  it('runs the core’s checks for a plugin that checks nothing: a malformed exchange_id is EXCHANGE_INVALID', async () => {
    const res = await request(gatehouse.app)
      .post('/careless/PASSWORD/verification')
      .send({ exchange_id: { nested: true }, password: 'x' });
    expect(res.body.data).to.deep.equal({ status: 400, code: 'EXCHANGE_INVALID' });
  });

  it('answers a plugin’s fast route in the envelope for JSON, and leaves a form to its router', async () => {
    const fast = await request(gatehouse.app).post('/careless/fast/PIN%2D1').send({ a: 1 });
    expect(fast.status).to.equal(200);
    expect(fast.headers['cache-control']).to.equal('no-store');
    const { ip, ...data } = fast.body.data as { ip: string };
    expect(fast.body).to.include({ success: true, status: 200 });
    expect(data).to.deep.equal({ via: 'fast', method: 'PIN-1', body: { a: 1 } });
    // The client address the core found (trust_proxy applied), handed to the route.
    expect(ip).to.match(/127\.0\.0\.1$/);
    const form = await request(gatehouse.app).post('/careless/fast/PIN').type('form').send({ a: '1' });
    expect(form.body).to.deep.equal({ via: 'express', body: { a: '1' } });
  });
});

describe('verification API registered without a server', () => {
  it('adds its routes at the root with two fast routes, and declarations read once the server is built', async () => {
    const registered = await registerWithFakes(verificationApiPlugin);
    expect(registered.routes).to.have.length(1);
    expect(registered.routes[0]!.path).to.equal('/');
    expect(registered.routes[0]!.fast?.map((r) => r.path)).to.deep.equal([
      VERIFICATION_PATHS.initiate,
      VERIFICATION_PATHS.verify,
    ]);
    const operations = registered.routes[0]!.operations as () => readonly RouteSpec[];
    expect(() => operations()).to.throw(/api\.web\.methods needs a running server/);
  });
});
