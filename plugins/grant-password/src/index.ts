import { definePlugin, z } from '@gatehouse-auth/core';
import { passwordGrant } from './grant.js';

export { passwordGrant, PASSWORD, PASSWORD_METHOD } from './grant.js';

/**
 * @gatehouse-auth/grant-password: the resource owner password grant, for legacy first-party apps
 * only. Off unless an app lists `password` in `grant_types` (RFC 9700 §2.4: MUST NOT be used).
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/grant-password'
 */
export default definePlugin({
  name: '@gatehouse-auth/grant-password',
  apiVersion: '^1',
  options: z.strictObject({}).default({}),
  register(api) {
    api.grants.add(passwordGrant(api.services));
  },
});
