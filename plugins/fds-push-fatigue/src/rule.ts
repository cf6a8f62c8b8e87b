import type { EventQuery, FdsContext, FdsRule, FdsVerdict } from '@gatehouse-auth/core';
import type { PushFatigueOptions } from './options.js';

/** Recorded by the core on every push it starts (key: the device id). */
const SENT = 'push.sent';
/** Recorded by the core when the user denies a push on the device, or types a wrong number. */
const DENIED = 'push.denied';

/** The rule id, also the prefix of its reasons. */
export const PUSH_FATIGUE_RULE_ID = 'push_fatigue';

/** Whole seconds left until `from + waitSeconds`, rounded up; 0 once that moment has passed. */
export function secondsLeft(from: Date, waitSeconds: number, now: Date): number {
  const remainingMs = from.getTime() + waitSeconds * 1000 - now.getTime();
  return remainingMs > 0 ? Math.ceil(remainingMs / 1000) : 0;
}

interface Cap {
  reason: 'rate' | 'denials';
  type: string;
  max: number;
  windowSeconds: number;
}

type Denial = FdsVerdict & { action: 'deny'; retryAfter: number };

/**
 * Caps push-style sign-in requests (MFA bombing, SECURITY-CHECKLIST §7 "Push approval" 3):
 * at initiation of a listed method, a user who already had `max_pushes` pushes in the last
 * `window_seconds`, or `max_denials` denied pushes in the last `block_seconds`, gets no new
 * push. Counts are per user, across all device methods and devices. Reads only `ctx.history`;
 * keeps no state of its own.
 */
export function pushFatigueRule(options: PushFatigueOptions): FdsRule {
  const methods = new Set(options.methods);
  const caps: Cap[] = [
    { reason: 'denials', type: DENIED, max: options.max_denials, windowSeconds: options.block_seconds },
    { reason: 'rate', type: SENT, max: options.max_pushes, windowSeconds: options.window_seconds },
  ];
  return {
    id: PUSH_FATIGUE_RULE_ID,
    async evaluate(ctx: FdsContext): Promise<FdsVerdict> {
      // Only starting a method sends a push. A proof for a push already sent (verification), an
      // attempt or a session sends none, and refusing them would only hurt the user.
      if (ctx.phase !== 'initiation' || !methods.has(ctx.method)) return { action: 'allow' };
      const denials = (await Promise.all(caps.map((cap) => capVerdict(ctx, cap)))).filter(
        (verdict): verdict is Denial => verdict !== null,
      );
      if (denials.length === 0) return { action: 'allow' };
      // Both caps may hold: the one that ends later says when a retry can succeed (on a tie, the
      // denials, listed first: the stronger sign of an attack).
      return denials.reduce((later, next) => (next.retryAfter > later.retryAfter ? next : later));
    },
  };
}

/**
 * Deny while the user has `max` events of the cap's type in its window, with `retryAfter` the
 * seconds until the oldest of the `max` newest leaves the window (then one more is allowed).
 * Falls back to the whole window if the history returns fewer rows than it counted.
 */
async function capVerdict(ctx: FdsContext, cap: Cap): Promise<Denial | null> {
  const query: EventQuery = {
    types: [cap.type],
    userId: ctx.user.id,
    since: new Date(ctx.now.getTime() - cap.windowSeconds * 1000),
  };
  // Nothing past `max` changes the outcome, so the count may stop there.
  if ((await ctx.history.count({ ...query, limit: cap.max })) < cap.max) return null;
  const newest = await ctx.history.recent({ ...query, limit: cap.max });
  const leaving = newest[cap.max - 1];
  // `since` is at-or-after: an event exactly a window old still counts, so wait at least a second.
  const retryAfter = leaving ? Math.max(1, secondsLeft(leaving.at, cap.windowSeconds, ctx.now)) : cap.windowSeconds;
  return { action: 'deny', reason: `${PUSH_FATIGUE_RULE_ID}.${cap.reason}`, retryAfter };
}
