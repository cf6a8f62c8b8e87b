import { expect } from 'chai';
import type { EventQuery, FdsRule, History, RequestFacts, UserRecord } from '@gatehouse-auth/core';
import { fakeServices, fakeUser, fdsContext, registerWithFakes, type FakeServices } from '@gatehouse-auth/testing';
import plugin, { newContextOptions } from '../src/index.js';
import { UA } from './user-agents.js';

/** The context every past success in these tests was seen in (matches fakeRequest's defaults). */
const HOME: Partial<RequestFacts> = {
  ip: '203.0.113.10',
  userAgent: UA.chrome120Linux,
  acceptLanguage: 'en-US,en;q=0.9',
  deviceId: null,
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

type Seen = Partial<RequestFacts> & { method?: string; user?: UserRecord };

/** Records a verification event in `seen` (HOME by default) at the clock's time, then moves the clock a minute. */
async function record(s: Setup, seen: Seen = {}, type = 'verification.success'): Promise<void> {
  const facts = { ...HOME, ...seen };
  await s.services.eventLog.record({
    type,
    userId: (seen.user ?? s.user).id,
    method: seen.method ?? 'TOTP',
    ip: facts.ip ?? null,
    clientId: 'test-client',
    data: {
      userAgent: facts.userAgent ?? '',
      acceptLanguage: facts.acceptLanguage ?? '',
      deviceId: facts.deviceId ?? null,
    },
  });
  s.services.clock.advance(60);
}

async function successes(s: Setup, n: number, seen: Seen = {}): Promise<void> {
  for (let i = 0; i < n; i++) await record(s, seen);
}

function evaluate(
  s: Setup,
  request: Partial<RequestFacts> = {},
  phase: 'initiation' | 'verification' = 'verification',
) {
  return s.rule.evaluate(
    fdsContext({ services: s.services, user: s.user, method: 'TOTP', request: { ...HOME, ...request }, phase }),
  );
}

const ALLOW = { action: 'allow' };

describe('@gatehouse-auth/fds-new-context', () => {
  describe('options', () => {
    it('has the documented defaults', () => {
      expect(newContextOptions.parse(undefined)).to.deep.equal({
        verdicts: { new_device: 'step_up', new_network: 'allow', new_language: 'allow', unusual_hour: 'step_up' },
        history_size: 50,
        min_history: 3,
        unusual_hour_distance: 5,
      });
    });

    it('fills the verdicts that are not given', () => {
      expect(newContextOptions.parse({ verdicts: { new_network: 'deny' } }).verdicts).to.deep.equal({
        new_device: 'step_up',
        new_network: 'deny',
        new_language: 'allow',
        unusual_hour: 'step_up',
      });
    });

    it('refuses unknown verdicts, unknown signals and keys, and out-of-range numbers', () => {
      const paths = (input: unknown) => newContextOptions.safeParse(input).error?.issues.map((i) => i.path);
      expect(paths({ verdicts: { new_device: 'block' } })).to.deep.equal([['verdicts', 'new_device']]);
      expect(paths({ verdicts: { new_country: 'deny' } })).to.deep.equal([['verdicts']]);
      expect(paths({ history: 10 })).to.deep.equal([[]]);
      expect(paths({ unusual_hour_distance: 13 })).to.deep.equal([['unusual_hour_distance']]);
      expect(paths({ history_size: 0 })?.[0]).to.deep.equal(['history_size']);
    });

    it('refuses min_history above history_size, which would disable the rule', () => {
      const result = newContextOptions.safeParse({ history_size: 5, min_history: 6 });
      expect(result.error?.issues.map((i) => [i.path, i.message])).to.deep.equal([
        [['min_history'], 'must be at most history_size (5)'],
      ]);
    });

    it('registers one rule with id "new_context"', async () => {
      expect((await setup()).rule.id).to.equal('new_context');
    });
  });

  describe('too little history', () => {
    it('allows anything while the user has fewer than min_history successes', async () => {
      const s = await setup();
      await successes(s, 2);
      s.services.clock.advance(8 * 3600);
      const stranger = { ip: '198.51.100.1', userAgent: UA.firefox121Windows, acceptLanguage: 'de-DE' };
      expect(await evaluate(s, stranger)).to.deep.equal(ALLOW);
    });

    it('counts successes only, not failures, and only the user’s own', async () => {
      const s = await setup();
      await record(s, {}, 'verification.failure');
      await record(s, {}, 'verification.failure');
      await record(s, { user: fakeUser({ username: 'bob' }) });
      await successes(s, 2);
      expect(await evaluate(s, { userAgent: UA.firefox121Windows })).to.deep.equal(ALLOW);
      await successes(s, 1);
      expect(await evaluate(s, { userAgent: UA.firefox121Windows })).to.deep.equal({
        action: 'step_up',
        reason: 'new_context.new_device',
      });
    });
  });

  describe('a familiar context', () => {
    it('allows with no reason, in both phases', async () => {
      const s = await setup();
      await successes(s, 3);
      expect(await evaluate(s)).to.deep.equal(ALLOW);
      expect(await evaluate(s, {}, 'initiation')).to.deep.equal(ALLOW);
    });

    it('counts successes of every method', async () => {
      const s = await setup();
      await successes(s, 2, { method: 'SMS' });
      await successes(s, 1, { method: 'PASSWORD', userAgent: UA.firefox121Windows });
      expect(await evaluate(s, { userAgent: UA.firefox121Windows })).to.deep.equal(ALLOW);
    });
  });

  describe('new device', () => {
    it('steps up for another browser or OS', async () => {
      const s = await setup();
      await successes(s, 3);
      const newDevice = { action: 'step_up', reason: 'new_context.new_device' };
      expect(await evaluate(s, { userAgent: UA.firefox121Windows })).to.deep.equal(newDevice);
      expect(await evaluate(s, { userAgent: UA.chrome120Windows })).to.deep.equal(newDevice);
      expect(await evaluate(s, { userAgent: UA.safariIphone })).to.deep.equal(newDevice);
    });

    it('does not treat a browser upgrade as a new device', async () => {
      const s = await setup();
      await successes(s, 3);
      expect(await evaluate(s, { userAgent: UA.chrome121Linux })).to.deep.equal(ALLOW);
    });

    it('compares the device id when the client sends one, not the user agent', async () => {
      const s = await setup();
      await successes(s, 3, { deviceId: 'dev-1' });
      expect(await evaluate(s, { deviceId: 'dev-1', userAgent: UA.firefox121Windows })).to.deep.equal(ALLOW);
      expect(await evaluate(s, { deviceId: 'dev-2' })).to.deep.equal({
        action: 'step_up',
        reason: 'new_context.new_device',
      });
    });

    it('knows a device seen in any of the past successes', async () => {
      const s = await setup();
      await successes(s, 1, { userAgent: UA.safariMac });
      await successes(s, 5);
      expect(await evaluate(s, { userAgent: UA.safariMac })).to.deep.equal(ALLOW);
    });

    it('forgets devices beyond history_size', async () => {
      const s = await setup({ history_size: 3 });
      await successes(s, 1, { userAgent: UA.safariMac });
      await successes(s, 3);
      expect(await evaluate(s, { userAgent: UA.safariMac })).to.deep.equal({
        action: 'step_up',
        reason: 'new_context.new_device',
      });
    });
  });

  describe('new network', () => {
    it('signals another IPv4 /24 and allows by default', async () => {
      const s = await setup();
      await successes(s, 3);
      expect(await evaluate(s, { ip: '203.0.113.200' })).to.deep.equal(ALLOW);
      expect(await evaluate(s, { ip: '::ffff:203.0.113.99' })).to.deep.equal(ALLOW);
      expect(await evaluate(s, { ip: '203.0.114.10' })).to.deep.equal({
        action: 'allow',
        reason: 'new_context.new_network',
      });
    });

    it('compares IPv6 addresses by /48', async () => {
      const s = await setup();
      await successes(s, 3, { ip: '2001:db8:1:1::5' });
      expect(await evaluate(s, { ip: '2001:db8:1:ff::9' })).to.deep.equal(ALLOW);
      expect(await evaluate(s, { ip: '2001:db8:2::1' })).to.deep.equal({
        action: 'allow',
        reason: 'new_context.new_network',
      });
    });

    it('uses the configured verdict', async () => {
      const s = await setup({ verdicts: { new_network: 'deny' } });
      await successes(s, 3);
      expect(await evaluate(s, { ip: '198.51.100.1' })).to.deep.equal({
        action: 'deny',
        reason: 'new_context.new_network',
      });
    });
  });

  describe('new language', () => {
    it('signals another primary language and allows by default', async () => {
      const s = await setup();
      await successes(s, 3);
      expect(await evaluate(s, { acceptLanguage: 'en-GB,en;q=0.8' })).to.deep.equal(ALLOW);
      expect(await evaluate(s, { acceptLanguage: 'de-DE,de;q=0.9,en;q=0.5' })).to.deep.equal({
        action: 'allow',
        reason: 'new_context.new_language',
      });
    });

    it('uses the configured verdict', async () => {
      const s = await setup({ verdicts: { new_language: 'step_up' } });
      await successes(s, 3);
      expect(await evaluate(s, { acceptLanguage: 'ru' })).to.deep.equal({
        action: 'step_up',
        reason: 'new_context.new_language',
      });
    });
  });

  describe('unusual hour', () => {
    // The fake clock starts at 12:00 UTC; the successes are recorded a minute apart around noon.
    it('steps up more than unusual_hour_distance hours from every past success', async () => {
      const s = await setup();
      await successes(s, 3);
      s.services.clock.set(new Date('2026-01-02T17:59:00Z'));
      expect(await evaluate(s)).to.deep.equal(ALLOW);
      s.services.clock.set(new Date('2026-01-02T18:00:00Z'));
      expect(await evaluate(s)).to.deep.equal({ action: 'step_up', reason: 'new_context.unusual_hour' });
      s.services.clock.set(new Date('2026-01-02T06:30:00Z'));
      expect(await evaluate(s)).to.deep.equal({ action: 'step_up', reason: 'new_context.unusual_hour' });
      s.services.clock.set(new Date('2026-01-02T07:00:00Z'));
      expect(await evaluate(s)).to.deep.equal(ALLOW);
    });

    it('measures around midnight', async () => {
      const s = await setup();
      s.services.clock.set(new Date('2026-01-01T23:10:00Z'));
      await successes(s, 3);
      s.services.clock.set(new Date('2026-01-03T03:45:00Z'));
      expect(await evaluate(s)).to.deep.equal(ALLOW);
      s.services.clock.set(new Date('2026-01-03T05:00:00Z'));
      expect(await evaluate(s)).to.deep.equal({ action: 'step_up', reason: 'new_context.unusual_hour' });
    });

    it('honours unusual_hour_distance', async () => {
      const s = await setup({ unusual_hour_distance: 2 });
      await successes(s, 3);
      s.services.clock.set(new Date('2026-01-02T15:00:00Z'));
      expect(await evaluate(s)).to.deep.equal({ action: 'step_up', reason: 'new_context.unusual_hour' });
    });
  });

  describe('several signals', () => {
    it('lists every signal present and takes the strictest verdict', async () => {
      const s = await setup();
      await successes(s, 3);
      s.services.clock.set(new Date('2026-01-02T03:00:00Z'));
      expect(await evaluate(s, { userAgent: UA.firefox121Windows })).to.deep.equal({
        action: 'step_up',
        reason: 'new_context.new_device,unusual_hour',
      });
      expect(await evaluate(s, { userAgent: UA.safariMac, ip: '198.51.100.1', acceptLanguage: 'fr-FR' })).to.deep.equal(
        { action: 'step_up', reason: 'new_context.new_device,new_network,new_language,unusual_hour' },
      );
    });

    it('a deny among the signals wins over step-up', async () => {
      const s = await setup({ verdicts: { new_language: 'deny' } });
      await successes(s, 3);
      expect(await evaluate(s, { userAgent: UA.firefox121Windows, acceptLanguage: 'fr' })).to.deep.equal({
        action: 'deny',
        reason: 'new_context.new_device,new_language',
      });
    });

    it('signals whose verdict is allow still allow', async () => {
      const s = await setup({ verdicts: { new_device: 'allow', unusual_hour: 'allow' } });
      await successes(s, 3);
      s.services.clock.set(new Date('2026-01-02T03:00:00Z'));
      expect(await evaluate(s, { userAgent: UA.firefox121Windows })).to.deep.equal({
        action: 'allow',
        reason: 'new_context.new_device,unusual_hour',
      });
    });
  });

  describe('queries', () => {
    it('reads the user’s latest successes once, bounded by history_size', async () => {
      const s = await setup({ history_size: 20 });
      await successes(s, 3);
      const seen: { kind: string; query: EventQuery }[] = [];
      const spy: History = {
        count: (query) => (seen.push({ kind: 'count', query }), s.services.history.count(query)),
        recent: (query) => (seen.push({ kind: 'recent', query }), s.services.history.recent(query)),
      };
      const ctx = {
        ...fdsContext({ services: s.services, user: s.user, method: 'TOTP', request: HOME }),
        history: spy,
      };
      expect(await s.rule.evaluate(ctx)).to.deep.equal(ALLOW);
      expect(seen).to.deep.equal([
        { kind: 'recent', query: { types: ['verification.success'], userId: s.user.id, limit: 20 } },
      ]);
    });
  });
});
