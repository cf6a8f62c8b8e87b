import { OAuthError, type Clock, type GrantContext, type GrantHandler, type TokenResponse } from '@gatehouse-auth/core';
import { checkClaims } from './claims.js';
import { decodeAssertion } from './encoding.js';
import { IssuerKeys } from './keys.js';
import { AssertionRejected } from './rejection.js';
import { verifyAssertionSignature } from './verify.js';

export const SAML2_BEARER = 'urn:ietf:params:oauth:grant-type:saml2-bearer';

export interface Saml2BearerSettings {
  clock: Clock;
  /** Allowed clock difference with the IdP, in seconds. */
  clockSkewSeconds: number;
}

/**
 * The SAML 2.0 bearer assertion grant (RFC 7522 §2.1): a client presents an assertion signed by
 * an IdP it trusts (`saml_issuers`) and gets an access token for the user the assertion names.
 * No refresh token: the client can ask the IdP for a new assertion.
 */
export function saml2BearerGrant(settings: Saml2BearerSettings): GrantHandler {
  const issuerKeys = new IssuerKeys();
  return {
    grantType: SAML2_BEARER,
    parameters: ['assertion', 'scope'],
    async handle(ctx: GrantContext): Promise<TokenResponse> {
      const { client, params, oauth } = ctx;
      // An assertion grant needs an authenticated client.
      if (client.isPublic) throw new OAuthError('unauthorized_client', 'public clients may not use assertion grants');
      if (!params.assertion) throw new OAuthError('invalid_request', 'assertion is required');
      const xml = decodeAssertion(params.assertion);
      const audiences = [...new Set([oauth.tokenEndpoint, ...oauth.assertionAudiences])];

      let verified;
      let claims;
      try {
        verified = verifyAssertionSignature(xml, (issuer) => issuerKeys.keysFor(client, issuer));
        claims = checkClaims(verified.assertion, {
          now: settings.clock.now(),
          audiences,
          skewSeconds: settings.clockSkewSeconds,
        });
      } catch (err) {
        if (!(err instanceof AssertionRejected)) throw err;
        ctx.logger.info({ clientId: client.clientId, reason: err.detail }, 'saml2-bearer assertion rejected');
        throw new OAuthError('invalid_grant', err.description);
      }

      const user = (await oauth.users.findById(claims.subject)) ?? (await oauth.users.findByIdentifier(claims.subject));
      if (!user || user.status !== 'active') {
        throw new OAuthError('invalid_grant', 'assertion subject is not an active user');
      }
      // Refresh tokens are not issued here, so offline_access cannot be granted.
      const allowed = client.scopes.filter((s) => s !== 'offline_access');
      const scope = oauth.resolveScope(params.scope, allowed, allowed);
      // Last, so a request refused for another reason does not burn the assertion.
      if (!(await oauth.useAssertionId(`saml2:${verified.issuer}`, verified.id, claims.replayUntil))) {
        throw new OAuthError('invalid_grant', 'assertion was already used');
      }
      return oauth.issue({ client, subject: user.id, scope, grantType: SAML2_BEARER, refreshToken: false });
    },
  };
}
