import { definePlugin, z } from '@gatehouse-auth/core';
import { authorizationCodeGrant } from './grant.js';

export { authorizationCodeGrant, wantsRefreshToken, AUTHORIZATION_CODE } from './grant.js';
export { checkPkce } from './pkce.js';

/**
 * @gatehouse-auth/grant-authorization-code: redeems authorization codes at the token endpoint —
 * single use (a replay revokes the grant), bound to the client, the redirect_uri and the PKCE
 * challenge (S256 only).
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/grant-authorization-code'
 */
export default definePlugin({
  name: '@gatehouse-auth/grant-authorization-code',
  apiVersion: '^1',
  options: z.strictObject({}).default({}),
  register(api) {
    api.grants.add(authorizationCodeGrant(api.services));
  },
});
