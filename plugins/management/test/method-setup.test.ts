/**
 * Decision 81: setting a user's methods up is @gatehouse-auth/management's `methodSetup`, on the
 * core's `web.setup.run`, `isEnrolled` and `removed`. It works without the setup API (the
 * account page, the hosted page and the cidaas calls use it); the setup in progress is kept in
 * management's records; the setup API left without management stops start-up naming it.
 */
import { expect } from 'chai';
import {
  buildApp,
  createLogger,
  isBootError,
  isProtocolError,
  type Gatehouse,
  type JsonObject,
  type MethodSetup,
  type UserRecord,
} from '@gatehouse-auth/core';
import { generate } from 'otplib';
import request from 'supertest';
import { testConfig, TEST_ADMIN_TOKEN } from '../../../test/support/config.js';

const PASSWORD = { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } };
const TOTP = { name: '@gatehouse-auth/method-totp' };
const MANAGEMENT = { name: '@gatehouse-auth/management' };
/** A request as a command has one: no headers, no address. */
const NO_REQUEST = { headers: {}, socket: {} } as never;

async function refusal(work: Promise<unknown>): Promise<{ status: number; code: string }> {
  try {
    await work;
  } catch (err) {
    if (isProtocolError(err)) return { status: err.status, code: err.code };
    throw err;
  }
  throw new Error('not refused');
}

describe('methodSetup (decision 81)', function () {
  this.timeout(60_000);
  let gatehouse: Gatehouse;
  let setup: MethodSetup;
  let user: UserRecord;

  before(async () => {
    gatehouse = await buildApp(testConfig([PASSWORD, TOTP, MANAGEMENT], { admin: { token: TEST_ADMIN_TOKEN } }), {
      logger: createLogger('silent'),
    });
    setup = gatehouse.container.cradle.services.resolve<MethodSetup>('methodSetup');
    const { users } = gatehouse.container.cradle;
    user = (await users.findById((await users.create({ username: 'mira-setup' })).id))!;
  });
  after(() => gatehouse?.close());

  it('without the setup API: its paths answer 404, the service sets a password up and lists it', async () => {
    const res = await request(gatehouse.app)
      .post('/verification-actions-srv/setup/PASSWORD/initiation')
      .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ sub: user.id, password: 'a long enough passphrase' });
    expect(res.status).to.equal(404);
    await setup.step('initiation', 'password', user, { password: 'a long enough passphrase' }, NO_REQUEST);
    const methods = await setup.list(user, NO_REQUEST);
    const password = methods.find((m) => m.method === 'PASSWORD')!;
    expect(password.enrolled).to.equal(true);
    expect(password.credentials).to.have.length(1);
    expect(methods.find((m) => m.method === 'TOTP')!.enrolled).to.equal(false);
  });

  it('refuses what the core refuses: an unknown method, an unknown credential', async () => {
    expect(await refusal(setup.step('initiation', 'NOPE', user, {}, NO_REQUEST))).to.deep.equal({
      status: 404,
      code: 'METHOD_NOT_FOUND',
    });
    expect(await refusal(setup.rename(user, 'PASSWORD', 'no-such-credential', 'x'))).to.deep.include({
      code: 'CREDENTIAL_NOT_FOUND',
    });
    expect(await refusal(setup.remove(user, 'PASSWORD', 'no-such-credential'))).to.deep.include({
      code: 'CREDENTIAL_NOT_FOUND',
    });
  });

  it('keeps a pending setup in its own records; its exchange_id confirms only that method; five wrong codes end it', async () => {
    const begun = await setup.step('initiation', 'TOTP', user, {}, NO_REQUEST);
    const exchangeId = (begun.exchange_id as { exchange_id: string }).exchange_id;
    // Every digit of the app's code moved on by five: a code of the right shape, never the right one.
    const right = await generate({ secret: begun.secret as string });
    const wrongCode = right.replace(/\d/g, (d) => String((Number(d) + 5) % 10));
    const rows = await gatehouse.container.cradle.sql.select<{ plugin: string; key: string }>(
      `SELECT plugin, key FROM plugin_records WHERE key = :key`,
      { key: `${user.id}:TOTP` },
    );
    expect(rows.map((r) => r.plugin)).to.deep.equal(['@gatehouse-auth/management']);
    expect(
      await refusal(setup.confirm('PASSWORD', { exchange_id: exchangeId, pass_code: right }, NO_REQUEST)),
    ).to.deep.include({ code: 'EXCHANGE_INVALID' });
    for (let i = 0; i < 4; i++) {
      const wrong = await refusal(setup.confirm('TOTP', { exchange_id: exchangeId, pass_code: wrongCode }, NO_REQUEST));
      expect(wrong.status).to.equal(401);
    }
    expect(
      await refusal(setup.confirm('TOTP', { exchange_id: exchangeId, pass_code: wrongCode }, NO_REQUEST)),
    ).to.deep.equal({
      status: 429,
      code: 'TOO_MANY_ATTEMPTS',
    });
  });

  it('an exchange_id confirms its own setup only: not a later one of the method, not after it ended', async () => {
    const first = await setup.step('initiation', 'TOTP', user, {}, NO_REQUEST);
    const second = await setup.step('initiation', 'TOTP', user, {}, NO_REQUEST);
    const idOf = (begun: JsonObject) => (begun.exchange_id as { exchange_id: string }).exchange_id;
    const code = await generate({ secret: second.secret as string });
    expect(
      await refusal(setup.confirm('TOTP', { exchange_id: idOf(first), pass_code: code }, NO_REQUEST)),
    ).to.deep.equal({ status: 400, code: 'EXCHANGE_INVALID' });
    await setup.confirm('TOTP', { exchange_id: idOf(second), pass_code: code }, NO_REQUEST);
    expect(
      await refusal(setup.confirm('TOTP', { exchange_id: idOf(second), pass_code: code }, NO_REQUEST)),
    ).to.deep.include({ code: 'EXCHANGE_INVALID' });
    expect(await setup.remove(user, 'TOTP')).to.equal(1);
  });

  it('removes a method: counts what went, the event says so', async () => {
    expect(await setup.remove(user, 'PASSWORD')).to.equal(1);
    const events = await gatehouse.container.cradle.events.recent({
      userId: user.id,
      types: ['enrollment.removed'],
      limit: 5,
    });
    expect(events[0]?.data).to.deep.equal({ removed: 1 });
  });
});

describe('setup API without management (decision 81)', function () {
  this.timeout(60_000);

  it('stops start-up with one line naming it', async () => {
    let failure: unknown;
    try {
      const gatehouse = await buildApp(testConfig([PASSWORD, { name: '@gatehouse-auth/setup-api' }]), {
        logger: createLogger('silent'),
      });
      await gatehouse.close();
    } catch (err) {
      failure = err;
    }
    expect(isBootError(failure)).to.equal(true);
    expect((failure as Error).message).to.equal(
      'plugin @gatehouse-auth/setup-api: depends on plugin @gatehouse-auth/management, which is not configured',
    );
  });
});
