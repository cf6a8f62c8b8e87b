/**
 * Every failure row of the verification spec's §7 (and of the login continuation) through
 * HTTP: the exact status, the stable code and the error envelope. The core rows also run on
 * PostgreSQL.
 */
import { expect } from 'chai';
import { FakeClock } from '@gatehouse-auth/testing';
import { withPostgresDatabase } from '../support/postgres.js';
import { ADMIN_TOKEN, defaultPlugins, startVerificationApp, type AppOptions, type VerificationApp } from './support.js';
import {
  atStageTwo,
  continueLogin,
  dataOf,
  enrolTotp,
  expectError,
  initiate,
  lastCodeTo,
  otherCode,
  passwordStage,
  passwordUser,
  PASSWORD,
  resetVerdict,
  SCRIPTED_FDS,
  setup,
  totpCode,
  verify,
  WRONG_PASSWORD,
  type ScriptedVerdict,
  type TestUser,
} from './steps.js';

/** A login at its second stage with an SMS exchange initiated and the code that was sent. */
async function smsAtStageTwo(app: VerificationApp, user: TestUser): Promise<{ exchangeId: string; code: string }> {
  const requestId = await atStageTwo(app, user);
  const { exchangeId } = await initiate(app, 'SMS', requestId, { sub: user.id });
  return { exchangeId, code: await lastCodeTo(user.phone, 'sms') };
}

/** All methods, the capturing channel and the scripted FDS rule. */
function withFds(extra: Partial<AppOptions> = {}): AppOptions {
  return { plugins: [...defaultPlugins(), { path: SCRIPTED_FDS }], ...extra };
}

/**
 * The rows that depend on the database (exchange lifecycle, attempts, status single use); they
 * run on SQLite and on PostgreSQL.
 */
function coreRows(app: () => VerificationApp): void {
  it('exchange_id missing → 400 EXCHANGE_INVALID', async () => {
    const v = app();
    expectError(await verify(v, 'PASSWORD', { password: PASSWORD }), 400, 'EXCHANGE_INVALID');
  });

  it('exchange_id unknown → 404 EXCHANGE_INVALID', async () => {
    const v = app();
    const res = await verify(v, 'PASSWORD', { exchange_id: 'no-such-exchange', password: PASSWORD });
    expectError(res, 404, 'EXCHANGE_INVALID');
  });

  it('exchange_id of another method → 400 EXCHANGE_INVALID', async () => {
    const v = app();
    const user = await passwordUser(v);
    const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    expectError(await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: '123456' }), 400, 'EXCHANGE_INVALID');
  });

  it('exchange_id superseded by a resend → 400 EXCHANGE_INVALID, even with its right code', async () => {
    const v = app();
    const user = await passwordUser(v);
    const requestId = await v.flow();
    const first = await initiate(v, 'SMS', requestId, { identifier: user.username });
    const firstCode = await lastCodeTo(user.phone);
    const second = await initiate(v, 'SMS', requestId, { identifier: user.username });
    const res = await verify(v, 'SMS', { exchange_id: first.exchangeId, pass_code: firstCode });
    expectError(res, 400, 'EXCHANGE_INVALID');
    const ok = await verify(v, 'SMS', { exchange_id: second.exchangeId, pass_code: await lastCodeTo(user.phone) });
    expect(dataOf(ok)).to.have.property('status_id', second.statusId);
  });

  it('exchange_id already used → 409 EXCHANGE_USED', async () => {
    const v = app();
    const user = await passwordUser(v);
    const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    dataOf(await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }));
    expectError(await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }), 409, 'EXCHANGE_USED');
  });

  it('max_attempts wrong proofs → 401 VERIFICATION_FAILED each, then 429 TOO_MANY_ATTEMPTS even for the right one', async () => {
    const v = app();
    const user = await passwordUser(v);
    const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    for (let i = 0; i < 5; i++) {
      expectError(
        await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD }),
        401,
        'VERIFICATION_FAILED',
      );
    }
    expectError(await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }), 429, 'TOO_MANY_ATTEMPTS');
  });

  it('exchange_id of an earlier flow stage → 400 WRONG_FLOW_STAGE', async () => {
    const v = app();
    const user = await passwordUser(v);
    const requestId = await v.flow();
    const sms = await initiate(v, 'SMS', requestId, { identifier: user.username });
    const code = await lastCodeTo(user.phone);
    const statusId = await passwordStage(v, requestId, user);
    dataOf(await continueLogin(v, { requestId, status_id: statusId }));
    expectError(await verify(v, 'SMS', { exchange_id: sms.exchangeId, pass_code: code }), 400, 'WRONG_FLOW_STAGE');
  });

  it('wrong proof → 401 VERIFICATION_FAILED without saying what was wrong', async () => {
    const v = app();
    const user = await passwordUser(v);
    const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD });
    expectError(res, 401, 'VERIFICATION_FAILED');
    expect(res.body.error.error).to.equal('verification failed');
    // Only the attempts the exchange has left: nothing about what was wrong.
    expect(res.body.error.details).to.deep.equal({ attempts_left: 4 });
  });

  it('status continuation: STATUS_NOT_FOUND 404, STATUS_NOT_AUTHENTICATED 409, STATUS_USED 409', async () => {
    const v = app();
    const user = await passwordUser(v);
    const requestId = await v.flow();
    expectError(await continueLogin(v, { requestId, status_id: 'no-such-status' }), 404, 'STATUS_NOT_FOUND');
    const { exchangeId, statusId } = await initiate(v, 'PASSWORD', requestId, { identifier: user.username });
    expectError(await continueLogin(v, { requestId, status_id: statusId }), 409, 'STATUS_NOT_AUTHENTICATED');
    dataOf(await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }));
    dataOf(await continueLogin(v, { requestId, status_id: statusId }));
    expectError(await continueLogin(v, { requestId, status_id: statusId }), 409, 'STATUS_USED');
  });
}

describe('verification errors (SQLite)', () => {
  let v: VerificationApp;
  let verdict: ScriptedVerdict;

  before(async () => {
    v = await startVerificationApp(withFds());
  });
  after(() => v.close());
  beforeEach(async () => {
    verdict = await resetVerdict();
  });

  describe('core rows', () => coreRows(() => v));

  describe('the exchange', () => {
    it('exchange_id expired → 410 EXCHANGE_EXPIRED', async () => {
      const clock = new FakeClock(new Date());
      const timed = await startVerificationApp({ clock, verification: { exchange_ttl: 60 } });
      try {
        const user = await passwordUser(timed);
        const { exchangeId } = await initiate(timed, 'PASSWORD', await timed.flow(), { identifier: user.username });
        clock.advance(59);
        const live = await initiate(timed, 'PASSWORD', await timed.flow(), { identifier: user.username });
        clock.advance(1);
        expectError(
          await verify(timed, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }),
          410,
          'EXCHANGE_EXPIRED',
        );
        dataOf(await verify(timed, 'PASSWORD', { exchange_id: live.exchangeId, password: PASSWORD }));
      } finally {
        await timed.close();
      }
    });

    it('exchange_id expired by the wall clock (exchange_ttl: 1) → 410 EXCHANGE_EXPIRED', async () => {
      const timed = await startVerificationApp({ verification: { exchange_ttl: 1 } });
      try {
        const user = await passwordUser(timed);
        const { exchangeId } = await initiate(timed, 'PASSWORD', await timed.flow(), { identifier: user.username });
        await new Promise((resolve) => setTimeout(resolve, 1100));
        expectError(
          await verify(timed, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }),
          410,
          'EXCHANGE_EXPIRED',
        );
      } finally {
        await timed.close();
      }
    });

    it('an expired status_id → 410 STATUS_EXPIRED; an expired login → 410 REQUEST_EXPIRED', async () => {
      const clock = new FakeClock(new Date());
      const timed = await startVerificationApp({ clock, verification: { status_ttl: 30 } });
      try {
        const user = await passwordUser(timed);
        const requestId = await timed.flow();
        const statusId = await passwordStage(timed, requestId, user);
        clock.advance(31);
        expectError(await continueLogin(timed, { requestId, status_id: statusId }), 410, 'STATUS_EXPIRED');
        clock.advance(1800);
        const res = await timed.http
          .post('/verification-srv/authentication/PASSWORD/initiation')
          .send({ request_id: requestId, identifier: user.username });
        expectError(res, 410, 'REQUEST_EXPIRED');
      } finally {
        await timed.close();
      }
    });

    it('an exchange revoked by an FDS deny (second stage) → 400 EXCHANGE_INVALID afterwards', async () => {
      const user = await passwordUser(v);
      const { exchangeId, code } = await smsAtStageTwo(v, user);
      verdict.next = { action: 'deny', reason: 'test' };
      expectError(await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: code }), 403, 'FDS_BLOCKED');
      verdict.next = { action: 'allow' };
      expectError(await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: code }), 400, 'EXCHANGE_INVALID');
    });
  });

  describe('single_factor_auth and fields', () => {
    it('single_factor_auth with a non-FACE method → 400 SINGLE_FACTOR_NOT_ALLOWED', async () => {
      const user = await passwordUser(v);
      const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      const res = await verify(v, 'PASSWORD', {
        exchange_id: exchangeId,
        password: PASSWORD,
        single_factor_auth: true,
      });
      expectError(res, 400, 'SINGLE_FACTOR_NOT_ALLOWED');
    });

    it('a missing method field → 400 FIELD_MISSING naming it in details.fields', async () => {
      const user = await passwordUser(v);
      const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId });
      expectError(res, 400, 'FIELD_MISSING');
      expect(res.body.error.details).to.deep.equal({ fields: ['password'] });
      const empty = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: '' });
      expectError(empty, 400, 'FIELD_MISSING');
    });

    it('password with SMS → 400 FIELDS_MIXED; push_id with SMS → 400 FIELDS_MIXED', async () => {
      const user = await passwordUser(v);
      const { exchangeId } = await initiate(v, 'SMS', await v.flow(), { identifier: user.username });
      const code = await lastCodeTo(user.phone);
      const withPassword = await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: code, password: PASSWORD });
      expectError(withPassword, 400, 'FIELDS_MIXED');
      expect(withPassword.body.error.details).to.deep.equal({ fields: ['password'] });
      const withPush = await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: code, push_id: 'p-1' });
      expectError(withPush, 400, 'FIELDS_MIXED');
      expect(withPush.body.error.details).to.deep.equal({ fields: ['push_id'] });
    });

    it('a field that is not a single text value → 400 INVALID_FIELD', async () => {
      const user = await passwordUser(v);
      const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD, extra: ['a', 'b'] });
      expectError(res, 400, 'INVALID_FIELD');
      expect(res.body.error.details).to.deep.equal({ fields: ['extra'] });
    });
  });

  it('a method field that is not a single text value → 400 INVALID_FIELD, not FIELD_MISSING', async () => {
    const user = await passwordUser(v);
    const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: [PASSWORD, PASSWORD] });
    expectError(res, 400, 'INVALID_FIELD');
    expect(res.body.error.details).to.deep.equal({ fields: ['password'] });
  });

  describe('method enabled for the app and the user', () => {
    it('a method the app does not use → 403 METHOD_NOT_ENABLED at initiation', async () => {
      const user = await passwordUser(v);
      const res = await v.http
        .post('/verification-srv/authentication/SMS/initiation')
        .send({ request_id: await v.flow('app2'), usage_type: 'INITIAL_AUTHENTICATION', identifier: user.username });
      expectError(res, 403, 'METHOD_NOT_ENABLED');
    });

    it('a method of another stage → 403 METHOD_NOT_ENABLED at initiation', async () => {
      const user = await passwordUser(v);
      await enrolTotp(v, user.id);
      const res = await v.http
        .post('/verification-srv/authentication/TOTP/initiation')
        .send({ request_id: await v.flow(), usage_type: 'INITIAL_AUTHENTICATION', identifier: user.username });
      expectError(res, 403, 'METHOD_NOT_ENABLED');
    });

    it('a method the app stopped using (config reload) → 403 METHOD_NOT_ENABLED at verification', async () => {
      const user = await passwordUser(v);
      const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow('app2'), { identifier: user.username });
      const app2 = v.gatehouse.config.apps.find((a) => a.client_id === 'app2')!;
      const stages = app2.login_stages;
      app2.login_stages = [['EMAIL']];
      try {
        const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD });
        expectError(res, 403, 'METHOD_NOT_ENABLED');
      } finally {
        app2.login_stages = stages;
      }
    });

    it('a later-stage method the user has not set up → 403 METHOD_NOT_ENABLED at initiation', async () => {
      const user = await passwordUser(v);
      const requestId = await atStageTwo(v, user);
      const res = await v.http
        .post('/verification-srv/authentication/TOTP/initiation')
        .send({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: user.id });
      expectError(res, 403, 'METHOD_NOT_ENABLED');
    });

    it('a disabled user at a later stage → 403 USER_DISABLED at initiation', async () => {
      const user = await passwordUser(v);
      const requestId = await atStageTwo(v, user);
      await v.gatehouse.container.cradle.sql.exec(`UPDATE users SET status = 'disabled' WHERE id = :id`, {
        id: user.id,
      });
      const res = await v.http
        .post('/verification-srv/authentication/SMS/initiation')
        .send({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: user.id });
      expectError(res, 403, 'USER_DISABLED');
    });

    it('a method removed from the user after initiation → 403 METHOD_NOT_ENABLED at verification', async () => {
      const user = await passwordUser(v);
      const secret = await enrolTotp(v, user.id);
      const requestId = await atStageTwo(v, user);
      const { exchangeId } = await initiate(v, 'TOTP', requestId, { sub: user.id });
      const removed = await v.http
        .delete(`/verification-actions-srv/setup/users/${user.id}/methods/TOTP`)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
      expect(dataOf(removed)).to.deep.equal({ removed: 1 });
      const res = await verify(v, 'TOTP', { exchange_id: exchangeId, pass_code: await totpCode(secret, 1) });
      expectError(res, 403, 'METHOD_NOT_ENABLED');
    });
  });

  describe('the proof', () => {
    it('a wrong proof for an unknown identifier looks like one for a real user (401 VERIFICATION_FAILED)', async () => {
      const user = await passwordUser(v);
      const real = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      const ghost = await initiate(v, 'PASSWORD', await v.flow(), { identifier: 'nobody-at-all' });
      expect(Object.keys(ghost.data).sort()).to.deep.equal(Object.keys(real.data).sort());
      const wrong = await verify(v, 'PASSWORD', { exchange_id: real.exchangeId, password: WRONG_PASSWORD });
      const unknown = await verify(v, 'PASSWORD', { exchange_id: ghost.exchangeId, password: PASSWORD });
      expectError(wrong, 401, 'VERIFICATION_FAILED');
      expectError(unknown, 401, 'VERIFICATION_FAILED');
      const { referenceNumber: _a, ...wrongError } = wrong.body.error;
      const { referenceNumber: _b, ...unknownError } = unknown.body.error;
      expect(unknownError).to.deep.equal(wrongError);
    });

    it('a wrong one-time code → 401 VERIFICATION_FAILED', async () => {
      const user = await passwordUser(v);
      const { exchangeId } = await initiate(v, 'SMS', await v.flow(), { identifier: user.username });
      const code = await lastCodeTo(user.phone);
      expectError(
        await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: otherCode(code) }),
        401,
        'VERIFICATION_FAILED',
      );
      expectError(await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: 'abc' }), 401, 'VERIFICATION_FAILED');
    });
  });

  describe('fraud detection', () => {
    it('deny at verification (second stage) → 403 FDS_BLOCKED', async () => {
      const user = await passwordUser(v);
      const { exchangeId, code } = await smsAtStageTwo(v, user);
      verdict.next = { action: 'deny', reason: 'test' };
      expectError(await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: code }), 403, 'FDS_BLOCKED');
      expect(verdict.calls.at(-1)).to.deep.equal({ phase: 'verification', method: 'SMS', userId: user.id });
      // The step's verdicts and its verification.blocked event share the step's id (issue 29).
      const history = v.gatehouse.container.cradle.services.history;
      const [blocked] = await history.recent({ userId: user.id, types: ['verification.blocked'], limit: 5 });
      expect(blocked).to.deep.include({ method: 'SMS', outcome: 'deny', reason: 'fds:test' });
      expect(blocked!.data).to.include({ phase: 'verification' });
      const verdicts = await history.recent({ userId: user.id, types: ['fds.verdict'], limit: 50 });
      const ofStep = verdicts.filter((e) => e.data.step === blocked!.data.step);
      expect(ofStep.map((e) => [e.data.phase, e.outcome])).to.deep.equal([['verification', 'deny']]);
      // The earlier steps' verdicts each name a step that ended with its own event.
      const ended = await history.recent({ userId: user.id, limit: 100 });
      for (const e of verdicts) {
        expect(e.data.step, 'every verdict names its step').to.be.a('string');
      }
      const owners = ended.filter((e) => e.type !== 'fds.verdict' && typeof e.data.step === 'string');
      expect(owners.map((e) => e.type)).to.include.members(['verification.blocked', 'verification.initiated']);
    });

    it('deny at initiation (second stage) → 403 FDS_BLOCKED', async () => {
      const user = await passwordUser(v);
      const requestId = await atStageTwo(v, user);
      verdict.next = { action: 'deny', reason: 'test' };
      verdict.calls.length = 0;
      const res = await v.http
        .post('/verification-srv/authentication/SMS/initiation')
        .send({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: user.id });
      expectError(res, 403, 'FDS_BLOCKED');
      expect(verdict.calls).to.deep.equal([{ phase: 'initiation', method: 'SMS', userId: user.id }]);
    });

    it('at the first stage a deny looks like an unknown user: initiation answers as usual, a right proof fails like a wrong one', async () => {
      const user = await passwordUser(v);
      verdict.next = { action: 'deny', reason: 'test' };
      const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      verdict.next = { action: 'allow' };
      expectError(
        await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }),
        401,
        'VERIFICATION_FAILED',
      );
      // A deny after a right proof answers exactly like a wrong proof, and the exchange stays usable.
      const second = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      verdict.next = { action: 'deny', reason: 'test' };
      expectError(
        await verify(v, 'PASSWORD', { exchange_id: second.exchangeId, password: PASSWORD }),
        401,
        'VERIFICATION_FAILED',
      );
      verdict.next = { action: 'allow' };
      dataOf(await verify(v, 'PASSWORD', { exchange_id: second.exchangeId, password: PASSWORD }));
    });

    it('deny with retryAfter → 403 FDS_BLOCKED with Retry-After and details.retry_after', async () => {
      const user = await passwordUser(v);
      const { exchangeId, code } = await smsAtStageTwo(v, user);
      verdict.next = { action: 'deny', reason: 'slow down', retryAfter: 30 };
      const res = await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: code });
      expectError(res, 403, 'FDS_BLOCKED');
      expect(res.headers['retry-after']).to.equal('30');
      expect(res.body.error.details).to.deep.equal({ retry_after: 30 });
    });

    it('a rule that throws → 403 FDS_BLOCKED (fail closed), at verification and at initiation', async () => {
      const user = await passwordUser(v);
      const { exchangeId, code } = await smsAtStageTwo(v, user);
      verdict.throws = true;
      expectError(await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: code }), 403, 'FDS_BLOCKED');
      verdict.throws = false;
      const requestId = await atStageTwo(v, user);
      verdict.throws = true;
      const res = await v.http
        .post('/verification-srv/authentication/SMS/initiation')
        .send({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: user.id });
      expectError(res, 403, 'FDS_BLOCKED');
    });

    it('a rule that hangs → 403 FDS_BLOCKED after verification.fds_timeout_ms', async () => {
      const timed = await startVerificationApp(withFds({ verification: { fds_timeout_ms: 200 } }));
      try {
        const user = await passwordUser(timed);
        const { exchangeId, code } = await smsAtStageTwo(timed, user);
        verdict.hang = true;
        const started = Date.now();
        const res = await verify(timed, 'SMS', { exchange_id: exchangeId, pass_code: code });
        const elapsed = Date.now() - started;
        expectError(res, 403, 'FDS_BLOCKED');
        expect(elapsed).to.be.within(190, 2000);
      } finally {
        await timed.close();
      }
    });

    it('every verdict is stored as an fds.verdict event', async () => {
      const user = await passwordUser(v);
      const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      verdict.next = { action: 'deny', reason: 'scripted-deny' };
      await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD });
      const { sql } = v.gatehouse.container.cradle;
      const rows = await sql.select<{ outcome: string; reason: string | null }>(
        `SELECT outcome, reason FROM events WHERE type = 'fds.verdict' AND user_id = :userId`,
        { userId: user.id },
      );
      expect(rows.map((r) => [r.outcome, r.reason])).to.have.deep.members([
        ['allow', null],
        ['deny', 'scripted-deny'],
      ]);
    });
  });

  describe('paths and the login request', () => {
    it('an unknown method → 404 METHOD_NOT_FOUND at verification and initiation', async () => {
      expectError(
        await verify(v, 'CARRIER_PIGEON', { exchange_id: 'x', pass_code: '123456' }),
        404,
        'METHOD_NOT_FOUND',
      );
      const res = await v.http
        .post('/verification-srv/authentication/CARRIER_PIGEON/initiation')
        .send({ request_id: await v.flow(), identifier: 'x' });
      expectError(res, 404, 'METHOD_NOT_FOUND');
    });

    it('an unknown request_id → 404 REQUEST_NOT_FOUND', async () => {
      const res = await v.http
        .post('/verification-srv/authentication/PASSWORD/initiation')
        .send({ request_id: 'no-such-request', identifier: 'x' });
      expectError(res, 404, 'REQUEST_NOT_FOUND');
    });

    it('request_id missing → 400 FIELD_MISSING', async () => {
      const res = await v.http.post('/verification-srv/authentication/PASSWORD/initiation').send({ identifier: 'x' });
      expectError(res, 400, 'FIELD_MISSING');
      expect(res.body.error.details).to.deep.equal({ fields: ['request_id'] });
    });

    it('identifier missing at the first stage → 400 FIELD_MISSING', async () => {
      const res = await v.http
        .post('/verification-srv/authentication/PASSWORD/initiation')
        .send({ request_id: await v.flow() });
      expectError(res, 400, 'FIELD_MISSING');
      expect(res.body.error.details).to.deep.equal({ fields: ['identifier'] });
    });

    it('a completed login → 409 REQUEST_COMPLETED at initiation', async () => {
      const user = await passwordUser(v);
      const requestId = await v.flow('app2');
      const statusId = await passwordStage(v, requestId, user);
      expect(dataOf(await continueLogin(v, { requestId, status_id: statusId }))).to.include({ completed: true });
      const res = await v.http
        .post('/verification-srv/authentication/PASSWORD/initiation')
        .send({ request_id: requestId, identifier: user.username });
      expectError(res, 409, 'REQUEST_COMPLETED');
    });
  });

  describe('status continuation', () => {
    it('GET verificationstatus of an unknown status_id → 404 STATUS_NOT_FOUND', async () => {
      expectError(await v.http.get('/verification-srv/verificationstatus/no-such-status'), 404, 'STATUS_NOT_FOUND');
    });

    it('a status_id of another request, method or user → 400 STATUS_MISMATCH (and stays usable)', async () => {
      const user = await passwordUser(v);
      const other = await passwordUser(v);
      const requestId = await v.flow();
      const statusId = await passwordStage(v, requestId, user);
      expectError(await continueLogin(v, { requestId: await v.flow(), status_id: statusId }), 400, 'STATUS_MISMATCH');
      const wrongMethod = await continueLogin(v, { requestId, status_id: statusId, verificationType: 'SMS' });
      expectError(wrongMethod, 400, 'STATUS_MISMATCH');
      expectError(await continueLogin(v, { requestId, status_id: statusId, sub: other.id }), 400, 'STATUS_MISMATCH');
      const ok = await continueLogin(v, { requestId, status_id: statusId, verificationType: 'password', sub: user.id });
      expect(dataOf(ok)).to.include({ completed: false, stage: 1 });
    });

    it('status_id or requestId missing → 400 FIELD_MISSING', async () => {
      const res = await continueLogin(v, {});
      expectError(res, 400, 'FIELD_MISSING');
      expect(res.body.error.details).to.deep.equal({ fields: ['requestId', 'status_id'] });
    });
  });

  describe('a failed request changes nothing', () => {
    it('after FIELDS_MIXED, SINGLE_FACTOR_NOT_ALLOWED and INVALID_FIELD the exchange works with the right proof', async () => {
      const user = await passwordUser(v);
      const { exchangeId } = await initiate(v, 'SMS', await v.flow(), { identifier: user.username });
      const code = await lastCodeTo(user.phone);
      expectError(
        await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: code, password: 'x' }),
        400,
        'FIELDS_MIXED',
      );
      const single = await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: code, single_factor_auth: 'true' });
      expectError(single, 400, 'SINGLE_FACTOR_NOT_ALLOWED');
      expectError(
        await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: code, note: ['a'] }),
        400,
        'INVALID_FIELD',
      );
      dataOf(await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: code }));
    });

    it('FIELD_MISSING and FIELDS_MIXED do not count as attempts', async () => {
      const user = await passwordUser(v);
      const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      for (let i = 0; i < 4; i++) {
        expectError(
          await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD }),
          401,
          'VERIFICATION_FAILED',
        );
      }
      for (let i = 0; i < 3; i++) {
        expectError(await verify(v, 'PASSWORD', { exchange_id: exchangeId }), 400, 'FIELD_MISSING');
        const mixed = await verify(v, 'PASSWORD', {
          exchange_id: exchangeId,
          password: WRONG_PASSWORD,
          pass_code: '1',
        });
        expectError(mixed, 400, 'FIELDS_MIXED');
      }
      const exchange = await v.gatehouse.container.cradle.exchanges.find(exchangeId);
      expect(exchange).to.include({ attempts: 4, usedAt: null, revokedAt: null });
      dataOf(await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }));
    });

    it('after a 401 the status stays INITIATED; after a success it is AUTHENTICATED', async () => {
      const user = await passwordUser(v);
      const { exchangeId, statusId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD });
      expect(dataOf(await v.http.get(`/verification-srv/verificationstatus/${statusId}`))).to.include({
        status: 'INITIATED',
      });
      dataOf(await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }));
      expect(dataOf(await v.http.get(`/verification-srv/verificationstatus/${statusId}`))).to.include({
        status: 'AUTHENTICATED',
      });
    });
  });

  it('enrollment endpoints check the admin token', async () => {
    const user = await passwordUser(v);
    const none = await v.http
      .post('/verification-actions-srv/setup/PASSWORD/initiation')
      .send({ sub: user.id, password: PASSWORD });
    expectError(none, 401, 'UNAUTHORIZED');
    const wrong = await v.http
      .post('/verification-actions-srv/setup/PASSWORD/initiation')
      .set('Authorization', 'Bearer not-the-admin-token')
      .send({ sub: user.id, password: PASSWORD });
    expectError(wrong, 401, 'UNAUTHORIZED');
    expectError(await setup(v, 'CARRIER_PIGEON', 'initiation', { sub: user.id }), 404, 'METHOD_NOT_FOUND');
    expectError(
      await setup(v, 'PASSWORD', 'initiation', { sub: 'no-such-user', password: PASSWORD }),
      404,
      'USER_NOT_FOUND',
    );
  });
});

describe('verification errors (PostgreSQL)', () => {
  const db = withPostgresDatabase();
  let v: VerificationApp;

  before(async function () {
    this.timeout(30_000);
    v = await startVerificationApp(withFds({ databaseUrl: db.url }));
  });
  after(async () => {
    await v?.close();
  });
  beforeEach(async () => {
    await resetVerdict();
  });

  coreRows(() => v);
});
