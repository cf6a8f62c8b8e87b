/**
 * Security notices to users (SECURITY-CHECKLIST §7 TOTP 1: "reuse is logged and the user
 * notified"; §8.6: FDS decisions notify the user): a reused TOTP code, a sign-in blocked or
 * challenged by FDS. Delivered through a real registered channel, throttled per user and kind,
 * never changing the answer of the request that triggered them. The core's security events
 * (`api.securityEvents`) heard by @gatehouse-auth/notices-security.
 */
import path from 'node:path';
import { expect } from 'chai';
import { buildApp, createLogger, parseConfig, type SecurityEvent, type StoredEvent } from '@gatehouse-auth/core';
import {
  CAPTURE_CHANNEL,
  SCRIPTED_FDS,
  atStageTwo,
  dataOf,
  enrolTotp,
  expectError,
  initiate,
  passwordUser,
  resetVerdict,
  setup,
  scriptedVerdict,
  sentMessages,
  totpCode,
  verify,
  type SentMessage,
  type TestUser,
} from '../../../test/verification/steps.js';
import {
  FIXTURES,
  defaultPlugins,
  startVerificationApp,
  type AppOptions,
  type VerificationApp,
} from '../../../test/verification/support.js';
import { SecurityNotifier } from '../src/index.js';

const FAILING_CHANNEL = path.join(FIXTURES, 'failing-channel.js');

describe('security notices to users', function () {
  this.timeout(20_000);

  /** Messages to `to` that are notices (not one-time codes). */
  const noticesTo = async (to: string): Promise<SentMessage[]> =>
    (await sentMessages()).filter(
      (m) => m.to === to && /Sign-in alert|sign in|sign-in/i.test(`${m.subject} ${m.text}`),
    );

  const noticeEvents = (v: VerificationApp, userId: string): Promise<StoredEvent[]> =>
    v.gatehouse.container.cradle.events.recent({
      types: ['notification.sent', 'notification.failed', 'notification.skipped'],
      userId,
      limit: 20,
    });

  const settled = (v: VerificationApp) => v.gatehouse.container.cradle.securityEvents.drain();

  /** The core's event, as the verification service emits it. */
  const blocked = (user: SecurityEvent['user'], facts: Omit<SecurityEvent, 'type' | 'user' | 'at'>): SecurityEvent => ({
    type: 'sign_in_blocked',
    user,
    ...facts,
    at: new Date(),
  });

  /** A login up to stage 2, then TOTP with `code`: the verification's answer. */
  async function totpAtStageTwo(v: VerificationApp, user: TestUser, code: string) {
    const requestId = await atStageTwo(v, user);
    const { exchangeId } = await initiate(v, 'TOTP', requestId, { sub: user.id });
    return verify(v, 'TOTP', { exchange_id: exchangeId, pass_code: code });
  }

  /**
   * Signs in once with the next step's code (enrolment spent the current one at most), then
   * presents the same code again: a replay, whatever step boundary passes in between.
   */
  async function reuseTotp(v: VerificationApp, user: TestUser, times = 1) {
    const secret = await enrolTotp(v, user.id);
    const code = await totpCode(secret, 1);
    dataOf(await totpAtStageTwo(v, user, code));
    for (let i = 1; i < times; i++) expectError(await totpAtStageTwo(v, user, code), 401, 'VERIFICATION_FAILED');
    return totpAtStageTwo(v, user, code);
  }

  describe('with an email and an SMS channel', () => {
    let v: VerificationApp;
    const plugins: AppOptions['plugins'] = [...defaultPlugins(), { path: SCRIPTED_FDS }];
    before(async () => {
      v = await startVerificationApp({
        plugins,
        verification: { fds_rules: ['scripted'] },
        notifications: { email_channel: 'capture', sms_channel: 'capture' },
      });
    });
    after(() => v?.close());
    beforeEach(() => resetVerdict());

    it('a reused TOTP code: the answer is still 401 VERIFICATION_FAILED, and the user gets one email', async () => {
      const user = await passwordUser(v, 'reuse');
      expectError(await reuseTotp(v, user), 401, 'VERIFICATION_FAILED');
      await settled(v);
      const notices = await noticesTo(user.email);
      expect(notices).to.have.length(1);
      expect(notices[0]!.kind).to.equal('email');
      expect(notices[0]!.subject).to.equal('Sign-in alert: a one-time code was used again');
      expect(notices[0]!.text).to.match(/with a TOTP code that had already been used/);
      expect(notices[0]!.text).to.not.match(/\b\d{6}\b/); // never the code itself
      const events = await noticeEvents(v, user.id);
      expect(events.map((e) => [e.type, e.outcome, e.method])).to.deep.equal([
        ['notification.sent', 'code_reuse', 'TOTP'],
      ]);
    });

    it('a second reuse within min_interval_seconds sends nothing more', async () => {
      const user = await passwordUser(v, 'twice');
      expectError(await reuseTotp(v, user, 2), 401, 'VERIFICATION_FAILED');
      await settled(v);
      expect(await noticesTo(user.email)).to.have.length(1);
      expect(await noticeEvents(v, user.id)).to.have.length(1);
    });

    it('a plain wrong code is not a reuse: no notice', async () => {
      const user = await passwordUser(v, 'wrong');
      const secret = await enrolTotp(v, user.id);
      expectError(await totpAtStageTwo(v, user, await totpCode(secret, 5)), 401, 'VERIFICATION_FAILED');
      await settled(v);
      expect(await noticesTo(user.email)).to.deep.equal([]);
    });

    it('an FDS deny at stage 2: 403 FDS_BLOCKED, and the user is told the sign-in was blocked', async () => {
      const user = await passwordUser(v, 'denied');
      await enrolTotp(v, user.id);
      const requestId = await atStageTwo(v, user);
      (await scriptedVerdict()).next = { action: 'deny', reason: 'impossible_travel' };
      const res = await v.http
        .post('/verification-srv/authentication/TOTP/initiation')
        .send({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: user.id });
      expectError(res, 403, 'FDS_BLOCKED');
      await settled(v);
      const notices = await noticesTo(user.email);
      expect(notices.map((m) => m.subject)).to.deep.equal(['Sign-in alert: a sign-in to your account was blocked']);
      expect(notices[0]!.text).to.match(/was blocked by our security checks/);
    });

    it('in the language of the sign-in (issue 29): a German browser gets the German notice', async () => {
      const user = await passwordUser(v, 'deutsch');
      await enrolTotp(v, user.id);
      const requestId = await atStageTwo(v, user);
      (await scriptedVerdict()).next = { action: 'deny', reason: 'impossible_travel' };
      const res = await v.http
        .post('/verification-srv/authentication/TOTP/initiation')
        .set('Accept-Language', 'de-DE,de;q=0.9')
        .send({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: user.id });
      expectError(res, 403, 'FDS_BLOCKED');
      await settled(v);
      const [notice] = (await sentMessages()).filter(
        (m) => m.to === user.email && /Anmeldewarnung/.test(m.subject ?? ''),
      );
      expect(notice, 'a German notice').to.not.equal(undefined);
      expect(notice!.subject).to.equal('Anmeldewarnung: eine Anmeldung bei Ihrem Konto wurde blockiert');
      expect(notice!.text).to.match(/wurde von unseren Sicherheitsprüfungen blockiert/);
      expect((notice as { locale?: string }).locale).to.equal('de');
    });

    it('an FDS step-up: the sign-in goes on, and the user is told it needed an extra check', async () => {
      const user = await passwordUser(v, 'stepup');
      const requestId = await v.flow();
      const { exchangeId } = await initiate(v, 'PASSWORD', requestId, { identifier: user.username });
      (await scriptedVerdict()).next = { action: 'step_up', reason: 'new_device' };
      dataOf(await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: 'correct horse battery staple 42' }));
      await settled(v);
      const notices = await noticesTo(user.email);
      expect(notices.map((m) => m.subject)).to.deep.equal(['Sign-in alert: a sign-in needed an extra check']);
    });

    it('a new password: the user is told, with the ways to sign in set up since the last sign-in began (issue 25)', async () => {
      const user = await passwordUser(v, 'newpass');
      // A sign-in, during which someone with the old password (or the login's URL) adds TOTP.
      await atStageTwo(v, user);
      await enrolTotp(v, user.id);
      dataOf(await setup(v, 'PASSWORD', 'initiation', { sub: user.id, password: 'a brand new password 1234' }));
      await settled(v);
      const notices = (await sentMessages()).filter((m) => m.to === user.email && /password/i.test(m.subject ?? ''));
      expect(notices.map((m) => m.subject)).to.deep.equal(['Security alert: your password was changed']);
      const text = notices[0]!.text;
      expect(text).to.match(/every session and app signed in with the old one was signed out/);
      expect(text).to.match(
        /Ways to sign in set up since your last sign-in began \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\):\n- TOTP/,
      );
      expect(text).to.not.match(/- PASSWORD/);
      expect(text).to.not.include('a brand new password');
      const events = await noticeEvents(v, user.id);
      expect(events.map((e) => [e.type, e.outcome])).to.deep.equal([['notification.sent', 'password_changed']]);
    });

    it('a new password with nothing else set up since the last sign-in says so', async () => {
      const user = await passwordUser(v, 'quietpass');
      await atStageTwo(v, user);
      dataOf(await setup(v, 'PASSWORD', 'initiation', { sub: user.id, password: 'a brand new password 1234' }));
      await settled(v);
      const [notice] = (await sentMessages()).filter((m) => m.to === user.email && /password/i.test(m.subject ?? ''));
      expect(notice!.text).to.match(/No other way to sign in was set up since your last sign-in began/);
    });

    it('a step-up verdict before any right proof tells the user nothing (no false "extra check")', async () => {
      const user = await passwordUser(v, 'noproof');
      (await scriptedVerdict()).next = { action: 'step_up', reason: 'new_device' };
      const requestId = await v.flow();
      const { exchangeId } = await initiate(v, 'PASSWORD', requestId, { identifier: user.username });
      expectError(
        await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: 'not the password at all' }),
        401,
        'VERIFICATION_FAILED',
      );
      await settled(v);
      expect(await noticesTo(user.email)).to.deep.equal([]);
    });

    it('a burst of concurrent triggers sends one notice', async () => {
      const user = await passwordUser(v, 'burst');
      const { securityEvents, users } = v.gatehouse.container.cradle;
      const record = (await users.findById(user.id))!;
      const facts = {
        method: 'PASSWORD',
        clientId: 'app1',
        request: {
          ip: '198.51.100.7',
          userAgent: '',
          acceptLanguage: '',
          deviceId: null,
          deviceKey: null,
          requestId: 'r',
        },
      };
      for (let i = 0; i < 10; i++) securityEvents.emit(blocked(record, facts));
      await settled(v);
      expect(await noticesTo(user.email)).to.have.length(1);
      expect(await noticeEvents(v, user.id)).to.have.length(1);
    });

    it('an unknown identifier refused by FDS at the first stage notifies nobody', async () => {
      const before = (await sentMessages()).length;
      (await scriptedVerdict()).next = { action: 'deny', reason: 'bad_ip' };
      const requestId = await v.flow();
      await initiate(v, 'PASSWORD', requestId, { identifier: 'nobody-at-all' });
      await settled(v);
      expect((await sentMessages()).slice(before)).to.deep.equal([]);
    });

    it('a user without an email gets the notice by SMS; one with neither is recorded as skipped', async () => {
      const phoneOnly = await v.user(`phone-only-${process.pid}`, { phone: '+15557770001' });
      const nothing = await v.user(`no-contact-${process.pid}`);
      const { securityEvents } = v.gatehouse.container.cradle;
      const facts = {
        method: 'PASSWORD',
        clientId: 'app1',
        request: {
          ip: '198.51.100.9',
          userAgent: '',
          acceptLanguage: '',
          deviceId: null,
          deviceKey: null,
          requestId: 'r1',
        },
      };
      const users = v.gatehouse.container.cradle.users;
      securityEvents.emit(blocked((await users.findById(phoneOnly))!, facts));
      securityEvents.emit(blocked((await users.findById(nothing))!, facts));
      await settled(v);
      const sms = (await sentMessages()).filter((m) => m.to === '+15557770001');
      expect(sms.map((m) => m.kind)).to.deep.equal(['sms']);
      expect(sms[0]!.text).to.match(/from 198\.51\.100\.9 was blocked/);
      expect((await noticeEvents(v, nothing)).map((e) => [e.type, e.reason])).to.deep.equal([
        ['notification.skipped', 'no_destination'],
      ]);
    });
  });

  it('a channel that fails: the verification answers as usual and notification.failed is recorded', async () => {
    const v = await startVerificationApp({
      plugins: [...defaultPlugins(), { path: FAILING_CHANNEL }],
      notifications: { email_channel: 'broken' },
    });
    try {
      const user = await passwordUser(v, 'broken');
      expectError(await reuseTotp(v, user), 401, 'VERIFICATION_FAILED');
      await settled(v);
      const events = await noticeEvents(v, user.id);
      expect(events.map((e) => [e.type, e.reason])).to.deep.equal([['notification.failed', 'provider said 503']]);
      const { attempts } = (await import(FAILING_CHANNEL)) as { attempts: SentMessage[] };
      expect(attempts.filter((m) => m.to === user.email)).to.have.length(1);
    } finally {
      await v.close();
    }
  });

  it('without a configured channel nothing is sent', async () => {
    const v = await startVerificationApp();
    try {
      const user = await passwordUser(v, 'silent');
      expectError(await reuseTotp(v, user), 401, 'VERIFICATION_FAILED');
      await settled(v);
      expect(await noticesTo(user.email)).to.deep.equal([]);
      expect(await noticeEvents(v, user.id)).to.deep.equal([]);
    } finally {
      await v.close();
    }
  });

  it('a provider that never answers: the send gives up, notification.failed is recorded, drain ends', async () => {
    const { FakeClock } = await import('@gatehouse-auth/testing');
    const recorded: { type: string; reason?: string | null }[] = [];
    const notifier = new SecurityNotifier({
      options: { email_channel: 'hang', min_interval_seconds: 900 },
      channels: { deliver: () => new Promise<void>(() => {}) },
      events: { record: async (e: { type: string; reason?: string | null }) => void recorded.push(e) },
      history: { count: async () => 0, recent: async () => [] },
      clock: new FakeClock(new Date('2026-11-22T10:00:00Z')),
      logger: createLogger('silent'),
      claims: { hit: async () => null },
      sendTimeoutMs: 50,
    });
    const user = { id: 'u-1', username: 'u', email: 'u@example.test', phone: null, status: 'active' as const };
    const facts = {
      method: 'TOTP',
      clientId: 'app1',
      request: { ip: '', userAgent: '', acceptLanguage: '', deviceId: null, deviceKey: null, requestId: 'r' },
    };
    await notifier.notify(user, 'code_reuse', facts);
    expect(recorded.map((e) => [e.type, e.reason])).to.deep.equal([
      ['notification.failed', 'no answer from the provider within 50 ms'],
    ]);
  });

  describe('start-up checks', () => {
    const boot = (notifications: Record<string, unknown>) =>
      buildApp(
        parseConfig(
          {
            database: { url: 'sqlite::memory:' },
            log: { level: 'silent' },
            secrets: { encryption_key: Buffer.alloc(32, 7).toString('base64') },
            plugins: [
              { path: CAPTURE_CHANNEL },
              { path: FAILING_CHANNEL },
              { name: '@gatehouse-auth/notices-security', options: notifications },
            ],
          },
          {},
        ),
        { logger: createLogger('silent') },
      ).then(
        async (g) => {
          await g.close();
          return null;
        },
        (err: Error & { code?: string }) => err,
      );

    it('an unknown channel id stops start-up, naming the key', async () => {
      const err = await boot({ email_channel: 'nope' });
      expect([err?.code, err?.message]).to.deep.equal([
        'PLUGIN_CHECK_FAILED',
        'plugin @gatehouse-auth/notices-security (plugins[2]): options.email_channel: no delivery channel "nope" is registered',
      ]);
    });

    it('a channel that does not deliver the kind stops start-up; matching channels start', async () => {
      const err = await boot({ sms_channel: 'broken' }); // "broken" delivers email only
      expect([err?.code, err?.message]).to.deep.equal([
        'PLUGIN_CHECK_FAILED',
        'plugin @gatehouse-auth/notices-security (plugins[2]): options.sms_channel: channel "broken" does not deliver sms',
      ]);
      expect(await boot({ email_channel: 'broken', sms_channel: 'capture' })).to.equal(null);
    });
  });
});

describe('@gatehouse-auth/notices-security options (issue 26)', () => {
  const config = (extra: Record<string, unknown>) => ({
    database: { url: 'sqlite::memory:' },
    log: { level: 'silent' },
    secrets: { encryption_key: Buffer.alloc(32, 7).toString('base64') },
    ...extra,
  });

  it('refuses the former core notifications: section at start-up, naming the plugin', () => {
    expect(() => parseConfig(config({ notifications: { email_channel: 'outbox' } }), {})).to.throw(
      'notifications: the security notices to users are now the plugin @gatehouse-auth/notices-security; list it under plugins: with these keys as its options',
    );
  });

  it('refuses the plugin without a channel: it would tell nobody anything', async () => {
    const err = await buildApp(
      parseConfig(config({ plugins: [{ path: CAPTURE_CHANNEL }, { name: '@gatehouse-auth/notices-security' }] }), {}),
      { logger: createLogger('silent') },
    ).then(
      async (g) => {
        await g.close();
        return null;
      },
      (e: Error & { code?: string }) => e,
    );
    expect([err?.code, err?.message]).to.deep.equal([
      'PLUGIN_OPTIONS_INVALID',
      'plugin @gatehouse-auth/notices-security: plugins[1].options: needs email_channel or sms_channel (or both)',
    ]);
  });
});
