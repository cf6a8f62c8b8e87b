/**
 * Issue 29: a method that sends a code sends again in the same stage only after
 * `verification.resend_interval_seconds`; the initiation says when (`resend_after`), a resend
 * too soon gets 429 RESEND_TOO_SOON with the wait, in `retry_after` and Retry-After. The
 * interval counts by the flow: at the first stage, real and unknown identifiers alike. A send
 * limit (`max_sends` per window) says when too: 429 TOO_MANY_SENDS with the wait.
 */
import { expect } from 'chai';
import { FakeClock } from '@gatehouse-auth/testing';
import { defaultPlugins, startVerificationApp, type VerificationApp } from './support.js';
import { atStageTwo, dataOf, enrolBackupCodes, expectError, passwordUser } from './steps.js';

describe('verification: the resend interval of code methods (issue 29)', () => {
  const clock = new FakeClock(new Date());
  let v: VerificationApp;
  before(async () => {
    v = await startVerificationApp({ clock, verification: { resend_interval_seconds: 30 } });
  });
  after(() => v?.close());

  const initiate = (method: string, requestId: string, who: Record<string, string>) =>
    v.http.post(`/verification-srv/authentication/${method}/initiation`).send({
      request_id: requestId,
      usage_type: 'sub' in who ? 'MULTIFACTOR_AUTHENTICATION' : 'INITIAL_AUTHENTICATION',
      ...who,
    });

  it('a second SMS within 30 s is refused with the seconds left; after them it is sent', async () => {
    const user = await passwordUser(v, 'resend');
    await enrolBackupCodes(v, user.id);
    const requestId = await atStageTwo(v, user);
    const first = await initiate('SMS', requestId, { sub: user.id });
    expect(dataOf(first)).to.include({ resend_after: 30 });
    clock.advance(12);
    const soon = await initiate('SMS', requestId, { sub: user.id });
    expectError(soon, 429, 'RESEND_TOO_SOON');
    expect(soon.body.error.details).to.deep.equal({ retry_after: 18 });
    expect(soon.headers['retry-after']).to.equal('18');
    // Another method of the stage has its own interval; a method that sends nothing has none.
    expect(dataOf(await initiate('IVR', requestId, { sub: user.id }))).to.include({ resend_after: 30 });
    expect(dataOf(await initiate('BACKUPCODE', requestId, { sub: user.id }))).to.not.have.property('resend_after');
    clock.advance(18);
    expect(dataOf(await initiate('SMS', requestId, { sub: user.id }))).to.include({ resend_after: 30 });
  });

  it('at the first stage, an unknown identifier waits as long as a real one', async () => {
    const user = await passwordUser(v, 'resend-first');
    for (const identifier of [user.phone, '+15550009999']) {
      const requestId = await v.flow();
      expect(dataOf(await initiate('SMS', requestId, { identifier }))).to.include({ resend_after: 30 });
      await v.gatehouse.idle();
      clock.advance(1);
      const soon = await initiate('SMS', requestId, { identifier });
      expectError(soon, 429, 'RESEND_TOO_SOON');
      expect(soon.body.error.details).to.deep.equal({ retry_after: 29 });
    }
  });

  it('without the setting there is no interval and no resend_after', async () => {
    const plain = await startVerificationApp();
    try {
      const user = await passwordUser(plain, 'no-interval');
      const requestId = await atStageTwo(plain, user);
      for (let i = 0; i < 2; i++) {
        const res = await plain.http
          .post('/verification-srv/authentication/SMS/initiation')
          .send({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: user.id });
        expect(dataOf(res)).to.not.have.property('resend_after');
      }
    } finally {
      await plain.close();
    }
  });

  it('a send limit says when a code may be sent again: 429 TOO_MANY_SENDS with retry_after and Retry-After', async () => {
    const own = new FakeClock(new Date());
    const limited = await startVerificationApp({
      clock: own,
      plugins: defaultPlugins().map((p) =>
        p.name === '@gatehouse-auth/method-sms'
          ? { ...p, options: { ...p.options, max_sends: 2, send_window_seconds: 600 } }
          : p,
      ),
    });
    try {
      const user = await passwordUser(limited, 'send-limit');
      const requestId = await atStageTwo(limited, user);
      const sms = () =>
        limited.http
          .post('/verification-srv/authentication/SMS/initiation')
          .send({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: user.id });
      expect((await sms()).status).to.equal(200);
      own.advance(100);
      expect((await sms()).status).to.equal(200);
      own.advance(50);
      // Two sends in the window: the first leaves it 600 s after it was sent, 450 s from now.
      const refused = await sms();
      expectError(refused, 429, 'TOO_MANY_SENDS');
      expect(refused.body.error.details).to.deep.equal({ retry_after: 450 });
      expect(refused.headers['retry-after']).to.equal('450');
      own.advance(449);
      expect((await sms()).body.error.details).to.deep.equal({ retry_after: 1 });
      own.advance(1);
      expect((await sms()).status).to.equal(200);
    } finally {
      await limited.close();
    }
  });
});
