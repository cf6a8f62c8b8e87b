import { definePlugin, z } from '@gatehouse-auth/core';
import { refreshTokenGrant, reuseIntervalConfig } from './grant.js';

export { refreshTokenGrant, authenticationOf, REFRESH_TOKEN, type RefreshGrantDeps } from './grant.js';

/**
 * @gatehouse-auth/grant-refresh-token: refresh with rotation; presenting a rotated token again
 * revokes the whole grant; scope may only narrow; the grant's absolute expiry bounds the family.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/grant-refresh-token'
 */
export default definePlugin({
  name: '@gatehouse-auth/grant-refresh-token',
  apiVersion: '^1',
  options: z.strictObject({}).default({}),
  appConfig: { refresh_token_reuse_interval: reuseIntervalConfig },
  register(api) {
    api.grants.add(refreshTokenGrant({ records: api.records, services: api.services }));
  },
});
