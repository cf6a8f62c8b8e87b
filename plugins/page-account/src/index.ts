import { definePlugin, z } from '@gatehouse-auth/core';
import { siteCatalogs } from '@gatehouse-auth/site-kit';
import { accountPage } from './page.js';

export { lastWaysIn, type MethodState } from './page.js';
export { ACCOUNT_DELETION_SERVICE, type AccountDeletion } from './actions.js';

/** The account page's app and where it lives. */
export const ACCOUNT_CLIENT_ID = 'gatehouse-account';
export const ACCOUNT_PATH = '/account';

export const accountOptions = z.strictObject({
  /** The stages users sign in to the page with (each with a method of its own). */
  login_stages: z.array(z.array(z.string().min(1)).min(1)).min(1),
  /** How long a sign-in to the page lasts, in seconds (at most the browser session's). */
  session_ttl: z.number().int().positive().max(43_200).default(3600),
  /**
   * How recent (seconds) the page's sign-in must be to add a method, change the password or
   * delete the account; an older one is sent through the hosted login again.
   */
  setup_max_age: z.number().int().positive().max(3600).default(300),
  /** The methods the page offers to add (default: every method with a setup, but the password and renewable ones). */
  add_methods: z.array(z.string().min(1)).optional(),
  /** How long (seconds) a code sent to a new email address or phone number works. */
  address_code_ttl: z.number().int().min(60).max(3600).default(600),
  /** Seconds between deleting the account and its rows going (7 days by default). */
  deletion_grace: z.number().int().positive().default(604_800),
  /** How often (seconds) each node looks for deletions that are due. */
  deletion_sweep: z.number().int().positive().max(86_400).default(60),
});

/**
 * @gatehouse-auth/page-account: the account page (decisions 27, 28, 39). A signed-in user sees
 * their methods (backup codes renewed, credentials such as passkeys removed), bound devices,
 * sessions ("sign out everywhere else") and recent sign-ins, at /account. Left out of
 * `plugins:`, /account answers 404.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/page-account'
 *     options:
 *       login_stages: [[PASSWORD], [TOTP, BACKUPCODE]]
 */
export default definePlugin({
  name: '@gatehouse-auth/page-account',
  apiVersion: '^1.3',
  // userAccounts is that plugin's (decision 0063).
  dependencies: ['@gatehouse-auth/management'],
  options: accountOptions,
  // The cidaas deletion call (compat-cidaas) schedules with the page's grace period and sweep;
  // the landing page (page-landing) links the page where `accountPage` says it is.
  provides: ['accountDeletion', 'accountPage'],
  register(api, options) {
    api.app({ client_id: ACCOUNT_CLIENT_ID, name: 'Your account', login_stages: options.login_stages });
    api.messages(siteCatalogs(new URL('../locales/', import.meta.url)));
    accountPage(api, { path: ACCOUNT_PATH, clientId: ACCOUNT_CLIENT_ID, ...options });
    api.provide('accountPage', { path: ACCOUNT_PATH });
  },
});
