import { definePlugin, z } from '@gatehouse-auth/core';
import { siteCatalogs } from '@gatehouse-auth/site-kit';
import { consolePages } from './console.js';

export { adminCheck } from './console.js';
export { pluginsBody, type OverviewDeps } from './overview.js';

/** The console's app and where it lives. */
export const CONSOLE_CLIENT_ID = 'gatehouse-console';
export const CONSOLE_PATH = '/console';

export const consoleOptions = z.strictObject({
  /** Who may use it: usernames or user ids. Anyone else who signs in gets 403. */
  admins: z.array(z.string().min(1)).refine((a) => a.length > 0, 'needs at least one username or user id'),
  /** The console's login stages: at least two (two factors), each with a method of its own. */
  login_stages: z
    .array(z.array(z.string().min(1)).min(1))
    .refine((s) => s.length >= 2, 'needs two stages at least (two factors), e.g. [[PASSWORD], [TOTP, FIDO2]]'),
  /** How long a console sign-in lasts, in seconds (at most the browser session's). */
  session_ttl: z.number().int().positive().max(43_200).default(3600),
});

/**
 * @gatehouse-auth/page-console: the admin console (decisions 27, 28, 39) at /console: users
 * (search, create, disable, unlock, reset factors, end sessions), their methods, devices,
 * sessions and recent events; apps; plugins and health. Admins sign in through Gatehouse itself,
 * with the console's own stages proven within 5 minutes. Left out of `plugins:`, /console
 * answers 404.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/page-console'
 *     options:
 *       admins: [alice]
 *       login_stages: [[PASSWORD], [TOTP, FIDO2]]
 */
export default definePlugin({
  name: '@gatehouse-auth/page-console',
  apiVersion: '^1.3',
  // userAccounts and clientAdmin are that plugin's (decision 0063).
  dependencies: ['@gatehouse-auth/management'],
  options: consoleOptions,
  register(api, options) {
    api.app({ client_id: CONSOLE_CLIENT_ID, name: 'Gatehouse console', login_stages: options.login_stages });
    api.messages(siteCatalogs(new URL('../locales/', import.meta.url)));
    consolePages(api, { path: CONSOLE_PATH, clientId: CONSOLE_CLIENT_ID, ...options });
  },
});
