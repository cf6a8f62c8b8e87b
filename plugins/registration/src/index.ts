import { definePlugin } from '@gatehouse-auth/core';
import { appRegistration, pluginOptions, provenMedium, type AppRegistration } from './config.js';
import { catalogs } from './messages.js';
import { REGISTER_PATH, registrationPages } from './page.js';
import { registrationService } from './service.js';

export { appRegistration, FIELD_NAMES, pluginOptions, type AppRegistration, type FieldName } from './config.js';
export {
  maskAddress,
  RegistrationError,
  type Pending,
  type Registered,
  type RegistrationInput,
  type RegistrationService,
} from './service.js';
export { REGISTER_PATH } from './page.js';

/** The name other plugins resolve the service by (`services.resolve('registration')`). */
export const REGISTRATION_SERVICE = 'registration';

/**
 * @gatehouse-auth/registration: people create their own account (issue 27, decision 46). Apps
 * that turn `registration.enabled` on get `prompt=create` at /authorize and a "Create an account"
 * link on the hosted login page; both lead to /register, where the registrant gives the app's
 * fields and a password (the password method's policy), proves their email or phone by a code,
 * and goes on with the app's remaining login stages. Enumeration-safe, rate-limited on every
 * node, screened by the FDS rules of the `registration` phase.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/registration'
 *     options: { email_channel: mail }
 * apps:
 *   - client_id: shop
 *     registration:
 *       enabled: true
 *       fields: [{ name: email, required: true }, { name: given_name }]
 *       terms_version: '2026-01'
 */
export default definePlugin({
  name: '@gatehouse-auth/registration',
  apiVersion: '^1.3',
  // userAccounts is that plugin's (decision 0063).
  dependencies: ['@gatehouse-auth/management'],
  provides: [REGISTRATION_SERVICE],
  options: pluginOptions,
  appConfig: { registration: appRegistration },
  register(api, options) {
    const apps = new Map<string, AppRegistration>();
    api.messages(catalogs);
    api.check(() => {
      for (const key of ['email_channel', 'sms_channel'] as const) {
        const id = options[key];
        if (id && !api.services.channels.get(id)) throw new Error(`options.${key}: no delivery channel "${id}"`);
      }
    });
    api.prompt({
      prompt: 'create',
      path: REGISTER_PATH,
      // Read once per app when the client registry is built (start-up): the settings are kept here.
      enabled(client) {
        const app = client.settings.registration as AppRegistration | undefined;
        if (!app?.enabled) return false;
        if (app.verify === 'code') {
          const medium = provenMedium(app);
          if (!options[`${medium}_channel`]) {
            throw new Error(
              `plugin ${api.plugin.name}: app ${client.clientId} proves the ${medium} address: set options.${medium}_channel`,
            );
          }
        }
        apps.set(client.clientId, app);
        return true;
      },
    });
    const service = registrationService(api, options, apps);
    api.provide(REGISTRATION_SERVICE, service);
    api.routes.add({ path: REGISTER_PATH, router: registrationPages(api, service) });
  },
});
