import { definePlugin, z } from '@gatehouse-auth/core';
import { accountRoutes } from './account.js';
import { configuredRoutes } from './configured.js';
import { inviteRoutes } from './invite.js';
import { loginRoutes } from './login.js';
import { registrationRoutes } from './registration.js';
import { resetPasswordRoutes } from './reset-password.js';
import { setupRoutes } from './setup.js';
import { userRoutes } from './users.js';

export { AccountVerification } from './account.js';
export { ConfiguredMethods } from './configured.js';
export { CIDAAS_API } from './api.js';

const options = z.strictObject({
  /** The delivery channel that sends account verification codes by email. */
  email_channel: z.string().min(1).optional(),
  /** The delivery channel that sends account verification codes by SMS. */
  sms_channel: z.string().min(1).optional(),
});

/**
 * The calls apps built on the cidaas SDKs make besides the verification service (decision 40):
 * `/login-srv/*`, `/public-srv/*`, `/authz-srv/*`, the configured list, setting a method up
 * during a login, account verification, `/verification-actions-srv/config` and `friendlyname`.
 * Left out of `plugins:`, those paths answer 404.
 */
export default definePlugin({
  name: '@gatehouse-auth/compat-cidaas',
  apiVersion: '^1.3',
  // userAccounts is that plugin's (decision 0063).
  dependencies: ['@gatehouse-auth/management', '@gatehouse-auth/verification-api'],
  options,
  register(api, opts) {
    const router = api.services.http.createRouter();
    const group = { api, router };
    const operations = [
      ...loginRoutes(group),
      ...configuredRoutes(group),
      ...accountRoutes(group, opts),
      ...setupRoutes(group),
      ...registrationRoutes(group),
      ...inviteRoutes(group),
      ...userRoutes(group),
      ...resetPasswordRoutes(group),
    ];
    api.routes.add({ path: '/', router, operations });
    // The app's own login UI calls these by XHR from its origin (apps[i].allowed_origins).
    api.cors(['/login-srv/', '/authz-srv/', '/public-srv/']);
    api.check(() => {
      for (const [option, id] of Object.entries(opts)) {
        if (id && !api.services.channels.get(id)) {
          throw new Error(`options.${option}: no delivery channel "${id}" is registered`);
        }
      }
    });
  },
});
