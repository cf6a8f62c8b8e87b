import type { Push } from './authenticator.js';

/** "2 minutes ago", "in 8 minutes", "now": the largest whole unit, in English. */
export function relativeTime(when: Date, now: Date): string {
  const seconds = Math.round((when.getTime() - now.getTime()) / 1000);
  const format = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
  const abs = Math.abs(seconds);
  if (abs < 60) return format.format(seconds, 'second');
  if (abs < 3600) return format.format(Math.trunc(seconds / 60), 'minute');
  if (abs < 86_400) return format.format(Math.trunc(seconds / 3600), 'hour');
  return format.format(Math.trunc(seconds / 86_400), 'day');
}

/** "2026-11-28 04:13:29 UTC": the time itself, beside the relative one. */
export function absoluteTime(when: Date): string {
  return when
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, ' UTC');
}

/**
 * One line of `gatehouse-authenticator pushes`: the push, its method and state, the app and
 * where the sign-in comes from, when it was asked for (relative and absolute), and how long the
 * server still takes it. An old request is one to look at twice.
 */
export function describePush(push: Push, now: Date): string {
  const c = push.context;
  const where = [c.browser, c.ip].filter(Boolean).join(', ');
  // The server's clock may run a little ahead of this one: a request is never "in 5 seconds".
  const asked = push.requestedAt
    ? `  requested ${relativeTime(new Date(Math.min(push.requestedAt.getTime(), now.getTime())), now)} (${absoluteTime(push.requestedAt)})`
    : '';
  return (
    `${push.pushId}  ${push.method}  ${push.state}  ${String(c.app ?? '')}${where ? `  (${where})` : ''}` +
    `${asked}, expires ${relativeTime(push.expiresAt, now)}`
  );
}
