import { expect } from 'chai';
import type { EventQuery, FdsRule, FdsVerdict, History, UserRecord } from '@gatehouse-auth/core';
import { fakeServices, fakeUser, fdsContext, registerWithFakes, type FakeServices } from '@gatehouse-auth/testing';
import plugin, { backoffSeconds, secondsLeft, velocityOptions } from '../src/index.js';

const HOME_IP = '203.0.113.10';

/** Window limits far away, so a test sees only the branch it is about. */
const noWindowLimits = {
  max_failures_per_user: 10_000,
  max_failures_per_ip: 10_000,
  max_failures_per_user_method: 10_000,
};

interface Setup {
  services: FakeServices;
  rule: FdsRule;
  user: UserRecord;
}

async function setup(options: Record<string, unknown> = {}): Promise<Setup> {
  const services = fakeServices();
  const { fdsRules } = await registerWithFakes(plugin, options, services);
  expect(fdsRules).to.have.length(1);
  return { services, rule: fdsRules[0]!, user: fakeUser() };
}

interface Where {
  method?: string;
  ip?: string;
  user?: UserRecord;
  /** The device key (hash of the hosted page's device cookie) of the request. */
  device?: string;
}

async function record(
  s: Setup,
  type: 'verification.failure' | 'verification.success',
  opts: Where = {},
): Promise<void> {
  await s.services.eventLog.record({
    type,
    key: opts.device ?? null,
    userId: (opts.user ?? s.user).id,
    method: opts.method ?? 'TOTP',
    ip: opts.ip ?? HOME_IP,
    clientId: 'test-client',
    reason: type === 'verification.failure' ? 'wrong_code' : null,
    data: { userAgent: 'ua', acceptLanguage: 'en', deviceId: null },
  });
}

/** Records `n` failures one second apart (the clock ends on the last one). */
async function failures(s: Setup, n: number, opts: Where = {}) {
  for (let i = 0; i < n; i++) {
    if (i > 0) s.services.clock.advance(1);
    await record(s, 'verification.failure', opts);
  }
}

function evaluate(s: Setup, opts: Where & { phase?: 'initiation' | 'verification' } = {}) {
  return s.rule.evaluate(
    fdsContext({
      services: s.services,
      user: opts.user ?? s.user,
      method: opts.method ?? 'TOTP',
      request: { ip: opts.ip ?? HOME_IP, deviceKey: opts.device ?? null },
      ...(opts.phase ? { phase: opts.phase } : {}),
    }),
  );
}

describe('@gatehouse-auth/fds-velocity', () => {
  describe('options', () => {
    it('has the documented defaults', () => {
      expect(velocityOptions.parse(undefined)).to.deep.equal({
        window_seconds: 900,
        max_failures_per_user: 30,
        max_failures_per_ip: 100,
        max_failures_per_user_method: 20,
        free_failures: 5,
        backoff_base_seconds: 1,
        backoff_max_seconds: 900,
        lockout_failures: 100,
      });
    });

    it('refuses a lockout above the NIST limit of 100', () => {
      const result = velocityOptions.safeParse({ lockout_failures: 101 });
      expect(result.success).to.equal(false);
      expect(result.error?.issues[0]?.path).to.deep.equal(['lockout_failures']);
    });

    it('refuses unknown keys and non-integers', () => {
      expect(velocityOptions.safeParse({ max_failure_per_user: 3 }).success).to.equal(false);
      expect(velocityOptions.safeParse({ window_seconds: 1.5 }).success).to.equal(false);
      expect(velocityOptions.safeParse({ max_failures_per_ip: 0 }).success).to.equal(false);
    });

    it('registers one rule with id "velocity"', async () => {
      const s = await setup();
      expect(s.rule.id).to.equal('velocity');
    });
  });

  describe('back-off helpers', () => {
    it('waits nothing before free failures, then doubles up to the maximum', () => {
      expect(backoffSeconds(0, 5, 1, 900)).to.equal(0);
      expect(backoffSeconds(4, 5, 1, 900)).to.equal(0);
      expect(backoffSeconds(5, 5, 1, 900)).to.equal(1);
      expect(backoffSeconds(6, 5, 1, 900)).to.equal(2);
      expect(backoffSeconds(10, 5, 3, 900)).to.equal(96);
      expect(backoffSeconds(15, 5, 1, 900)).to.equal(900);
      expect(backoffSeconds(5000, 5, 1, 900)).to.equal(900);
      expect(backoffSeconds(0, 0, 1, 900)).to.equal(0);
      expect(backoffSeconds(1, 0, 1, 900)).to.equal(2);
    });

    it('rounds the seconds left up and stops at zero', () => {
      const from = new Date('2026-01-01T00:00:00Z');
      expect(secondsLeft(from, 2, new Date('2026-01-01T00:00:00.500Z'))).to.equal(2);
      expect(secondsLeft(from, 2, new Date('2026-01-01T00:00:01.001Z'))).to.equal(1);
      expect(secondsLeft(from, 2, new Date('2026-01-01T00:00:02Z'))).to.equal(0);
      expect(secondsLeft(from, 2, new Date('2026-01-01T00:00:05Z'))).to.equal(0);
    });
  });

  describe('allow', () => {
    it('allows a user with no history, in both phases', async () => {
      const s = await setup();
      expect(await evaluate(s)).to.deep.equal({ action: 'allow' });
      expect(await evaluate(s, { phase: 'initiation' })).to.deep.equal({ action: 'allow' });
    });

    it('allows the free failures without waiting', async () => {
      const s = await setup(noWindowLimits);
      await failures(s, 4);
      expect(await evaluate(s)).to.deep.equal({ action: 'allow' });
    });
  });

  describe('growing back-off', () => {
    it('denies until the back-off after the newest failure has passed', async () => {
      const s = await setup(noWindowLimits);
      await failures(s, 5);
      expect(await evaluate(s)).to.deep.equal({ action: 'deny', reason: 'velocity.backoff', retryAfter: 1 });
      s.services.clock.advance(0.999);
      expect(await evaluate(s)).to.deep.equal({ action: 'deny', reason: 'velocity.backoff', retryAfter: 1 });
      s.services.clock.advance(0.001);
      expect(await evaluate(s)).to.deep.equal({ action: 'allow' });
    });

    it('doubles with each further failure', async () => {
      const s = await setup(noWindowLimits);
      await failures(s, 6);
      expect(await evaluate(s)).to.deep.equal({ action: 'deny', reason: 'velocity.backoff', retryAfter: 2 });
      s.services.clock.advance(3);
      await record(s, 'verification.failure');
      expect(await evaluate(s)).to.deep.equal({ action: 'deny', reason: 'velocity.backoff', retryAfter: 4 });
      s.services.clock.advance(2.5);
      expect(await evaluate(s)).to.deep.equal({ action: 'deny', reason: 'velocity.backoff', retryAfter: 2 });
      s.services.clock.advance(1.5);
      expect(await evaluate(s)).to.deep.equal({ action: 'allow' });
    });

    it('never waits longer than backoff_max_seconds', async () => {
      const s = await setup({ ...noWindowLimits, backoff_base_seconds: 10, backoff_max_seconds: 60 });
      await failures(s, 12);
      expect(await evaluate(s)).to.deep.equal({ action: 'deny', reason: 'velocity.backoff', retryAfter: 60 });
      s.services.clock.advance(60);
      expect(await evaluate(s)).to.deep.equal({ action: 'allow' });
    });

    it('applies at initiation too', async () => {
      const s = await setup(noWindowLimits);
      await failures(s, 5);
      expect(await evaluate(s, { phase: 'initiation' })).to.deep.equal({
        action: 'deny',
        reason: 'velocity.backoff',
        retryAfter: 1,
      });
    });

    it('counts failures of the factor only: another method and another user are unaffected', async () => {
      const s = await setup(noWindowLimits);
      await failures(s, 8, { method: 'SMS' });
      expect(await evaluate(s, { method: 'TOTP' })).to.deep.equal({ action: 'allow' });
      expect(await evaluate(s, { user: fakeUser({ username: 'bob' }), method: 'SMS' })).to.deep.equal({
        action: 'allow',
      });
      expect((await evaluate(s, { method: 'SMS' })).reason).to.equal('velocity.backoff');
    });
  });

  describe('a success resets its own factor only', () => {
    it('clears the back-off of the method that succeeded and keeps the other', async () => {
      const s = await setup(noWindowLimits);
      await failures(s, 7, { method: 'TOTP' });
      await failures(s, 7, { method: 'SMS' });
      s.services.clock.advance(1);
      await record(s, 'verification.success', { method: 'TOTP' });
      expect(await evaluate(s, { method: 'TOTP' })).to.deep.equal({ action: 'allow' });
      expect(await evaluate(s, { method: 'SMS' })).to.deep.equal({
        action: 'deny',
        reason: 'velocity.backoff',
        retryAfter: 3,
      });
    });

    it('counts again from the success: the free failures are free again', async () => {
      const s = await setup(noWindowLimits);
      await failures(s, 10);
      s.services.clock.advance(600);
      await record(s, 'verification.success');
      s.services.clock.advance(1);
      await failures(s, 4);
      expect(await evaluate(s)).to.deep.equal({ action: 'allow' });
      s.services.clock.advance(1);
      await record(s, 'verification.failure');
      expect(await evaluate(s)).to.deep.equal({ action: 'deny', reason: 'velocity.backoff', retryAfter: 1 });
    });
  });

  describe('NIST 800-63B lockout', () => {
    /** Failures far enough apart that the back-off (max 900 s) has always passed. */
    async function spacedFailures(s: Setup, n: number, method = 'TOTP') {
      for (let i = 0; i < n; i++) {
        s.services.clock.advance(1000);
        await record(s, 'verification.failure', { method });
      }
      s.services.clock.advance(1000);
    }

    it('allows the 100th consecutive attempt and blocks the 101st', async () => {
      const s = await setup();
      await spacedFailures(s, 99);
      expect(await evaluate(s)).to.deep.equal({ action: 'allow' });
      await record(s, 'verification.failure');
      s.services.clock.advance(86_400 * 30);
      expect(await evaluate(s)).to.deep.equal({ action: 'deny', reason: 'velocity.factor_locked' });
      expect(await evaluate(s, { phase: 'initiation' })).to.deep.equal({
        action: 'deny',
        reason: 'velocity.factor_locked',
      });
    });

    it('locks only that factor; a success on another method does not unlock it', async () => {
      const s = await setup({ lockout_failures: 3, free_failures: 10 });
      await spacedFailures(s, 3, 'SMS');
      await record(s, 'verification.success', { method: 'TOTP' });
      expect(await evaluate(s, { method: 'SMS' })).to.deep.equal({ action: 'deny', reason: 'velocity.factor_locked' });
      expect(await evaluate(s, { method: 'TOTP' })).to.deep.equal({ action: 'allow' });
    });

    it("an operator's unlock (factor.unlocked) resets the locked factor only", async () => {
      const s = await setup({ lockout_failures: 3, free_failures: 10 });
      await spacedFailures(s, 3, 'SMS');
      await spacedFailures(s, 3, 'TOTP');
      s.services.clock.advance(1);
      await s.services.eventLog.record({ type: 'factor.unlocked', userId: s.user.id, method: 'SMS' });
      expect(await evaluate(s, { method: 'SMS' })).to.deep.equal({ action: 'allow' });
      expect(await evaluate(s, { method: 'TOTP' })).to.deep.equal({ action: 'deny', reason: 'velocity.factor_locked' });
    });

    it('honours a lower lockout_failures exactly at the threshold', async () => {
      const s = await setup({ lockout_failures: 3, free_failures: 10 });
      await spacedFailures(s, 2);
      expect(await evaluate(s)).to.deep.equal({ action: 'allow' });
      await record(s, 'verification.failure');
      expect(await evaluate(s)).to.deep.equal({ action: 'deny', reason: 'velocity.factor_locked' });
    });
  });

  describe('sliding window', () => {
    const lenient = { free_failures: 100, ...noWindowLimits };

    it('denies a user with more than max_failures_per_user in the window, across methods', async () => {
      const s = await setup({ ...lenient, max_failures_per_user: 3 });
      await record(s, 'verification.failure', { method: 'TOTP' });
      s.services.clock.advance(10);
      await record(s, 'verification.failure', { method: 'SMS' });
      s.services.clock.advance(10);
      await record(s, 'verification.failure', { method: 'EMAIL' });
      expect(await evaluate(s)).to.deep.equal({ action: 'allow' });
      s.services.clock.advance(10);
      await record(s, 'verification.failure', { method: 'PASSWORD' });
      // The oldest failure (30 s ago) leaves the 900 s window in 870 s.
      expect(await evaluate(s)).to.deep.equal({ action: 'deny', reason: 'velocity.user', retryAfter: 870 });
      s.services.clock.advance(870);
      expect(await evaluate(s)).to.deep.equal({ action: 'deny', reason: 'velocity.user', retryAfter: 1 });
      s.services.clock.advance(0.001);
      expect(await evaluate(s)).to.deep.equal({ action: 'allow' });
    });

    it('does not count other users for max_failures_per_user', async () => {
      const s = await setup({ ...lenient, max_failures_per_user: 3 });
      await failures(s, 5, { user: fakeUser({ username: 'bob' }), method: 'SMS', ip: '198.51.100.7' });
      expect(await evaluate(s)).to.deep.equal({ action: 'allow' });
    });

    it('denies an IP with more than max_failures_per_ip in the window, across users', async () => {
      const s = await setup({ ...lenient, max_failures_per_ip: 2 });
      for (const username of ['bob', 'carol', 'dave']) {
        await record(s, 'verification.failure', { user: fakeUser({ username }), ip: '198.51.100.7' });
      }
      expect(await evaluate(s, { ip: '198.51.100.7' })).to.deep.equal({
        action: 'deny',
        reason: 'velocity.ip',
        retryAfter: 900,
      });
      expect(await evaluate(s, { ip: '198.51.100.8' })).to.deep.equal({ action: 'allow' });
    });

    it('denies a factor with more than max_failures_per_user_method in the window', async () => {
      const s = await setup({ ...lenient, max_failures_per_user_method: 2 });
      await failures(s, 3, { method: 'TOTP' });
      expect(await evaluate(s, { method: 'TOTP' })).to.deep.equal({
        action: 'deny',
        reason: 'velocity.user_method',
        retryAfter: 898,
      });
      expect(await evaluate(s, { method: 'SMS' })).to.deep.equal({ action: 'allow' });
    });

    it('forgets failures older than the window', async () => {
      const s = await setup({ ...lenient, window_seconds: 60, max_failures_per_user: 2 });
      await failures(s, 3);
      s.services.clock.advance(61);
      await record(s, 'verification.failure');
      expect(await evaluate(s)).to.deep.equal({ action: 'allow' });
    });

    it('a success does not empty the window', async () => {
      const s = await setup({ ...lenient, max_failures_per_user: 2 });
      await failures(s, 3);
      s.services.clock.advance(1);
      await record(s, 'verification.success');
      expect((await evaluate(s)).reason).to.equal('velocity.user');
    });

    it('uses the default limits: the 31st failure of a user in 15 minutes trips velocity.user', async () => {
      const s = await setup({ free_failures: 100 });
      const methods = ['TOTP', 'SMS'];
      for (let i = 0; i < 30; i++) {
        await record(s, 'verification.failure', { method: methods[i % 2]! });
        s.services.clock.advance(1);
      }
      expect(await evaluate(s, { method: 'EMAIL' })).to.deep.equal({ action: 'allow' });
      await record(s, 'verification.failure', { method: 'EMAIL' });
      expect((await evaluate(s, { method: 'EMAIL' })).reason).to.equal('velocity.user');
    });
  });

  describe('queries', () => {
    it('bounds every history query and reads only verification and unlock events', async () => {
      const s = await setup({ max_failures_per_user: 2 });
      await failures(s, 10);
      s.services.clock.advance(32); // past the back-off, so the window queries run too
      const seen: { kind: 'count' | 'recent'; query: EventQuery }[] = [];
      const spy: History = {
        count: (query) => (seen.push({ kind: 'count', query }), s.services.history.count(query)),
        recent: (query) => (seen.push({ kind: 'recent', query }), s.services.history.recent(query)),
      };
      const ctx = { ...fdsContext({ services: s.services, user: s.user, method: 'TOTP' }), history: spy };
      const verdict: FdsVerdict = await s.rule.evaluate(ctx);
      expect(verdict).to.deep.equal({ action: 'deny', reason: 'velocity.user', retryAfter: 866 }); // the 3rd newest failure (t+7) leaves at t+907; now is t+41
      expect(seen.map((q) => q.kind)).to.deep.equal(['recent', 'count', 'recent', 'count', 'count', 'count', 'recent']);
      for (const { kind, query } of seen) {
        expect(query.limit, `${kind} ${JSON.stringify(query)}`)
          .to.be.a('number')
          .and.at.most(101);
        expect(query.types).to.satisfy((types: string[]) =>
          types.every((t) => ['verification.failure', 'verification.success', 'factor.unlocked'].includes(t)),
        );
      }
    });
  });

  describe('strangers cannot lock the user out of a known device (issue 8)', () => {
    const HOME = 'device-key-home';
    const STRANGER_IP = '198.51.100.7';

    it('failures from unknown devices back off every unknown device, but not a device the user proved the factor from', async () => {
      const s = await setup(noWindowLimits);
      await record(s, 'verification.success', { device: HOME });
      s.services.clock.advance(60);
      await failures(s, 8, { ip: STRANGER_IP });
      // Strangers share one count: switching address or device does not help them.
      expect(await evaluate(s, { ip: STRANGER_IP })).to.include({ action: 'deny', reason: 'velocity.backoff' });
      expect(await evaluate(s, { ip: '192.0.2.99', device: 'fresh-device' })).to.include({ action: 'deny' });
      // The user's own browser goes through.
      expect(await evaluate(s, { device: HOME })).to.deep.equal({ action: 'allow' });
    });

    it('a known device has its own back-off and its own lock', async () => {
      const s = await setup({ ...noWindowLimits, lockout_failures: 10 });
      await record(s, 'verification.success', { device: HOME });
      await failures(s, 7, { device: HOME });
      expect(await evaluate(s, { device: HOME })).to.include({ action: 'deny', reason: 'velocity.backoff' });
      s.services.clock.advance(3600);
      await failures(s, 3, { device: HOME });
      expect(await evaluate(s, { device: HOME })).to.include({ action: 'deny', reason: 'velocity.factor_locked' });
    });

    it('the NIST lock at lockout_failures holds strangers, while the known device still signs in', async () => {
      const s = await setup({ ...noWindowLimits, lockout_failures: 100 });
      await record(s, 'verification.success', { device: HOME });
      await failures(s, 100, { ip: STRANGER_IP });
      s.services.clock.advance(3600);
      expect(await evaluate(s, { ip: STRANGER_IP })).to.include({ reason: 'velocity.factor_locked' });
      expect(await evaluate(s, { device: HOME })).to.deep.equal({ action: 'allow' });
    });

    it('a device is known per factor: a password success does not make it known for TOTP', async () => {
      const s = await setup(noWindowLimits);
      await record(s, 'verification.success', { method: 'PASSWORD', device: HOME });
      await failures(s, 8, { ip: STRANGER_IP });
      expect(await evaluate(s, { device: HOME })).to.include({ action: 'deny', reason: 'velocity.backoff' });
    });

    it("the per-user window counts only the known device's own failures for it", async () => {
      const s = await setup({ max_failures_per_user: 3, max_failures_per_user_method: 3, free_failures: 1000 });
      await record(s, 'verification.success', { device: HOME });
      await failures(s, 5, { ip: STRANGER_IP });
      expect(await evaluate(s, { ip: '192.0.2.1' })).to.include({ action: 'deny', reason: 'velocity.user' });
      expect(await evaluate(s, { device: HOME })).to.deep.equal({ action: 'allow' });
    });
  });
});
