import { definePlugin, z } from '@gatehouse-auth/core';
import { samlIssuersConfig } from './keys.js';
import { saml2BearerGrant } from './grant.js';

export { saml2BearerGrant, SAML2_BEARER, type Saml2BearerSettings } from './grant.js';
export { verifyAssertionSignature, type VerifiedAssertion, type TrustedKeys } from './verify.js';
export { checkClaims, BEARER_METHOD, type AssertionClaims, type ClaimChecks } from './claims.js';
export { AssertionRejected } from './rejection.js';

/**
 * @gatehouse-auth/grant-saml2-bearer: the RFC 7522 SAML 2.0 bearer assertion grant. A client trades an
 * assertion signed by one of its `saml_issuers` for an access token for the NameID's user.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/grant-saml2-bearer'
 *     options: { clock_skew_seconds: 60 }
 */
export default definePlugin({
  name: '@gatehouse-auth/grant-saml2-bearer',
  apiVersion: '^1',
  options: z
    .strictObject({
      /** Allowed clock difference with the IdPs for NotBefore / NotOnOrAfter. */
      clock_skew_seconds: z.number().int().min(0).max(300).default(60),
    })
    .default({ clock_skew_seconds: 60 }),
  appConfig: { saml_issuers: samlIssuersConfig },
  register(api, options) {
    api.grants.add(saml2BearerGrant({ clock: api.services.clock, clockSkewSeconds: options.clock_skew_seconds }));
  },
});
