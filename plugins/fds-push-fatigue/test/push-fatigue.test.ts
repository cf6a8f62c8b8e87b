import { expect } from 'chai';
import type { EventQuery, FdsContext, FdsRule, History, UserRecord } from '@gatehouse-auth/core';
import { fakeServices, fakeUser, fdsContext, registerWithFakes, type FakeServices } from '@gatehouse-auth/testing';
import plugin, { pushFatigueOptions, secondsLeft } from '../src/index.js';

const PHONE = 'device-phone-0001';
const HOME_IP = '203.0.113.10';

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
  user?: UserRecord;
  device?: string;
}

/** The events the core's DevicePushes records (core/src/devices/pushes.ts). */
async function record(
  s: Setup,
  type: 'push.sent' | 'push.denied' | 'push.acknowledged' | 'push.allowed' | 'push.cancelled',
  opts: Where & { reason?: string } = {},
): Promise<void> {
  await s.services.events.record({
    type,
    key: opts.device ?? PHONE,
    userId: (opts.user ?? s.user).id,
    method: opts.method ?? 'PUSH',
    ip: HOME_IP,
    ...(type === 'push.denied' ? { reason: opts.reason ?? 'user_denied' } : {}),
  });
}

/** Records `n` pushes `gap` seconds apart (the clock ends on the last one). */
async function pushes(s: Setup, n: number, opts: Where & { gap?: number } = {}): Promise<void> {
  for (let i = 0; i < n; i++) {
    if (i > 0) s.services.clock.advance(opts.gap ?? 10);
    await record(s, 'push.sent', opts);
  }
}

/** A push the user denied on the device: sent, then denied a second later. */
async function deniedPush(s: Setup, opts: Where & { reason?: string } = {}): Promise<void> {
  await record(s, 'push.sent', opts);
  s.services.clock.advance(1);
  await record(s, 'push.denied', opts);
}

function evaluate(s: Setup, opts: Where & { phase?: FdsContext['phase'] } = {}) {
  return s.rule.evaluate(
    fdsContext({
      services: s.services,
      user: opts.user ?? s.user,
      method: opts.method ?? 'PUSH',
      phase: opts.phase ?? 'initiation',
    }),
  );
}

const ALLOW = { action: 'allow' };
const rate = (retryAfter: number) => ({ action: 'deny', reason: 'push_fatigue.rate', retryAfter });
const denials = (retryAfter: number) => ({ action: 'deny', reason: 'push_fatigue.denials', retryAfter });

describe('@gatehouse-auth/fds-push-fatigue', () => {
  describe('options', () => {
    it('has the documented defaults', () => {
      expect(pushFatigueOptions.parse(undefined)).to.deep.equal({
        methods: ['PUSH', 'PATTERN', 'TOUCHID', 'FACE'],
        max_pushes: 5,
        window_seconds: 600,
        max_denials: 2,
        block_seconds: 1800,
      });
    });

    it('accepts values within the bounds', () => {
      const options = {
        methods: ['PUSH', 'DEVICE_CHECK2'],
        max_pushes: 100,
        window_seconds: 86_400,
        max_denials: 1,
        block_seconds: 60,
      };
      expect(pushFatigueOptions.parse(options)).to.deep.equal(options);
    });

    for (const [name, bad] of [
      ['an unknown key', { max_push: 3 }],
      ['max_pushes 0', { max_pushes: 0 }],
      ['max_pushes above 100', { max_pushes: 101 }],
      ['a fractional max_pushes', { max_pushes: 2.5 }],
      ['window_seconds under a minute', { window_seconds: 59 }],
      ['window_seconds above a day', { window_seconds: 86_401 }],
      ['max_denials 0', { max_denials: 0 }],
      ['max_denials above 20', { max_denials: 21 }],
      ['block_seconds under a minute', { block_seconds: 30 }],
      ['block_seconds above a day', { block_seconds: 100_000 }],
      ['a number as a string', { window_seconds: '600' }],
      ['an empty methods list', { methods: [] }],
      ['a lower-case method id', { methods: ['push'] }],
      ['a single method instead of a list', { methods: 'PUSH' }],
    ] as const) {
      it(`refuses ${name}`, () => {
        const result = pushFatigueOptions.safeParse(bad);
        expect(result.success).to.equal(false);
        // The error names the key (an unknown key is named in the issue's `keys`).
        const [issue] = result.error?.issues ?? [];
        const key = Object.keys(bad)[0];
        if (issue?.code === 'unrecognized_keys') expect(issue.keys).to.deep.equal([key]);
        else expect(issue?.path[0]).to.equal(key);
      });
    }

    it('refuses bad options at registration, as the server does at start-up', async () => {
      let error: unknown;
      try {
        await registerWithFakes(plugin, { max_pushes: 0 });
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(Error);
    });

    it('registers one rule with id "push_fatigue", run at initiation only', async () => {
      const s = await setup();
      expect(s.rule.id).to.equal('push_fatigue');
      expect(s.rule.guardsAttempts).to.not.equal(true);
      expect(s.rule.checksSessions).to.not.equal(true);
    });
  });

  describe('secondsLeft', () => {
    it('rounds up and stops at zero', () => {
      const from = new Date('2026-01-01T00:00:00Z');
      expect(secondsLeft(from, 2, new Date('2026-01-01T00:00:00.500Z'))).to.equal(2);
      expect(secondsLeft(from, 2, new Date('2026-01-01T00:00:01.001Z'))).to.equal(1);
      expect(secondsLeft(from, 2, new Date('2026-01-01T00:00:02Z'))).to.equal(0);
      expect(secondsLeft(from, 2, new Date('2026-01-01T00:00:09Z'))).to.equal(0);
    });
  });

  describe('pushes per window (push_fatigue.rate)', () => {
    it('allows a user with no pushes, and one under the cap', async () => {
      const s = await setup();
      expect(await evaluate(s)).to.deep.equal(ALLOW);
      await pushes(s, 4);
      expect(await evaluate(s)).to.deep.equal(ALLOW);
    });

    it('denies at the cap until the oldest push leaves the window', async () => {
      const s = await setup();
      await pushes(s, 5); // t = 0, 10, 20, 30, 40; now t = 40
      expect(await evaluate(s)).to.deep.equal(rate(560));
      s.services.clock.advance(559.5);
      expect(await evaluate(s)).to.deep.equal(rate(1));
      // A push exactly a window old still counts (`since` is at-or-after).
      s.services.clock.advance(0.5);
      expect(await evaluate(s)).to.deep.equal(rate(1));
      s.services.clock.advance(0.001);
      expect(await evaluate(s)).to.deep.equal(ALLOW);
    });

    it('slides: the push sent once the window moved makes the cap hold again', async () => {
      const s = await setup();
      await pushes(s, 5); // t = 0 … 40
      s.services.clock.advance(561); // t = 601: the push of t = 0 left the window
      expect(await evaluate(s)).to.deep.equal(ALLOW);
      await record(s, 'push.sent');
      // Now the push of t = 10 is the oldest of five: it leaves at t = 610.
      expect(await evaluate(s)).to.deep.equal(rate(9));
      s.services.clock.advance(9.001);
      expect(await evaluate(s)).to.deep.equal(ALLOW);
    });

    it('honours max_pushes and window_seconds', async () => {
      const s = await setup({ max_pushes: 2, window_seconds: 60 });
      await record(s, 'push.sent');
      expect(await evaluate(s)).to.deep.equal(ALLOW);
      s.services.clock.advance(5);
      await record(s, 'push.sent');
      expect(await evaluate(s)).to.deep.equal(rate(55));
      s.services.clock.advance(55.001);
      expect(await evaluate(s)).to.deep.equal(ALLOW);
    });

    it('counts the pushes of every device method and device of the user together', async () => {
      const s = await setup();
      await pushes(s, 2, { method: 'PUSH' });
      await pushes(s, 2, { method: 'PATTERN', device: 'device-tablet-0002' });
      await pushes(s, 1, { method: 'TOUCHID' });
      for (const method of ['PUSH', 'PATTERN', 'TOUCHID', 'FACE']) {
        expect(await evaluate(s, { method })).to.deep.include({ action: 'deny', reason: 'push_fatigue.rate' });
      }
    });

    it('counts only push.sent: acknowledged, allowed and cancelled pushes add nothing', async () => {
      const s = await setup({ max_pushes: 2 });
      await record(s, 'push.sent');
      for (const type of ['push.acknowledged', 'push.allowed', 'push.cancelled'] as const) await record(s, type);
      expect(await evaluate(s)).to.deep.equal(ALLOW);
    });
  });

  describe('denials (push_fatigue.denials)', () => {
    it('allows after one denial, blocks after the second', async () => {
      const s = await setup();
      await deniedPush(s); // denied at t = 1
      expect(await evaluate(s)).to.deep.equal(ALLOW);
      s.services.clock.advance(60);
      await deniedPush(s); // denied at t = 62
      // The denial of t = 1 leaves the 1800 s window at t = 1801; now is t = 62.
      expect(await evaluate(s)).to.deep.equal(denials(1739));
    });

    it('a wrong number counts as a denial', async () => {
      const s = await setup();
      await deniedPush(s, { reason: 'wrong_number' });
      await deniedPush(s, { reason: 'user_denied' });
      expect(await evaluate(s)).to.deep.include({ action: 'deny', reason: 'push_fatigue.denials' });
    });

    it('the block ends when the older denial leaves block_seconds', async () => {
      const s = await setup({ block_seconds: 300 });
      await deniedPush(s); // t = 1
      await deniedPush(s); // t = 2
      expect(await evaluate(s)).to.deep.equal(denials(299));
      s.services.clock.advance(299);
      expect(await evaluate(s)).to.deep.equal(denials(1));
      s.services.clock.advance(0.001);
      expect(await evaluate(s)).to.deep.equal(ALLOW);
      // The window slides: a new denial now makes two again (with the one of t = 2, until t = 302).
      await record(s, 'push.denied');
      expect(await evaluate(s)).to.deep.equal(denials(1));
      s.services.clock.advance(1);
      expect(await evaluate(s)).to.deep.equal(ALLOW);
    });

    it('honours max_denials', async () => {
      const s = await setup({ max_denials: 3 });
      await deniedPush(s);
      await deniedPush(s);
      expect(await evaluate(s)).to.deep.equal(ALLOW);
      await deniedPush(s);
      expect(await evaluate(s)).to.deep.include({ action: 'deny', reason: 'push_fatigue.denials' });
    });

    it('with max_denials 1, a single denial blocks', async () => {
      const s = await setup({ max_denials: 1 });
      await deniedPush(s);
      expect(await evaluate(s)).to.deep.equal(denials(1800));
    });

    it('blocks every device method, whatever method the denials were on', async () => {
      const s = await setup();
      await deniedPush(s, { method: 'PUSH' });
      await deniedPush(s, { method: 'PATTERN' });
      expect(await evaluate(s, { method: 'FACE' })).to.deep.include({ reason: 'push_fatigue.denials' });
    });
  });

  describe('both caps at once', () => {
    it('answers the cap that ends later: the denials block', async () => {
      const s = await setup();
      await deniedPush(s); // sent t = 0, denied t = 1
      await deniedPush(s); // sent t = 1, denied t = 2
      await pushes(s, 3); // t = 2, 12, 22
      // Rate: the push of t = 0 leaves at t = 600. Denials: the one of t = 1 leaves at t = 1801.
      expect(await evaluate(s)).to.deep.equal(denials(1779));
    });

    it('answers the cap that ends later: the pushes', async () => {
      const s = await setup({ block_seconds: 120 });
      await deniedPush(s); // sent t = 0, denied t = 1
      await deniedPush(s); // sent t = 1, denied t = 2
      await pushes(s, 3); // t = 2, 12, 22
      // Denials: the one of t = 1 leaves at t = 121. Rate: the push of t = 0 leaves at t = 600.
      expect(await evaluate(s)).to.deep.equal(rate(578));
      s.services.clock.advance(578.001);
      expect(await evaluate(s)).to.deep.equal(ALLOW);
    });
  });

  describe('what the rule leaves alone', () => {
    it('other users are unaffected', async () => {
      const s = await setup();
      const bob = fakeUser({ username: 'bob' });
      await pushes(s, 10, { user: bob });
      await deniedPush(s, { user: bob });
      await deniedPush(s, { user: bob });
      expect(await evaluate(s, { user: bob })).to.include({ action: 'deny' });
      expect(await evaluate(s)).to.deep.equal(ALLOW);
    });

    it('a method that is not a device method is never refused', async () => {
      const s = await setup();
      await pushes(s, 10);
      await deniedPush(s);
      await deniedPush(s);
      for (const method of ['TOTP', 'PASSWORD', 'SMS']) expect(await evaluate(s, { method })).to.deep.equal(ALLOW);
    });

    it('acts only on the methods listed in `methods`', async () => {
      const s = await setup({ methods: ['PUSH', 'DEVICECHECK'] });
      await pushes(s, 5);
      expect(await evaluate(s, { method: 'PUSH' })).to.deep.include({ reason: 'push_fatigue.rate' });
      expect(await evaluate(s, { method: 'DEVICECHECK' })).to.deep.include({ reason: 'push_fatigue.rate' });
      expect(await evaluate(s, { method: 'PATTERN' })).to.deep.equal(ALLOW);
    });

    it('allows in the verification, attempt and session phases, even at both caps', async () => {
      const s = await setup();
      await pushes(s, 10);
      await deniedPush(s);
      await deniedPush(s);
      for (const phase of ['verification', 'attempt', 'session'] as const) {
        expect(await evaluate(s, { phase }), phase).to.deep.equal(ALLOW);
      }
      expect(await evaluate(s, { phase: 'session', method: 'SESSION' })).to.deep.equal(ALLOW);
    });

    it('forgets pushes and denials older than their windows', async () => {
      const s = await setup();
      await pushes(s, 5);
      await deniedPush(s);
      await deniedPush(s);
      s.services.clock.advance(1801);
      expect(await evaluate(s)).to.deep.equal(ALLOW);
    });
  });

  describe('queries', () => {
    it('reads only push events of the user, each query with a since and a limit', async () => {
      const s = await setup();
      await pushes(s, 8);
      await deniedPush(s);
      await deniedPush(s);
      const seen: { kind: 'count' | 'recent'; query: EventQuery }[] = [];
      const spy: History = {
        count: (query) => (seen.push({ kind: 'count', query }), s.services.history.count(query)),
        recent: (query) => (seen.push({ kind: 'recent', query }), s.services.history.recent(query)),
      };
      const ctx = {
        ...fdsContext({ services: s.services, user: s.user, method: 'PUSH', phase: 'initiation' }),
        history: spy,
      };
      expect(await s.rule.evaluate(ctx)).to.deep.include({ action: 'deny', reason: 'push_fatigue.denials' });
      expect(seen.map((q) => q.kind).sort()).to.deep.equal(['count', 'count', 'recent', 'recent']);
      for (const { kind, query } of seen) {
        const label = `${kind} ${JSON.stringify(query)}`;
        expect(query.limit, label).to.be.oneOf([2, 5]);
        expect(query.userId, label).to.equal(s.user.id);
        expect(query.since, label).to.be.instanceOf(Date);
        expect(query.types, label).to.satisfy((types: string[]) =>
          types.every((t) => ['push.sent', 'push.denied'].includes(t)),
        );
      }
    });

    it('reads no history at all for a method it does not cap or another phase', async () => {
      const s = await setup();
      const untouched: History = {
        count: () => Promise.reject(new Error('history read')),
        recent: () => Promise.reject(new Error('history read')),
      };
      const ctx = (method: string, phase: FdsContext['phase']) => ({
        ...fdsContext({ services: s.services, user: s.user, method, phase }),
        history: untouched,
      });
      expect(await s.rule.evaluate(ctx('TOTP', 'initiation'))).to.deep.equal(ALLOW);
      expect(await s.rule.evaluate(ctx('PUSH', 'verification'))).to.deep.equal(ALLOW);
    });
  });
});
