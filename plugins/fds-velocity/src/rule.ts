import type { EventQuery, FdsContext, FdsRule, FdsVerdict } from '@gatehouse-auth/core';
import { backoffSeconds, secondsLeft } from './backoff.js';
import type { VelocityOptions } from './options.js';

const FAILURE = 'verification.failure';
const SUCCESS = 'verification.success';
/** Recorded by the admin API (POST /admin/users/:id/factors/:method/unlock); resets like a success. */
const UNLOCKED = 'factor.unlocked';

/** The rule id, also the prefix of its reasons. */
export const VELOCITY_RULE_ID = 'velocity';

/**
 * Counts failed verifications: consecutive failures on the factor (user + method) drive a growing
 * back-off and, at `lockout_failures`, a lock; sliding-window counts per user, per IP and per
 * factor cap bursts. Reads only `ctx.history`; keeps no state of its own.
 */
export function velocityRule(options: VelocityOptions): FdsRule {
  return {
    id: VELOCITY_RULE_ID,
    // Lockout and back-off must hold for wrong proofs too, not only for right ones.
    guardsAttempts: true,
    async evaluate(ctx: FdsContext): Promise<FdsVerdict> {
      const device = await knownDevice(ctx);
      return (
        (await factorVerdict(ctx, options, device)) ??
        (await windowVerdict(ctx, options, device)) ?? { action: 'allow' }
      );
    },
  };
}

/**
 * A device the user already proved this factor from (a success carrying its device key): its
 * attempts are counted on their own, so strangers' failures cannot hold it back.
 */
async function knownDevice(ctx: FdsContext): Promise<string | null> {
  const device = ctx.request.deviceKey;
  if (!device) return null;
  const seen = await ctx.history.count({
    types: [SUCCESS],
    userId: ctx.user.id,
    method: ctx.method,
    key: device,
    limit: 1,
  });
  return seen > 0 ? device : null;
}

/**
 * Lock and back-off, from the consecutive failures on this factor since its last success:
 * every failure for an unknown device (strangers share one count, so a guesser gains nothing
 * by switching addresses), or only this device's own for a device the user already proved
 * the factor from.
 */
async function factorVerdict(
  ctx: FdsContext,
  options: VelocityOptions,
  device: string | null,
): Promise<FdsVerdict | null> {
  const factor = { userId: ctx.user.id, method: ctx.method };
  const [lastSuccess] = await ctx.history.recent({ types: [SUCCESS, UNLOCKED], ...factor, limit: 1 });
  // A success (or an operator's unlock) resets only its own factor. `since` is at-or-after, so a failure in the very
  // millisecond of the success still counts: the count errs on the strict side.
  const failures: EventQuery = {
    types: [FAILURE],
    ...factor,
    ...(device ? { key: device } : {}),
    ...(lastSuccess ? { since: lastSuccess.at } : {}),
  };
  // Nothing past lockout_failures changes the outcome, so the count may stop there.
  const consecutive = await ctx.history.count({ ...failures, limit: options.lockout_failures });

  // NIST SP 800-63B §5.2.2 (rev 4 §3.2.2): no more than 100 consecutive failed attempts on one
  // authenticator. With lockout_failures = 100 the 101st attempt is refused here, even with a right proof.
  if (consecutive >= options.lockout_failures) return { action: 'deny', reason: `${VELOCITY_RULE_ID}.factor_locked` };

  const wait = backoffSeconds(
    consecutive,
    options.free_failures,
    options.backoff_base_seconds,
    options.backoff_max_seconds,
  );
  if (wait === 0) return null;
  const [newest] = await ctx.history.recent({ ...failures, limit: 1 });
  if (!newest) return null;
  const retryAfter = secondsLeft(newest.at, wait, ctx.now);
  return retryAfter > 0 ? { action: 'deny', reason: `${VELOCITY_RULE_ID}.backoff`, retryAfter } : null;
}

interface WindowCheck {
  reason: string;
  max: number;
  query: EventQuery;
}

/**
 * Failures in the sliding window per user, per IP and per factor; more than the maximum denies.
 * For a known device the per-user counts are that device's own (as for the back-off).
 */
async function windowVerdict(
  ctx: FdsContext,
  options: VelocityOptions,
  device: string | null,
): Promise<FdsVerdict | null> {
  const since = new Date(ctx.now.getTime() - options.window_seconds * 1000);
  const mine = device ? { key: device } : {};
  const checks: WindowCheck[] = [
    { reason: 'user', max: options.max_failures_per_user, query: { userId: ctx.user.id, ...mine } },
    { reason: 'ip', max: options.max_failures_per_ip, query: { ip: ctx.request.ip } },
    {
      reason: 'user_method',
      max: options.max_failures_per_user_method,
      query: { userId: ctx.user.id, method: ctx.method, ...mine },
    },
  ];
  const counts = await Promise.all(
    checks.map((check) => ctx.history.count({ types: [FAILURE], since, ...check.query, limit: check.max + 1 })),
  );
  const exceeded = checks.find((check, i) => (counts[i] ?? 0) > check.max);
  if (!exceeded) return null;
  return {
    action: 'deny',
    reason: `${VELOCITY_RULE_ID}.${exceeded.reason}`,
    retryAfter: await windowRetryAfter(ctx, exceeded, since, options.window_seconds),
  };
}

/**
 * Seconds until the count drops back to the maximum: when the (max+1)-th newest failure slides
 * out of the window. Falls back to the whole window if the history returns fewer rows.
 */
async function windowRetryAfter(
  ctx: FdsContext,
  check: WindowCheck,
  since: Date,
  windowSeconds: number,
): Promise<number> {
  const newest = await ctx.history.recent({ types: [FAILURE], since, ...check.query, limit: check.max + 1 });
  const leaving = newest[check.max];
  if (!leaving) return windowSeconds;
  return Math.max(1, secondsLeft(leaving.at, windowSeconds, ctx.now));
}
