import { definePlugin } from '@gatehouse-auth/core';
import { AppAdmin } from './client-admin.js';
import { AccountActions } from './user-accounts.js';
import { managementCommands } from './commands.js';
import { MethodSetupService } from './method-setup.js';

export { AppAdmin, DEFAULT_SECRET_OVERLAP_SECONDS } from './client-admin.js';
export { AccountActions } from './user-accounts.js';
export { managementCommands } from './commands.js';
export { MethodSetupService } from './method-setup.js';

/** This package's name: what the plugins that use its services list in `dependencies`. */
export const MANAGEMENT_PLUGIN = '@gatehouse-auth/management';

/**
 * @gatehouse-auth/management: the management services the pages and APIs share (decision 0063).
 * `userAccounts` is what the console, the account page, the admin API and the self-service
 * plugins do to an account, audited; `clientAdmin` creates, changes, rotates and deletes the apps
 * stored in the database (decision 0051), for the admin API, the console, Dynamic Client
 * Registration and `gatehouse apps`. Both run on the core's stores (`services.accountStore`,
 * `services.appStore`). `methodSetup` sets a user's methods up, lists, renames and removes them
 * (decision 81: the setup API, the account page, the hosted page's setup screens and the cidaas
 * calls use it), on the core's `web.setup`. A plugin that uses them names this one in its `dependencies`: left out,
 * start-up stops naming it. The operator's commands on them are this plugin's too (decision
 * 0068): `gatehouse users create|list|profile` and `gatehouse apps list|create|update|rotate-secret|delete`.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/management'
 */
export default definePlugin({
  name: MANAGEMENT_PLUGIN,
  apiVersion: '^1.3',
  provides: ['userAccounts', 'clientAdmin', 'methodSetup'],
  commands: managementCommands,
  register(api) {
    const setup = new MethodSetupService(api);
    api.provide('methodSetup', setup);
    api.provide('userAccounts', new AccountActions(api.services, setup));
    api.provide('clientAdmin', new AppAdmin(api.services));
  },
});
