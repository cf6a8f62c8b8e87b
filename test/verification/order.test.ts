/**
 * The validation order of the spec (§4 rule 2): (a) the exchange, (b) single_factor_auth,
 * (c) fields, enablement and the proof, (d) FDS. A request that breaks two steps gets the
 * earlier step's error, and a later step leaves no trace (no attempt counted, no FDS call).
 */
import { expect } from 'chai';
import { FakeClock } from '@gatehouse-auth/testing';
import { withPostgresDatabase } from '../support/postgres.js';
import { ADMIN_TOKEN, defaultPlugins, startVerificationApp, type VerificationApp } from './support.js';
import {
  atStageTwo,
  continueLogin,
  dataOf,
  enrolBackupCodes,
  enrolTotp,
  expectError,
  initiate,
  lastCodeTo,
  passwordStage,
  passwordUser,
  PASSWORD,
  resetVerdict,
  SCRIPTED_FDS,
  totpCode,
  verify,
  WRONG_PASSWORD,
  type ScriptedVerdict,
  type TestUser,
} from './steps.js';

const SFA = { single_factor_auth: true };

function orderSuite(databaseUrl: () => string | undefined): void {
  let v: VerificationApp;
  let verdict: ScriptedVerdict;
  /** An app on a clock the test moves, for expiry; exchanges live 60 s there. */
  let timed: VerificationApp;
  let clock: FakeClock;

  before(async function () {
    this.timeout(30_000);
    const url = databaseUrl();
    v = await startVerificationApp({ databaseUrl: url, plugins: [...defaultPlugins(), { path: SCRIPTED_FDS }] });
    clock = new FakeClock(new Date());
    timed = await startVerificationApp({ databaseUrl: url, clock, verification: { exchange_ttl: 60 } });
  });
  after(async () => {
    await v?.close();
    await timed?.close();
  });
  beforeEach(async () => {
    verdict = await resetVerdict();
  });

  const passwordExchange = async (app: VerificationApp, user: TestUser, requestId?: string) =>
    (await initiate(app, 'PASSWORD', requestId ?? (await app.flow()), { identifier: user.username })).exchangeId;

  const usedExchange = async (app: VerificationApp, user: TestUser) => {
    const exchangeId = await passwordExchange(app, user);
    dataOf(await verify(app, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }));
    return exchangeId;
  };

  const burnedExchange = async (app: VerificationApp, user: TestUser) => {
    const exchangeId = await passwordExchange(app, user);
    for (let i = 0; i < 5; i++) await verify(app, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD });
    return exchangeId;
  };

  const attemptsOf = async (app: VerificationApp, exchangeId: string) =>
    (await app.gatehouse.container.cradle.exchanges.find(exchangeId))!.attempts;

  /** A TOTP exchange at stage 2 whose method the admin then removed from the user. */
  const exchangeOfRemovedTotp = async (user: TestUser) => {
    const secret = await enrolTotp(v, user.id);
    const requestId = await atStageTwo(v, user);
    const { exchangeId } = await initiate(v, 'TOTP', requestId, { sub: user.id });
    dataOf(
      await v.http
        .delete(`/verification-actions-srv/setup/users/${user.id}/methods/TOTP`)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`),
    );
    return { exchangeId, secret };
  };

  describe('within (a), the exchange', () => {
    it('missing before anything else: no exchange_id + single_factor_auth + no proof → EXCHANGE_INVALID', async () => {
      expectError(await verify(v, 'PASSWORD', { ...SFA, pass_code: '1' }), 400, 'EXCHANGE_INVALID');
    });

    it('of another method before used: a used PASSWORD exchange at SMS → 400 EXCHANGE_INVALID', async () => {
      const exchangeId = await usedExchange(v, await passwordUser(v));
      expectError(await verify(v, 'SMS', { exchange_id: exchangeId, pass_code: '123456' }), 400, 'EXCHANGE_INVALID');
    });

    it('used before expired → EXCHANGE_USED', async () => {
      const exchangeId = await usedExchange(timed, await passwordUser(timed));
      clock.advance(61);
      expectError(
        await verify(timed, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }),
        409,
        'EXCHANGE_USED',
      );
    });

    it('burned before expired → TOO_MANY_ATTEMPTS', async () => {
      const exchangeId = await burnedExchange(timed, await passwordUser(timed));
      clock.advance(61);
      expectError(
        await verify(timed, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }),
        429,
        'TOO_MANY_ATTEMPTS',
      );
    });

    it('superseded before expired → EXCHANGE_INVALID', async () => {
      const user = await passwordUser(timed);
      const requestId = await timed.flow();
      const first = await passwordExchange(timed, user, requestId);
      await passwordExchange(timed, user, requestId);
      clock.advance(61);
      expectError(await verify(timed, 'PASSWORD', { exchange_id: first, password: PASSWORD }), 400, 'EXCHANGE_INVALID');
    });

    it('expired before wrong stage → EXCHANGE_EXPIRED', async () => {
      const user = await passwordUser(timed);
      const requestId = await timed.flow();
      const sms = await initiate(timed, 'SMS', requestId, { identifier: user.username });
      const code = await lastCodeTo(user.phone);
      dataOf(await continueLogin(timed, { requestId, status_id: await passwordStage(timed, requestId, user) }));
      clock.advance(61);
      expectError(
        await verify(timed, 'SMS', { exchange_id: sms.exchangeId, pass_code: code }),
        410,
        'EXCHANGE_EXPIRED',
      );
    });
  });

  describe('(a) before (b): the exchange error wins over single_factor_auth', () => {
    it('unknown exchange + single_factor_auth → 404 EXCHANGE_INVALID', async () => {
      expectError(
        await verify(v, 'PASSWORD', { exchange_id: 'nope', password: PASSWORD, ...SFA }),
        404,
        'EXCHANGE_INVALID',
      );
    });

    it('used exchange + single_factor_auth → 409 EXCHANGE_USED', async () => {
      const exchangeId = await usedExchange(v, await passwordUser(v));
      expectError(
        await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD, ...SFA }),
        409,
        'EXCHANGE_USED',
      );
    });

    it('burned exchange + single_factor_auth → 429 TOO_MANY_ATTEMPTS', async () => {
      const exchangeId = await burnedExchange(v, await passwordUser(v));
      const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD, ...SFA });
      expectError(res, 429, 'TOO_MANY_ATTEMPTS');
    });

    it('expired exchange + single_factor_auth → 410 EXCHANGE_EXPIRED', async () => {
      const exchangeId = await passwordExchange(timed, await passwordUser(timed));
      clock.advance(61);
      const res = await verify(timed, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD, ...SFA });
      expectError(res, 410, 'EXCHANGE_EXPIRED');
    });

    it('wrong flow stage + single_factor_auth + mixed and missing fields → 400 WRONG_FLOW_STAGE', async () => {
      const user = await passwordUser(v);
      const requestId = await v.flow();
      const sms = await initiate(v, 'SMS', requestId, { identifier: user.username });
      dataOf(await continueLogin(v, { requestId, status_id: await passwordStage(v, requestId, user) }));
      const res = await verify(v, 'SMS', { exchange_id: sms.exchangeId, password: PASSWORD, ...SFA });
      expectError(res, 400, 'WRONG_FLOW_STAGE');
    });
  });

  describe('(b) before (c): single_factor_auth wins over fields and the proof', () => {
    it('single_factor_auth + missing field → SINGLE_FACTOR_NOT_ALLOWED', async () => {
      const exchangeId = await passwordExchange(v, await passwordUser(v));
      expectError(await verify(v, 'PASSWORD', { exchange_id: exchangeId, ...SFA }), 400, 'SINGLE_FACTOR_NOT_ALLOWED');
    });

    it('single_factor_auth + mixed fields → SINGLE_FACTOR_NOT_ALLOWED', async () => {
      const exchangeId = await passwordExchange(v, await passwordUser(v));
      const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD, push_id: 'p', ...SFA });
      expectError(res, 400, 'SINGLE_FACTOR_NOT_ALLOWED');
    });

    it('single_factor_auth + wrong proof → SINGLE_FACTOR_NOT_ALLOWED, and no attempt is counted', async () => {
      const exchangeId = await passwordExchange(v, await passwordUser(v));
      const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD, ...SFA });
      expectError(res, 400, 'SINGLE_FACTOR_NOT_ALLOWED');
      expect(await attemptsOf(v, exchangeId)).to.equal(0);
    });
  });

  describe('within (c)', () => {
    it('FIELD_MISSING before FIELDS_MIXED: PASSWORD with pass_code instead of password', async () => {
      const exchangeId = await passwordExchange(v, await passwordUser(v));
      const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId, pass_code: '123456' });
      expectError(res, 400, 'FIELD_MISSING');
      expect(res.body.error.details).to.deep.equal({ fields: ['password'] });
    });

    it('FIELD_MISSING before METHOD_NOT_ENABLED', async () => {
      const { exchangeId } = await exchangeOfRemovedTotp(await passwordUser(v));
      expectError(await verify(v, 'TOTP', { exchange_id: exchangeId }), 400, 'FIELD_MISSING');
    });

    it('FIELDS_MIXED before METHOD_NOT_ENABLED', async () => {
      const { exchangeId, secret } = await exchangeOfRemovedTotp(await passwordUser(v));
      const res = await verify(v, 'TOTP', {
        exchange_id: exchangeId,
        pass_code: await totpCode(secret, 1),
        password: 'x',
      });
      expectError(res, 400, 'FIELDS_MIXED');
    });

    it('METHOD_NOT_ENABLED before VERIFICATION_FAILED, and no attempt is counted', async () => {
      const { exchangeId } = await exchangeOfRemovedTotp(await passwordUser(v));
      expectError(await verify(v, 'TOTP', { exchange_id: exchangeId, pass_code: '000000' }), 403, 'METHOD_NOT_ENABLED');
      expect(await attemptsOf(v, exchangeId)).to.equal(0);
    });

    it('METHOD_NOT_ENABLED (app) before VERIFICATION_FAILED', async () => {
      const exchangeId = await passwordExchange(v, await passwordUser(v), await v.flow('app2'));
      const app2 = v.gatehouse.config.apps.find((a) => a.client_id === 'app2')!;
      const stages = app2.login_stages;
      app2.login_stages = [['EMAIL']];
      try {
        const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD });
        expectError(res, 403, 'METHOD_NOT_ENABLED');
      } finally {
        app2.login_stages = stages;
      }
    });

    it('FIELDS_MIXED before VERIFICATION_FAILED, and no attempt is counted', async () => {
      const exchangeId = await passwordExchange(v, await passwordUser(v));
      const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD, pass_code: '1' });
      expectError(res, 400, 'FIELDS_MIXED');
      expect(await attemptsOf(v, exchangeId)).to.equal(0);
    });
  });

  describe('(c) before (d): FDS runs only after a right proof', () => {
    it('wrong proof + FDS deny → 401 VERIFICATION_FAILED, the rule is not called at verification', async () => {
      const user = await passwordUser(v);
      const exchangeId = await passwordExchange(v, user);
      verdict.next = { action: 'deny', reason: 'test' };
      verdict.calls.length = 0;
      const res = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD });
      expectError(res, 401, 'VERIFICATION_FAILED');
      expect(verdict.calls).to.deep.equal([]);
      // The exchange is not revoked by FDS: with the rule relaxed, the right proof still works.
      verdict.next = { action: 'allow' };
      dataOf(await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }));
    });

    it('wrong proof + a throwing rule → 401 VERIFICATION_FAILED', async () => {
      const exchangeId = await passwordExchange(v, await passwordUser(v));
      verdict.throws = true;
      expectError(
        await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD }),
        401,
        'VERIFICATION_FAILED',
      );
    });

    it('used exchange + FDS deny → 409 EXCHANGE_USED, the rule is not called', async () => {
      const exchangeId = await usedExchange(v, await passwordUser(v));
      verdict.next = { action: 'deny', reason: 'test' };
      verdict.calls.length = 0;
      expectError(await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }), 409, 'EXCHANGE_USED');
      expect(verdict.calls).to.deep.equal([]);
    });

    it('an unknown identifier never reaches FDS (401 VERIFICATION_FAILED)', async () => {
      const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: 'ghost-of-nobody' });
      verdict.next = { action: 'deny', reason: 'test' };
      expectError(
        await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }),
        401,
        'VERIFICATION_FAILED',
      );
      expect(verdict.calls).to.deep.equal([]);
    });
  });

  describe('(d) before the commit', () => {
    it('right backup code + FDS deny → 403 FDS_BLOCKED, and the code stays unused', async () => {
      const user = await passwordUser(v);
      const codes = await enrolBackupCodes(v, user.id);
      const first = await initiate(v, 'BACKUPCODE', await atStageTwo(v, user), { sub: user.id });
      verdict.next = { action: 'deny', reason: 'test' };
      expectError(
        await verify(v, 'BACKUPCODE', { exchange_id: first.exchangeId, pass_code: codes[0] }),
        403,
        'FDS_BLOCKED',
      );
      verdict.next = { action: 'allow' };
      const second = await initiate(v, 'BACKUPCODE', await atStageTwo(v, user), { sub: user.id });
      dataOf(await verify(v, 'BACKUPCODE', { exchange_id: second.exchangeId, pass_code: codes[0] }));
    });
  });
}

describe('verification: validation order (SQLite)', () => {
  orderSuite(() => undefined);
});

describe('verification: validation order (PostgreSQL)', () => {
  const db = withPostgresDatabase();
  orderSuite(() => db.url);
});
