import { OAuthError, type Clock, type GrantContext, type GrantHandler, type TokenResponse } from '@gatehouse-auth/core';
import { assertionIssuersOf, verifyAssertion } from './assertion.js';

export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** No refresh token is issued, so offline access cannot be granted. */
const NOT_GRANTABLE = ['offline_access'];

/**
 * The JWT bearer assertion grant (RFC 7523 §2.1): an authenticated client presents a JWT signed
 * by an issuer it trusts, naming a user in `sub`, and gets an access token (and an ID token with
 * `openid`) for that user. The assertion is single use. No refresh token.
 */
export function jwtBearerGrant(deps: { clock: Clock }): GrantHandler {
  return {
    grantType: JWT_BEARER,
    parameters: ['assertion', 'scope'],
    async handle(ctx: GrantContext): Promise<TokenResponse> {
      const { client, params, oauth } = ctx;
      if (client.isPublic) throw new OAuthError('unauthorized_client', 'public clients may not use assertion grants');
      if (!params.assertion) throw new OAuthError('invalid_request', 'assertion is required');
      const now = deps.clock.now();
      const assertion = await verifyAssertion(params.assertion, {
        issuers: assertionIssuersOf(client),
        audiences: oauth.assertionAudiences,
        now,
      });

      const user =
        (await oauth.users.findById(assertion.subject)) ?? (await oauth.users.findByIdentifier(assertion.subject));
      // Unknown and disabled read alike.
      if (!user || user.status !== 'active')
        throw new OAuthError('invalid_grant', 'assertion subject is not an active user');

      const allowed = client.scopes.filter((s) => !NOT_GRANTABLE.includes(s));
      const scope = oauth.resolveScope(params.scope, allowed, allowed);

      // Used up last, so a request refused for another reason leaves the assertion usable.
      if (!(await oauth.useAssertionId(`jwt-bearer:${assertion.issuer}`, assertion.jti, assertion.usableUntil))) {
        throw new OAuthError('invalid_grant', 'assertion was already used');
      }
      return oauth.issue({
        client,
        subject: user.id,
        scope,
        grantType: JWT_BEARER,
        refreshToken: false,
        // No amr: the issuer's authentication methods are unknown and RFC 8176 has no value for an assertion.
        ...(scope.includes('openid') ? { idToken: { authTime: Math.floor(now.getTime() / 1000) } } : {}),
      });
    },
  };
}
