/**
 * Wrong admin tokens are throttled per client address as failed client authentications are: 20
 * within 5 minutes block the address on every route the admin token opens (429
 * TOO_MANY_ATTEMPTS with Retry-After), the right token included, until the window has passed.
 * Each wrong token is an `admin_auth.failure` event, without the token.
 */
import { expect } from 'chai';
import request from 'supertest';
import { buildApp, createLogger, type Gatehouse } from '@gatehouse-auth/core';
import { FakeClock } from '@gatehouse-auth/testing';
import { TEST_ADMIN_TOKEN, testConfig } from '../support/config.js';
import { expectError } from '../verification/steps.js';

const WRONG = 'wrong-admin-token-guess-0123456789abcdef';
const LIMIT = 20;

describe('admin token: wrong tokens are throttled per client address', function () {
  this.timeout(30_000);
  const clock = new FakeClock(new Date());
  let gatehouse: Gatehouse;
  let address = 0;
  /** A client address of its own for each test (trust_proxy: X-Forwarded-For is the address). */
  const someAddress = () => `198.51.100.${(address += 1)}`;
  const get = (path: string, ip: string, token?: string) => {
    const req = request(gatehouse.app).get(path).set('X-Forwarded-For', ip);
    return token === undefined ? req : req.set('Authorization', `Bearer ${token}`);
  };
  const guessUpToTheLimit = async (ip: string, path = '/admin/users') => {
    for (let i = 0; i < LIMIT; i++) expectError(await get(path, ip, `${WRONG}-${i}`), 401, 'UNAUTHORIZED');
  };
  const expectBlocked = (res: request.Response) => {
    expectError(res, 429, 'TOO_MANY_ATTEMPTS');
    expect(res.headers['retry-after']).to.equal('300');
  };

  before(async () => {
    gatehouse = await buildApp(
      testConfig(
        [
          { name: '@gatehouse-auth/management' },
          { name: '@gatehouse-auth/admin-api' },
          { name: '@gatehouse-auth/metrics-prometheus', options: { expose: 'admin' } },
          // The setup API's device calls (decision 69).
          { name: '@gatehouse-auth/devices-api' },
          { name: '@gatehouse-auth/setup-api' },
        ],
        {
          server: { trust_proxy: true },
          admin: { token: TEST_ADMIN_TOKEN },
        },
      ),
      { logger: createLogger('silent'), clock },
    );
  });
  after(() => gatehouse?.close());

  it(`${LIMIT} wrong tokens are 401 UNAUTHORIZED; then 429 TOO_MANY_ATTEMPTS with Retry-After, even for the right token`, async () => {
    const ip = someAddress();
    await guessUpToTheLimit(ip);
    expectBlocked(await get('/admin/users', ip, `${WRONG}-next`));
    expectBlocked(await get('/admin/users', ip, TEST_ADMIN_TOKEN));
  });

  it('the block holds on every route the admin token opens', async () => {
    const ip = someAddress();
    await guessUpToTheLimit(ip, '/health/dependencies');
    expectBlocked(await get('/admin/users', ip, TEST_ADMIN_TOKEN));
    expectBlocked(await get('/health/dependencies', ip, TEST_ADMIN_TOKEN));
    expectBlocked(await get('/metrics', ip, TEST_ADMIN_TOKEN));
    expectBlocked(await get('/verification-actions-srv/setup/users/nobody/methods', ip, TEST_ADMIN_TOKEN));
    expectBlocked(await get('/verification-actions-srv/setup/users/nobody/devices', ip, TEST_ADMIN_TOKEN));
  });

  it('a request without a token guesses nothing: 401, not counted, not blocked', async () => {
    const ip = someAddress();
    for (let i = 0; i < LIMIT + 5; i++) expectError(await get('/admin/users', ip), 401, 'UNAUTHORIZED');
    expect((await get('/admin/users', ip, TEST_ADMIN_TOKEN)).status).to.equal(200);
    await guessUpToTheLimit(ip);
    expectError(await get('/admin/users', ip), 401, 'UNAUTHORIZED');
  });

  it('another address is not affected: the right token works, a wrong one is 401', async () => {
    const blocked = someAddress();
    await guessUpToTheLimit(blocked);
    const other = someAddress();
    const res = await get('/admin/users', other, TEST_ADMIN_TOKEN);
    expect(res.status, res.text).to.equal(200);
    expect((await get('/health/dependencies', other, TEST_ADMIN_TOKEN)).status).to.equal(200);
    expectError(await get('/admin/users', other, WRONG), 401, 'UNAUTHORIZED');
  });

  it('on the setup API, any bearer that is not valid counts: it may be a guess at the admin token', async () => {
    const ip = someAddress();
    for (let i = 0; i < LIMIT; i++) {
      const res = await get('/verification-actions-srv/setup/users/nobody/methods', ip, `${WRONG}-${i}`);
      expectError(res, 401, 'UNAUTHORIZED');
    }
    expectBlocked(await get('/verification-actions-srv/setup/users/nobody/methods', ip, TEST_ADMIN_TOKEN));
    expectBlocked(await get('/admin/users', ip, TEST_ADMIN_TOKEN));
  });

  it('each wrong token is an admin_auth.failure event with the address, never the token', async () => {
    const ip = someAddress();
    expectError(await get('/admin/users?limit=5', ip, WRONG), 401, 'UNAUTHORIZED');
    const events = await gatehouse.container.cradle.events.recent({ types: ['admin_auth.failure'], ip });
    expect(events).to.have.length(1);
    expect(events[0]).to.deep.include({ type: 'admin_auth.failure', ip, reason: 'wrong admin token', count: 1 });
    expect(events[0]!.data).to.deep.equal({ method: 'GET', path: '/admin/users' });
    expect(events[0]!.key)
      .to.match(/^admin:[A-Za-z0-9_-]{43}$/)
      .and.not.include(ip);
    expect(JSON.stringify(events)).to.not.include(WRONG);
  });

  it('once the 5 minutes have passed, the right token works again (and a wrong one is 401)', async () => {
    const ip = someAddress();
    await guessUpToTheLimit(ip);
    expectBlocked(await get('/admin/users', ip, TEST_ADMIN_TOKEN));
    clock.advance(299);
    expectError(await get('/admin/users', ip, TEST_ADMIN_TOKEN), 429, 'TOO_MANY_ATTEMPTS');
    clock.advance(1);
    expect((await get('/admin/users', ip, TEST_ADMIN_TOKEN)).status).to.equal(200);
    expectError(await get('/admin/users', ip, WRONG), 401, 'UNAUTHORIZED');
  });
});

describe('admin token throttle without trust_proxy', function () {
  this.timeout(30_000);
  let gatehouse: Gatehouse;
  before(async () => {
    gatehouse = await buildApp(
      testConfig([{ name: '@gatehouse-auth/management' }, { name: '@gatehouse-auth/admin-api' }], {
        admin: { token: TEST_ADMIN_TOKEN },
      }),
      {
        logger: createLogger('silent'),
      },
    );
  });
  after(() => gatehouse?.close());

  it('a made-up X-Forwarded-For is no address of its own: the guesses still count for the socket’s', async () => {
    const get = (n: number, token: string) =>
      request(gatehouse.app)
        .get('/admin/users')
        .set('X-Forwarded-For', `203.0.113.${n}`)
        .set('Authorization', `Bearer ${token}`);
    for (let i = 0; i < LIMIT; i++) expectError(await get(i, `${WRONG}-${i}`), 401, 'UNAUTHORIZED');
    expectError(await get(LIMIT, TEST_ADMIN_TOKEN), 429, 'TOO_MANY_ATTEMPTS');
  });
});
