import { definePlugin, z } from '@gatehouse-auth/core';
import { audiencesConfig, resourceObjectsConfig } from './targets.js';
import { tokenExchangeGrant } from './grant.js';

export { tokenExchangeGrant, exchangedClaims, TOKEN_EXCHANGE } from './grant.js';
export { resolveAudience } from './targets.js';
export { FILE_SCOPES } from './scope.js';
export type { Restriction } from './restriction.js';

/**
 * @gatehouse-auth/grant-token-exchange: RFC 8693 token exchange for down-scoped access tokens and
 * annotator tokens (an ID token as actor_token becomes the `act` claim). Targets are limited to
 * the app's `audiences` and `resource_objects`; a resource object narrows the new token to that
 * object and file scopes (`restricted_to`). The subject token must be an active access token of
 * or for the client.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/grant-token-exchange'
 */
export default definePlugin({
  name: '@gatehouse-auth/grant-token-exchange',
  apiVersion: '^1',
  options: z.strictObject({}).default({}),
  appConfig: { audiences: audiencesConfig, resource_objects: resourceObjectsConfig },
  register(api) {
    api.grants.add(tokenExchangeGrant(api.services.clock));
  },
});
