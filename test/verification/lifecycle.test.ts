/**
 * Whole logins through HTTP: enrolment at the setup endpoints, initiation, verification, the
 * status record and the continuation of the login flow, stage by stage.
 */
import { expect } from 'chai';
import { ADMIN_TOKEN, defaultPlugins, startVerificationApp, type AppOptions, type VerificationApp } from './support.js';
import {
  atStageTwo,
  continueLogin,
  dataOf,
  enrolBackupCodes,
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
  sentMessages,
  setup,
  totpCode,
  verify,
  WRONG_PASSWORD,
  type Continued,
  type ScriptedVerdict,
  type TestUser,
} from './steps.js';
import { generate } from 'otplib';

const withFds = (extra: Partial<AppOptions> = {}): AppOptions => ({
  plugins: [...defaultPlugins(), { path: SCRIPTED_FDS }],
  ...extra,
});

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

interface StatusData {
  status_id: string;
  status: string;
  method: string;
  expires_at: string;
}

describe('verification: lifecycle', () => {
  let v: VerificationApp;
  let verdict: ScriptedVerdict;

  before(async () => {
    v = await startVerificationApp(withFds());
  });
  after(() => v.close());
  beforeEach(async () => {
    verdict = await resetVerdict();
  });

  const statusOf = async (statusId: string) => {
    const res = await v.http.get(`/verification-srv/verificationstatus/${statusId}`);
    expect(res.headers['cache-control']).to.equal('no-store');
    return dataOf<StatusData>(res);
  };

  const flowOf = async (requestId: string) => (await v.gatehouse.container.cradle.flows.get(requestId))!;

  it('PASSWORD then TOTP: enrolment, both stages, status INITIATED → AUTHENTICATED → CONSUMED, amr pwd + otp', async () => {
    const id = await v.user('lifecycle-alice', { email: 'lifecycle-alice@example.test' });
    expect(dataOf(await setup(v, 'PASSWORD', 'initiation', { sub: id, password: PASSWORD }))).to.deep.equal({
      enrolled: true,
    });
    const started = dataOf<{ secret: string; otpauth_uri: string; qr_code: string }>(
      await setup(v, 'TOTP', 'initiation', { sub: id }),
    );
    expect(started.otpauth_uri).to.match(/^otpauth:\/\/totp\//);
    expect(started.qr_code).to.match(/^data:image\/png;base64,/);
    const enrolmentCode = await generate({ secret: started.secret });
    expect(dataOf(await setup(v, 'TOTP', 'verification', { sub: id, pass_code: enrolmentCode }))).to.deep.equal({
      enrolled: true,
    });

    // Stage 1: PASSWORD by identifier.
    const requestId = await v.flow();
    const first = await initiate(v, 'PASSWORD', requestId, { identifier: 'lifecycle-alice' });
    expect(first.data.exchange_id).to.have.all.keys('exchange_id', 'expires_at');
    expect(await statusOf(first.statusId)).to.include({ status: 'INITIATED', method: 'PASSWORD' });
    const verified = dataOf(await verify(v, 'PASSWORD', { exchange_id: first.exchangeId, password: PASSWORD }));
    expect(verified).to.deep.equal({ status_id: first.statusId, sub: id });
    expect(await statusOf(first.statusId)).to.include({ status: 'AUTHENTICATED', method: 'PASSWORD' });
    const afterFirst = dataOf<Continued>(
      await continueLogin(v, { requestId, status_id: first.statusId, verificationType: 'PASSWORD', sub: id }),
    );
    expect(afterFirst).to.deep.equal({
      request_id: requestId,
      completed: false,
      stage: 1,
      next_methods: ['TOTP', 'SMS', 'BACKUPCODE', 'IVR'],
      redirect_to: `/login?request_id=${requestId}`,
    });
    expect(await statusOf(first.statusId)).to.include({ status: 'CONSUMED' });

    // Stage 2: TOTP by sub. The enrolment's code (its time step) cannot log in: replay.
    const second = await initiate(v, 'TOTP', requestId, { sub: id });
    expect(second.data).to.include({ sub: id });
    const replay = await verify(v, 'TOTP', { exchange_id: second.exchangeId, pass_code: enrolmentCode });
    expectError(replay, 401, 'VERIFICATION_FAILED');
    const code = await totpCode(started.secret, 1);
    expect(dataOf(await verify(v, 'TOTP', { exchange_id: second.exchangeId, pass_code: code }))).to.deep.equal({
      status_id: second.statusId,
      sub: id,
    });
    const done = await v.http
      .post('/login/continue')
      .type('form')
      .send({ requestId, status_id: second.statusId, verificationType: 'TOTP', sub: id });
    expect(done.status).to.equal(303);
    expect(done.headers.location).to.equal(`/login/complete?request_id=${requestId}`);
    expect(await statusOf(second.statusId)).to.include({ status: 'CONSUMED' });

    const flow = await flowOf(requestId);
    expect(flow).to.include({ status: 'completed', userId: id, stage: 2 });
    expect(flow.methods).to.deep.equal(['PASSWORD', 'TOTP']);
    expect(flow.amr).to.have.members(['pwd', 'otp']);
    expect(flow.authTime).to.be.instanceOf(Date);

    // The same TOTP code cannot be used again in another login.
    const again = await initiate(
      v,
      'TOTP',
      await atStageTwo(v, { id, username: 'lifecycle-alice', phone: '', email: '' }),
      {
        sub: id,
      },
    );
    expectError(
      await verify(v, 'TOTP', { exchange_id: again.exchangeId, pass_code: code }),
      401,
      'VERIFICATION_FAILED',
    );
  });

  it('continuing without Accept: application/json answers 303 to the next stage', async () => {
    const user = await passwordUser(v);
    const requestId = await v.flow();
    const statusId = await passwordStage(v, requestId, user);
    const res = await v.http.post('/login/continue').type('form').send({ requestId, status_id: statusId });
    expect(res.status).to.equal(303);
    expect(res.headers.location).to.equal(`/login?request_id=${requestId}`);
    expect(await flowOf(requestId)).to.include({ stage: 1, userId: user.id, status: 'active' });
  });

  it('a later stage is bound to the flow user: another sub → 400 INVALID_FIELD', async () => {
    const user = await passwordUser(v);
    const other = await passwordUser(v);
    const requestId = await atStageTwo(v, user);
    const res = await v.http
      .post('/verification-srv/authentication/SMS/initiation')
      .send({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: other.id });
    expectError(res, 400, 'INVALID_FIELD');
  });

  describe('BACKUPCODE', () => {
    const useCode = async (user: TestUser, code: string) => {
      const { exchangeId } = await initiate(v, 'BACKUPCODE', await atStageTwo(v, user), { sub: user.id });
      return verify(v, 'BACKUPCODE', { exchange_id: exchangeId, pass_code: code });
    };

    it('each code works once; regenerating invalidates the old set', async () => {
      const user = await passwordUser(v);
      const codes = await enrolBackupCodes(v, user.id);
      expect(codes).to.have.length(10);
      expect(new Set(codes).size).to.equal(10);

      const requestId = await atStageTwo(v, user);
      const { exchangeId, statusId } = await initiate(v, 'BACKUPCODE', requestId, { sub: user.id });
      dataOf(await verify(v, 'BACKUPCODE', { exchange_id: exchangeId, pass_code: codes[0] }));
      expect(dataOf<Continued>(await continueLogin(v, { requestId, status_id: statusId }))).to.include({
        completed: true,
      });
      expect((await flowOf(requestId)).amr).to.have.members(['pwd', 'otp']);

      expectError(await useCode(user, codes[0]!), 401, 'VERIFICATION_FAILED');
      // Typed in lower case without dashes, a code still counts.
      dataOf(await useCode(user, codes[1]!.replaceAll('-', '').toLowerCase()));

      const fresh = await enrolBackupCodes(v, user.id);
      expect(fresh.filter((c) => codes.includes(c))).to.deep.equal([]);
      expectError(await useCode(user, codes[2]!), 401, 'VERIFICATION_FAILED');
      dataOf(await useCode(user, fresh[0]!));
    });
  });

  describe('SMS', () => {
    it('a resend does not reset the failure count: 4 wrong, resend, 1 wrong → burned (429)', async () => {
      const user = await passwordUser(v);
      const requestId = await v.flow();
      const first = await initiate(v, 'SMS', requestId, { identifier: user.username });
      expect(first.data).to.not.have.property('medium_text');
      const firstCode = await lastCodeTo(user.phone, 'sms');
      for (let i = 0; i < 4; i++) {
        const res = await verify(v, 'SMS', { exchange_id: first.exchangeId, pass_code: otherCode(firstCode) });
        expectError(res, 401, 'VERIFICATION_FAILED');
      }
      const resent = await initiate(v, 'SMS', requestId, { identifier: user.username });
      const code = await lastCodeTo(user.phone, 'sms');
      const last = await verify(v, 'SMS', { exchange_id: resent.exchangeId, pass_code: otherCode(code) });
      expectError(last, 401, 'VERIFICATION_FAILED');
      expectError(
        await verify(v, 'SMS', { exchange_id: resent.exchangeId, pass_code: code }),
        429,
        'TOO_MANY_ATTEMPTS',
      );
      // Nor does one more resend: the new exchange starts burned.
      const third = await initiate(v, 'SMS', requestId, { identifier: user.username });
      const thirdCode = await lastCodeTo(user.phone, 'sms');
      expectError(
        await verify(v, 'SMS', { exchange_id: third.exchangeId, pass_code: thirdCode }),
        429,
        'TOO_MANY_ATTEMPTS',
      );
    });

    it('a second phone enrolled at setup is used when its medium_id is given', async () => {
      const user = await passwordUser(v);
      const extraPhone = '+4915112345678';
      const begun = dataOf(await setup(v, 'SMS', 'initiation', { sub: user.id, phone: extraPhone }));
      expect(begun).to.deep.include({ medium_text: '+4********5678' });
      // The confirmation may also come with this handle instead of a bearer (cidaas clients).
      expect(begun).to.have.nested.property('exchange_id.exchange_id').that.is.a('string');
      const enrolled = dataOf<{ medium_id: string }>(
        await setup(v, 'SMS', 'verification', { sub: user.id, pass_code: await lastCodeTo(extraPhone, 'sms') }),
      );
      const requestId = await atStageTwo(v, user);
      const sms = await initiate(v, 'SMS', requestId, { sub: user.id }, { medium_id: enrolled.medium_id });
      expect(sms.data).to.include({ medium_text: '+4********5678' });
      dataOf(await verify(v, 'SMS', { exchange_id: sms.exchangeId, pass_code: await lastCodeTo(extraPhone, 'sms') }));
      expect(dataOf<Continued>(await continueLogin(v, { requestId, status_id: sms.statusId }))).to.include({
        completed: true,
      });
      expect((await flowOf(requestId)).amr).to.have.members(['pwd', 'sms']);
    });
  });

  it('EMAIL at stage 1 and IVR at stage 2 send their codes through the channel', async () => {
    const user = await passwordUser(v);
    const requestId = await v.flow();
    const email = await initiate(v, 'EMAIL', requestId, { identifier: user.email });
    // Before the user is known (stage 1) no masked destination is shown (no enumeration).
    expect(email.data).to.not.have.property('medium_text');
    const mail = (await sentMessages()).filter((m) => m.to === user.email).at(-1)!;
    expect(mail).to.include({ kind: 'email', subject: 'Your verification code' });
    dataOf(
      await verify(v, 'EMAIL', { exchange_id: email.exchangeId, pass_code: await lastCodeTo(user.email, 'email') }),
    );
    dataOf(await continueLogin(v, { requestId, status_id: email.statusId }));

    const ivr = await initiate(v, 'IVR', requestId, { sub: user.id });
    dataOf(await verify(v, 'IVR', { exchange_id: ivr.exchangeId, pass_code: await lastCodeTo(user.phone, 'voice') }));
    expect(dataOf<Continued>(await continueLogin(v, { requestId, status_id: ivr.statusId }))).to.include({
      completed: true,
    });
    const flow = await flowOf(requestId);
    expect(flow.methods).to.deep.equal(['EMAIL', 'IVR']);
  });

  describe('no account enumeration', () => {
    it('an unknown identifier gets a normal-looking initiation, then the same 401 as a wrong password', async () => {
      const user = await passwordUser(v);
      const real = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      const ghost = await initiate(v, 'PASSWORD', await v.flow(), { identifier: 'no-such-person@example.test' });
      expect(Object.keys(ghost.data).sort()).to.deep.equal(Object.keys(real.data).sort());
      expect(ghost.exchangeId).to.have.length(real.exchangeId.length);
      expect(ghost.statusId).to.have.length(real.statusId.length);
      const wrong = await verify(v, 'PASSWORD', { exchange_id: real.exchangeId, password: WRONG_PASSWORD });
      const unknown = await verify(v, 'PASSWORD', { exchange_id: ghost.exchangeId, password: PASSWORD });
      expectError(wrong, 401, 'VERIFICATION_FAILED');
      expectError(unknown, 401, 'VERIFICATION_FAILED');
      expect(unknown.body.error.error).to.equal(wrong.body.error.error);
      // The phantom exchange also burns after max_attempts, like a real one.
      for (let i = 0; i < 4; i++) await verify(v, 'PASSWORD', { exchange_id: ghost.exchangeId, password: PASSWORD });
      const burned = await verify(v, 'PASSWORD', { exchange_id: ghost.exchangeId, password: PASSWORD });
      expectError(burned, 429, 'TOO_MANY_ATTEMPTS');
    });

    it('an unknown identifier gets the same SMS initiation fields as a real user', async () => {
      const user = await passwordUser(v);
      const real = await initiate(v, 'SMS', await v.flow(), { identifier: user.username });
      const ghost = await initiate(v, 'SMS', await v.flow(), { identifier: 'no-such-person' });
      expect(Object.keys(ghost.data).sort()).to.deep.equal(Object.keys(real.data).sort());
    });
  });

  describe('enrolment list and removal', () => {
    it('lists methods without secrets; removes one credential or all of a method', async () => {
      const user = await passwordUser(v);
      const secret = await enrolTotp(v, user.id);
      const codes = await enrolBackupCodes(v, user.id);
      const list = async () => {
        const res = await v.http.get(`/verification-actions-srv/setup/users/${user.id}/methods`).set(admin);
        return dataOf<{ method: string; enrolled: boolean; credentials: Record<string, unknown>[] }[]>(res);
      };
      const listed = await list();
      const byMethod = Object.fromEntries(listed.map((m) => [m.method, m]));
      expect(byMethod.PASSWORD).to.include({ enrolled: true });
      expect(byMethod.TOTP).to.include({ enrolled: true });
      expect(byMethod.SMS).to.include({ enrolled: true });
      expect(byMethod.BACKUPCODE!.credentials).to.have.length(10);
      for (const m of listed) {
        for (const c of m.credentials) expect(c).to.have.all.keys('id', 'type', 'label', 'created_at', 'used');
      }
      const text = JSON.stringify(listed);
      for (const secretText of [PASSWORD, secret, '$argon2', ...codes, ...codes.map((c) => c.replaceAll('-', ''))]) {
        expect(text).not.to.include(secretText);
      }

      const oneCode = byMethod.BACKUPCODE!.credentials[0]!.id as string;
      const removeOne = await v.http
        .delete(`/verification-actions-srv/setup/users/${user.id}/methods/BACKUPCODE/${oneCode}`)
        .set(admin);
      expect(dataOf(removeOne)).to.deep.equal({ removed: 1 });
      const again = await v.http
        .delete(`/verification-actions-srv/setup/users/${user.id}/methods/BACKUPCODE/${oneCode}`)
        .set(admin);
      expectError(again, 404, 'CREDENTIAL_NOT_FOUND');

      const removeTotp = await v.http
        .delete(`/verification-actions-srv/setup/users/${user.id}/methods/totp`)
        .set(admin);
      expect(dataOf(removeTotp)).to.deep.equal({ removed: 1 });
      const after = Object.fromEntries((await list()).map((m) => [m.method, m]));
      expect(after.TOTP).to.deep.include({ enrolled: false, credentials: [] });
      expect(after.BACKUPCODE!.credentials).to.have.length(9);

      const requestId = await atStageTwo(v, user);
      const res = await v.http
        .post('/verification-srv/authentication/TOTP/initiation')
        .send({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: user.id });
      expectError(res, 403, 'METHOD_NOT_ENABLED');
    });

    it('the list and removal endpoints need the admin token (401) and a known user (404)', async () => {
      const user = await passwordUser(v);
      const path = `/verification-actions-srv/setup/users/${user.id}/methods`;
      expectError(await v.http.get(path), 401, 'UNAUTHORIZED');
      expectError(await v.http.get(path).set('Authorization', 'Bearer wrong'), 401, 'UNAUTHORIZED');
      expectError(await v.http.delete(`${path}/PASSWORD`), 401, 'UNAUTHORIZED');
      expectError(
        await v.http.delete(`${path}/PASSWORD`).set('Authorization', `Basic ${ADMIN_TOKEN}`),
        401,
        'UNAUTHORIZED',
      );
      expectError(
        await v.http.get('/verification-actions-srv/setup/users/nobody/methods').set(admin),
        404,
        'USER_NOT_FOUND',
      );
      expectError(await v.http.delete(`${path}/CARRIER_PIGEON`).set(admin), 404, 'METHOD_NOT_FOUND');
      // The password still works: nothing was removed by the refused calls.
      await passwordStage(v, await v.flow(), user);
    });
  });

  describe('FDS step-up', () => {
    it('step_up at verification adds a stage with the app methods not used yet', async () => {
      const stepUp = await startVerificationApp(withFds({ stages: [['PASSWORD', 'SMS']] }));
      try {
        const user = await passwordUser(stepUp);
        const requestId = await stepUp.flow();
        const { exchangeId, statusId } = await initiate(stepUp, 'PASSWORD', requestId, { identifier: user.username });
        verdict.next = { action: 'step_up', reason: 'new device' };
        dataOf(await verify(stepUp, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }));
        verdict.next = { action: 'allow' };
        const next = dataOf<Continued>(await continueLogin(stepUp, { requestId, status_id: statusId }));
        expect(next).to.include({ completed: false, stage: 1 });
        expect(next.next_methods).to.deep.equal(['SMS']);

        const sms = await initiate(stepUp, 'SMS', requestId, { sub: user.id });
        dataOf(
          await verify(stepUp, 'SMS', { exchange_id: sms.exchangeId, pass_code: await lastCodeTo(user.phone, 'sms') }),
        );
        const done = dataOf<Continued>(await continueLogin(stepUp, { requestId, status_id: sms.statusId }));
        expect(done).to.include({ completed: true });
        const flow = (await stepUp.gatehouse.container.cradle.flows.get(requestId))!;
        expect(flow.stages).to.deep.equal([['PASSWORD', 'SMS'], ['SMS']]);
        expect(flow.amr).to.have.members(['pwd', 'sms']);
      } finally {
        await stepUp.close();
      }
    });

    it('step_up with no method left to ask for → 403 FDS_BLOCKED at the continuation', async () => {
      const only = await startVerificationApp(withFds({ stages: [['PASSWORD']] }));
      try {
        const user = await passwordUser(only);
        const requestId = await only.flow();
        const { exchangeId, statusId } = await initiate(only, 'PASSWORD', requestId, { identifier: user.username });
        verdict.next = { action: 'step_up', reason: 'new device' };
        dataOf(await verify(only, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }));
        expectError(await continueLogin(only, { requestId, status_id: statusId }), 403, 'FDS_BLOCKED');
        expect(await only.gatehouse.container.cradle.flows.get(requestId)).to.include({ status: 'active', stage: 0 });
      } finally {
        await only.close();
      }
    });

    it('step_up at initiation does not block', async () => {
      const user = await passwordUser(v);
      verdict.next = { action: 'step_up', reason: 'new network' };
      await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      expect(verdict.calls.map((c) => c.phase)).to.deep.equal(['initiation']);
    });
  });

  it('a method used at one stage is neither offered nor accepted at the next (SMS in both stages)', async () => {
    const user = await passwordUser(v, 'twice');
    const requestId = await v.flow();
    const sms = await initiate(v, 'SMS', requestId, { identifier: user.username });
    const { status_id } = dataOf<{ status_id: string }>(
      await verify(v, 'SMS', { exchange_id: sms.exchangeId, pass_code: await lastCodeTo(user.phone) }),
    );
    const next = dataOf<Continued>(await continueLogin(v, { requestId, status_id }));
    expect(next.next_methods).to.deep.equal(['TOTP', 'BACKUPCODE', 'IVR']);
    const again = await v.http
      .post('/verification-srv/authentication/SMS/initiation')
      .send({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: user.id });
    expectError(again, 403, 'METHOD_NOT_ENABLED');
  });
});
