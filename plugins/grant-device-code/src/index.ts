import { definePlugin, z } from '@gatehouse-auth/core';
import { deviceAuthorization, deviceAuthorizationRoute } from './endpoint.js';
import { deviceCodeGrant } from './grant.js';
import { MESSAGES } from './messages.js';
import { devicePages } from './pages.js';
import { DeviceGrants } from './store.js';

export { DEVICE_CODE_GRANT, SLOW_DOWN_STEP, deviceCodeGrant } from './grant.js';
export { USER_CODE_ALPHABET, displayUserCode, normalizeUserCode } from './codes.js';
export { deviceAuthorizationRoute } from './endpoint.js';

/** Where the routes mount: the device endpoint under /oauth, the user code page at /device. */
export const ENDPOINT_MOUNT = '/oauth';
export const PAGE_MOUNT = '/device';

export const deviceCodeOptions = z
  .strictObject({
    /** Seconds the codes live (RFC 8628 §3.2 expires_in). */
    expires_in: z.number().int().min(60).max(3600).default(600),
    /** Seconds a device waits between polls (RFC 8628 §3.2 interval). */
    interval: z.number().int().min(1).max(60).default(5),
    /** Codes one address may submit on the user code page per window (then 429). */
    code_attempts: z
      .strictObject({
        max: z.number().int().min(1).default(10),
        window_seconds: z.number().int().min(1).default(900),
      })
      .default({ max: 10, window_seconds: 900 }),
  })
  .default({ expires_in: 600, interval: 5, code_attempts: { max: 10, window_seconds: 900 } });

/**
 * @gatehouse-auth/grant-device-code: the OAuth 2.0 Device Authorization Grant (RFC 8628). A device
 * without a browser gets a device_code and a user_code at POST /oauth/device_authorization; the
 * user enters the code at /device, signs in to the device's app and allows it; the device polls
 * /oauth/token with grant_type urn:ietf:params:oauth:grant-type:device_code.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/grant-device-code'
 * apps:
 *   - client_id: tv-app
 *     token_endpoint_auth_method: none
 *     grant_types: [urn:ietf:params:oauth:grant-type:device_code, refresh_token]
 *     scopes: [openid, profile, offline_access]
 */
export default definePlugin({
  name: '@gatehouse-auth/grant-device-code',
  apiVersion: '^1.2',
  options: deviceCodeOptions,
  register(api, options) {
    const { web, services } = api;
    const grants = new DeviceGrants(api.records, services);
    api.grants.add(deviceCodeGrant(grants, services));
    api.messages(MESSAGES);
    api.discovery({ device_authorization_endpoint: web.url(`${ENDPOINT_MOUNT}${deviceAuthorizationRoute.path}`) });

    const endpoint = services.http.createRouter();
    endpoint.post(
      deviceAuthorizationRoute.path,
      services.http.form(),
      deviceAuthorization(web, grants, services, {
        expiresIn: options.expires_in,
        interval: options.interval,
        verificationUri: web.url(PAGE_MOUNT),
      }),
    );
    api.routes.add({ path: ENDPOINT_MOUNT, router: endpoint, operations: [deviceAuthorizationRoute] });

    const pages = devicePages(web, grants, services, {
      attempts: web.limit('user-code', options.code_attempts.max, options.code_attempts.window_seconds),
      mount: PAGE_MOUNT,
    });
    const page = services.http.createRouter();
    page.get('/', pages.showCodeForm);
    page.post('/', services.http.form(), pages.submitCode);
    page.get('/continue', pages.afterLogin);
    page.post('/confirm', services.http.form(), pages.answer);
    api.routes.add({ path: PAGE_MOUNT, router: page });
  },
});
