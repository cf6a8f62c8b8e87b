/** The simulator's line for a push: when it was asked for, relative and absolute, and when it expires. */
import { expect } from 'chai';
import { absoluteTime, describePush, relativeTime, type Push } from '@gatehouse-auth/authenticator';

const now = new Date('2026-11-28T04:13:29.500Z');
const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);

describe('gatehouse-authenticator: describing a push', function () {
  it('says the time in the largest whole unit, past and future', function () {
    expect(relativeTime(at(0), now)).to.equal('now');
    expect(relativeTime(at(-45), now)).to.equal('45 seconds ago');
    expect(relativeTime(at(-119), now)).to.equal('1 minute ago');
    expect(relativeTime(at(-2 * 3600 - 5), now)).to.equal('2 hours ago');
    expect(relativeTime(at(-3 * 86_400), now)).to.equal('3 days ago');
    expect(relativeTime(at(480), now)).to.equal('in 8 minutes');
    expect(absoluteTime(now)).to.equal('2026-11-28 04:13:29 UTC');
  });

  it('one line: the push, where it comes from, when it was asked for, when it expires', function () {
    const push: Push = {
      pushId: 'push_abc',
      method: 'PUSH',
      state: 'INITIATED',
      exchangeId: 'x',
      challenge: 'c',
      context: { app: 'Shop', browser: 'Chrome on Linux', ip: '203.0.113.7' },
      requestedAt: at(-125),
      expiresAt: at(475),
    };
    expect(describePush(push, now)).to.equal(
      'push_abc  PUSH  INITIATED  Shop  (Chrome on Linux, 203.0.113.7)  requested 2 minutes ago (2026-11-28 04:11:24 UTC), expires in 7 minutes',
    );
    // A server clock a little ahead: asked "now", never "in 5 seconds".
    expect(describePush({ ...push, requestedAt: at(5) }, now)).to.include('  requested now (2026-11-28 04:13:34 UTC)');
    // A server that does not say when: no time rather than a made-up one.
    expect(describePush({ ...push, requestedAt: null }, now)).to.equal(
      'push_abc  PUSH  INITIATED  Shop  (Chrome on Linux, 203.0.113.7), expires in 7 minutes',
    );
  });
});
