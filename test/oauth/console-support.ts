import { expect } from 'chai';
import type { Browser } from './support.js';
import { stage, type DemoServer } from './demo-server.js';
import {
  ADMIN_TOKEN,
  completeStage,
  enrolTotp,
  locationOf,
  loginRequestId,
  PASSWORD,
  startServer,
  totpCode,
  type OAuthServer,
  type ServerOptions,
  type TestUser,
} from './support.js';

/** Admins of the console suites' servers (by username: the list is config, the users come later). */
export const ADMINS = ['console-admin-1', 'console-admin-2', 'console-admin-3', 'console-admin-4', 'console-admin-5'];

/** The console's entry in `plugins:` (PASSWORD then TOTP). */
export const CONSOLE_PLUGIN = {
  name: '@gatehouse-auth/page-console',
  options: { admins: [...ADMINS], login_stages: [['PASSWORD'], ['TOTP']] },
};
/** The account page's entry in `plugins:` (PASSWORD, then TOTP or a backup code). */
export const ACCOUNT_PLUGIN = {
  name: '@gatehouse-auth/page-account',
  options: { login_stages: [['PASSWORD'], ['TOTP', 'BACKUPCODE']] },
};

/**
 * A server with the console (PASSWORD then TOTP) and the account page (PASSWORD then TOTP or
 * BACKUPCODE), and any `opts.plugins` after them.
 */
export function startConsoleServer(opts: ServerOptions = {}): Promise<OAuthServer> {
  return startServer({
    ...opts,
    plugins: [
      { name: '@gatehouse-auth/method-backupcode', options: { memory_cost: 1024, time_cost: 2 } },
      CONSOLE_PLUGIN,
      ACCOUNT_PLUGIN,
      ...(opts.plugins ?? []),
    ],
  });
}

/** A user with a password and TOTP: `username` given (an admin) or made up. */
export async function userWithTotp(
  server: OAuthServer,
  username?: string,
): Promise<TestUser & { totp: string; steps: number }> {
  let user: TestUser;
  if (username) {
    const { id } = await server.gatehouse.container.cradle.users.create({ username });
    const res = await fetch(server.url('/verification-actions-srv/setup/PASSWORD/initiation'), {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sub: id, password: PASSWORD }),
    });
    expect(res.status).to.equal(200);
    user = { id, username, email: '' };
  } else user = await server.user('member');
  // enrolTotp confirms with the previous step; sign-ins use the current one, then the next.
  return { ...user, totp: await enrolTotp(server, user), steps: 0 };
}

/**
 * From a page of a site (`/console/users`) to the page again, signed in: the site's hosted
 * login, PASSWORD, TOTP, the site's callback. Each sign-in spends the user's next TOTP step (a
 * code works once).
 */
export async function signInToSite(
  browser: Browser,
  server: OAuthServer,
  path: string,
  user: TestUser & { totp: string; steps: number },
): Promise<Response> {
  const requestId = loginRequestId(locationOf(await browser.get(path), server));
  const second = await completeStage(
    browser,
    server,
    requestId,
    'PASSWORD',
    { identifier: user.username },
    { password: PASSWORD },
  );
  expect(second.pathname, 'a second stage').to.equal('/login');
  const callback = await completeStage(
    browser,
    server,
    requestId,
    'TOTP',
    { sub: user.id },
    { pass_code: await totpCode(user.totp, user.steps++) },
  );
  expect(callback.pathname).to.match(/\/callback$/);
  const back = locationOf(await browser.get(callback.pathname + callback.search), server);
  return browser.get(back.pathname + back.search);
}

/** The value of the first `name="csrf"` field of a page. */
export function csrfOf(page: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(page);
  expect(match, 'a CSRF field').to.not.equal(null);
  return match![1]!;
}

/** Alice of the demo config, signed in to a site with her password and a backup code. */
export async function signInDemo(b: Browser, demo: DemoServer, path: string): Promise<Response> {
  const requestId = loginRequestId(locationOf(await b.get(path), demo));
  await stage(b, demo, requestId, 'PASSWORD', { identify: true });
  const callback = await stage(b, demo, requestId, 'BACKUPCODE');
  expect(callback.pathname).to.equal(`${path.split('/').slice(0, 2).join('/')}/callback`);
  const back = locationOf(await b.get(callback.pathname + callback.search), demo);
  return b.get(back.pathname + back.search);
}
