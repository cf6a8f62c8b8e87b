import { expect } from 'chai';
import { outboxMessage } from '../../../test/oauth/demo-server.js';
import type { Browser } from '../../../test/oauth/support.js';
import { locationOf, startServer, type OAuthServer, type ServerOptions } from '../../../test/oauth/support.js';

/** The plugins a recovery suite's server adds: backup codes, the outbox (its route), the recovery plugin. */
export const RECOVERY_PLUGINS = [
  { name: '@gatehouse-auth/method-backupcode', options: { memory_cost: 1024, time_cost: 2 } },
  { name: '@gatehouse-auth/channel-outbox', options: { expose_route: true } },
  { name: '@gatehouse-auth/account-recovery', options: { email_channel: 'outbox' } },
];

export function startRecoveryServer(opts: ServerOptions = {}): Promise<OAuthServer> {
  return startServer({ ...opts, plugins: [...RECOVERY_PLUGINS, ...(opts.plugins ?? [])] });
}

/** The value of the first `name="csrf"` field of a page. */
export function csrfOf(page: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(page);
  expect(match, 'a CSRF field').to.not.equal(null);
  return match![1]!;
}

/** The `data-code` of a page's notice, or null when it has none. */
export function noticeCode(page: string): string | null {
  return /id="gh-notice" data-code="([A-Z_]+)"/.exec(page)?.[1] ?? null;
}

/** GET a page, then POST its form (with its CSRF token) at `path`. */
export async function submit(
  browser: Browser,
  page: string,
  path: string,
  fields: Record<string, string>,
): Promise<Response> {
  const form = await browser.get(page);
  const text = await form.text();
  return browser.postForm(path, { csrf: csrfOf(text), ...fields });
}

/** Starts a reset for `identifier`: where the answer sends the browser (always /recovery/code). */
export async function startReset(server: OAuthServer, browser: Browser, identifier: string): Promise<URL> {
  const res = await submit(browser, '/recovery', '/recovery', { identifier });
  const next = locationOf(res, server);
  expect(next.pathname).to.equal('/recovery/code');
  return next;
}

/** The reset code of the latest email to `to` (whose text matches `text`: the English one by default). */
export async function resetCode(
  server: OAuthServer,
  to: string,
  text: RegExp = /reset your password/,
): Promise<string> {
  const message = await outboxMessage(server, to, (t) => text.test(t));
  return /\b(\d{6})\b/.exec(message.text)![1]!;
}

/** Posts a code on the code page; the answer. */
export function postCode(browser: Browser, code: string): Promise<Response> {
  return submit(browser, '/recovery/code', '/recovery/code', { code });
}
