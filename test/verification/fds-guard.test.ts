import { expect } from 'chai';
import { ADMIN_TOKEN, defaultPlugins, startVerificationApp, type VerificationApp } from './support.js';
import {
  atStageTwo,
  expectError,
  initiate,
  lastCodeTo,
  otherCode,
  passwordUser,
  PASSWORD,
  verify,
  WRONG_PASSWORD,
} from './steps.js';

/**
 * A locked factor refuses right and wrong proofs alike (the velocity rule guards attempts), and
 * before the user is known every refusal looks like an unknown identifier: no oracle for guesses
 * or for which accounts exist.
 */
describe('verification: refusals that reveal nothing', () => {
  let v: VerificationApp;
  before(async () => {
    v = await startVerificationApp({
      plugins: [
        ...defaultPlugins(),
        {
          name: '@gatehouse-auth/fds-velocity',
          options: {
            lockout_failures: 3,
            free_failures: 100,
            max_failures_per_ip: 10_000,
            max_failures_per_user: 10_000,
          },
        },
      ],
    });
  });
  after(() => v.close());

  it('second stage: after the lock, right and wrong codes both get 403 FDS_BLOCKED before any check', async () => {
    const user = await passwordUser(v);
    // Two exchanges made before the lock, each with its own code.
    const pending = [];
    for (let i = 0; i < 2; i++) {
      const { exchangeId } = await initiate(v, 'SMS', await atStageTwo(v, user), { sub: user.id });
      pending.push({ exchangeId, code: await lastCodeTo(user.phone, 'sms') });
    }
    for (let i = 0; i < 3; i++) {
      const { exchangeId } = await initiate(v, 'SMS', await atStageTwo(v, user), { sub: user.id });
      const code = await lastCodeTo(user.phone, 'sms');
      expectError(
        await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: otherCode(code) }),
        401,
        'VERIFICATION_FAILED',
      );
    }
    const [right, wrong] = pending as [{ exchangeId: string; code: string }, { exchangeId: string; code: string }];
    expectError(await verify(v, 'SMS', { exchange_id: right.exchangeId, pass_code: right.code }), 403, 'FDS_BLOCKED');
    expectError(
      await verify(v, 'SMS', { exchange_id: wrong.exchangeId, pass_code: otherCode(wrong.code) }),
      403,
      'FDS_BLOCKED',
    );
    // New initiations are refused as well.
    const refused = await v.http
      .post('/verification-srv/authentication/SMS/initiation')
      .send({ request_id: await atStageTwo(v, user), usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: user.id });
    expectError(refused, 403, 'FDS_BLOCKED');
  });

  it('first stage: after the lock, the right password fails exactly like a wrong one', async () => {
    const user = await passwordUser(v);
    for (let i = 0; i < 3; i++) {
      const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      expectError(
        await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD }),
        401,
        'VERIFICATION_FAILED',
      );
    }
    const right = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    const wrong = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    const a = await verify(v, 'PASSWORD', { exchange_id: right.exchangeId, password: PASSWORD });
    const b = await verify(v, 'PASSWORD', { exchange_id: wrong.exchangeId, password: WRONG_PASSWORD });
    expectError(a, 401, 'VERIFICATION_FAILED');
    expectError(b, 401, 'VERIFICATION_FAILED');
    expect(a.body.error.error).to.equal(b.body.error.error);
  });

  it('first stage: a medium_id, or a refused initiation, answers like an unknown user', async () => {
    const user = await passwordUser(v);
    const known = await v.http.post('/verification-srv/authentication/SMS/initiation').send({
      request_id: await v.flow(),
      usage_type: 'INITIAL_AUTHENTICATION',
      identifier: user.username,
      medium_id: 'nope',
    });
    const unknown = await v.http.post('/verification-srv/authentication/SMS/initiation').send({
      request_id: await v.flow(),
      usage_type: 'INITIAL_AUTHENTICATION',
      identifier: 'nobody-at-all',
      medium_id: 'nope',
    });
    expect(known.status).to.equal(200);
    expect(unknown.status).to.equal(200);
    expect(Object.keys(known.body.data).sort()).to.deep.equal(Object.keys(unknown.body.data).sort());
  });
});

describe('verification: enrollment confirmation codes', () => {
  let v: VerificationApp;
  before(async () => {
    v = await startVerificationApp();
  });
  after(() => v.close());

  it('five wrong codes end the pending setup (429), so a new phone cannot be bound by guessing', async () => {
    const user = await passwordUser(v);
    const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
    const begun = await v.http
      .post('/verification-actions-srv/setup/SMS/initiation')
      .set(admin)
      .send({ sub: user.id, phone: '+15557654321' });
    expect(begun.status).to.equal(200);
    const code = await lastCodeTo('+15557654321', 'sms');
    for (let i = 0; i < 4; i++) {
      const wrong = await v.http
        .post('/verification-actions-srv/setup/SMS/verification')
        .set(admin)
        .send({ sub: user.id, pass_code: otherCode(code) });
      expectError(wrong, 401, 'VERIFICATION_FAILED');
    }
    const fifth = await v.http
      .post('/verification-actions-srv/setup/SMS/verification')
      .set(admin)
      .send({ sub: user.id, pass_code: otherCode(code) });
    expectError(fifth, 429, 'TOO_MANY_ATTEMPTS');
    const late = await v.http
      .post('/verification-actions-srv/setup/SMS/verification')
      .set(admin)
      .send({ sub: user.id, pass_code: code });
    expect(late.status).to.equal(401);
  });
});

describe('verification: single_factor_auth in any form', () => {
  let v: VerificationApp;
  before(async () => {
    v = await startVerificationApp();
  });
  after(() => v.close());

  it('null, an object or an empty string still count as the flag → 400 SINGLE_FACTOR_NOT_ALLOWED', async () => {
    const user = await passwordUser(v);
    for (const value of [null, { yes: true }, '']) {
      const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      const res = await v.http
        .post('/verification-srv/authentication/PASSWORD/verification')
        .send({ exchange_id: exchangeId, password: PASSWORD, single_factor_auth: value });
      expectError(res, 400, 'SINGLE_FACTOR_NOT_ALLOWED');
    }
  });
});
