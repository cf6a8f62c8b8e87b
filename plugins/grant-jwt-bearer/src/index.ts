import { definePlugin, z } from '@gatehouse-auth/core';
import { jwtBearerGrant } from './grant.js';
import { assertionIssuersConfig } from './assertion.js';

export { jwtBearerGrant, JWT_BEARER } from './grant.js';
export {
  verifyAssertion,
  assertionIssuersConfig,
  assertionIssuersOf,
  ASSERTION_ALGORITHMS,
  CLOCK_TOLERANCE_SECONDS,
  MAX_ASSERTION_LIFETIME_SECONDS,
  type AssertionCheck,
  type VerifiedAssertion,
} from './assertion.js';

/**
 * @gatehouse-auth/grant-jwt-bearer: the RFC 7523 JWT bearer assertion grant. A confidential client
 * trades a JWT signed by one of its `assertion_issuers` for tokens of the user named in `sub`.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/grant-jwt-bearer'
 */
export default definePlugin({
  name: '@gatehouse-auth/grant-jwt-bearer',
  apiVersion: '^1',
  options: z.strictObject({}).default({}),
  appConfig: { assertion_issuers: assertionIssuersConfig },
  register(api) {
    api.grants.add(jwtBearerGrant({ clock: api.services.clock }));
  },
});
