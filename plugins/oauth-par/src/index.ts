import { definePlugin, OAuthError, z, type OAuthClient } from '@gatehouse-auth/core';
import { pushedAuthorization, pushedAuthorizationRoute } from './endpoint.js';
import { PushedRequests, REQUEST_URI_PREFIX } from './store.js';

export { pushedAuthorizationRoute } from './endpoint.js';
export { REQUEST_URI_PREFIX } from './store.js';

/** Where the endpoint mounts (beside /oauth/token; the path itself is the endpoint). */
export const ENDPOINT_MOUNT = '/oauth/par';

/** The app key (and RFC 9126 §6 client metadata name) that makes an app push every request. */
export const REQUIRE_PAR = 'require_pushed_authorization_requests';

export const parOptions = z
  .strictObject({
    /** Seconds a request_uri lives (RFC 9126 §2.2 expires_in; the RFC expects 5 to 600). */
    expires_in: z.number().int().min(5).max(600).default(60),
    /** Every app must push its authorization requests (RFC 9126 §5); per app: the app key. */
    require_pushed_authorization_requests: z.boolean().default(false),
    /** Pushed requests per client (a public client: per client and address) and window (then 429). */
    pushes: z
      .strictObject({
        max: z.number().int().min(1).default(300),
        window_seconds: z.number().int().min(1).default(60),
      })
      .default({ max: 300, window_seconds: 60 }),
  })
  .default({ expires_in: 60, require_pushed_authorization_requests: false, pushes: { max: 300, window_seconds: 60 } });

/**
 * @gatehouse-auth/oauth-par: OAuth 2.0 Pushed Authorization Requests (RFC 9126). A client
 * authenticates at POST /oauth/par with the parameters of an authorization request and gets a
 * single-use, short-lived request_uri; /authorize with client_id and that request_uri is then
 * the pushed request. An app with `require_pushed_authorization_requests: true` (or every app,
 * with the option of that name) may use /authorize only so.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/oauth-par'
 *     options: { expires_in: 60 }
 * apps:
 *   - client_id: web
 *     require_pushed_authorization_requests: true
 */
export default definePlugin({
  name: '@gatehouse-auth/oauth-par',
  apiVersion: '^1.3',
  options: parOptions,
  appConfig: { [REQUIRE_PAR]: z.boolean().default(false) },
  register(api, options) {
    const { web, services } = api;
    const requests = new PushedRequests(api.records, services.crypto);
    const required = (client: OAuthClient) =>
      options.require_pushed_authorization_requests || client.settings[REQUIRE_PAR] === true;

    api.discovery({
      pushed_authorization_request_endpoint: web.url(ENDPOINT_MOUNT),
      require_pushed_authorization_requests: options.require_pushed_authorization_requests,
    });
    api.authorizationRequests({
      async resolve({ client, requestUri }) {
        // Request objects by reference (RFC 9101) are not supported: only pushed requests' URNs.
        if (!requestUri.startsWith(REQUEST_URI_PREFIX)) {
          throw new OAuthError(
            'request_uri_not_supported',
            'Only request_uri values of pushed requests are supported.',
          );
        }
        const params = await requests.take(client.clientId, requestUri);
        if (!params) throw new OAuthError('invalid_request_uri', 'The request_uri is unknown, expired or used.');
        return params;
      },
      required,
    });

    const router = services.http.createRouter();
    router.post(
      '/',
      services.http.form(),
      pushedAuthorization(web, requests, {
        expiresIn: options.expires_in,
        pushes: web.limit('push', options.pushes.max, options.pushes.window_seconds),
      }),
    );
    api.routes.add({ path: ENDPOINT_MOUNT, router, operations: [pushedAuthorizationRoute] });
    // A single-page app (a public client) pushes from its own origin: CORS for the apps' allowed_origins.
    api.cors([ENDPOINT_MOUNT]);
  },
});
