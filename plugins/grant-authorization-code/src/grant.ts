import {
  OAuthError,
  type AuthorizationCode,
  type GrantContext,
  type GrantHandler,
  type Services,
  type TokenResponse,
} from '@gatehouse-auth/core';
import { checkPkce } from './pkce.js';

export const AUTHORIZATION_CODE = 'authorization_code';

/**
 * Whether the redemption gets a refresh token: the client must have the refresh_token grant, and
 * an OpenID Connect request (scope `openid`) must also have asked for `offline_access`
 * (OIDC Core §11). Plain OAuth requests get one whenever the client has the grant.
 */
export function wantsRefreshToken(grantTypes: string[], scope: string[]): boolean {
  return grantTypes.includes('refresh_token') && (scope.includes('offline_access') || !scope.includes('openid'));
}

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

/** RFC 6749 §4.1.3: the same redirect_uri as the authorization request, byte for byte. */
function checkRedirectUri(code: AuthorizationCode, redirectUri: string | undefined): void {
  if (redirectUri === undefined) {
    // Only a request that named no redirect_uri (one registered) may leave it out here too.
    if (!code.redirectUriSent) return;
    throw invalidGrant('redirect_uri is required');
  }
  if (redirectUri !== code.redirectUri) throw invalidGrant('redirect_uri does not match the authorization request');
}

/** A second redemption: every token of the first one dies with the grant (RFC 6749 §4.1.2). */
async function refuseReplay(ctx: GrantContext, code: AuthorizationCode): Promise<never> {
  await ctx.oauth.grants.revoke(code.grantId, 'code_reuse');
  ctx.logger.warn({ clientId: ctx.client.clientId, grantId: code.grantId }, 'authorization code reused; grant revoked');
  throw invalidGrant('authorization code already used');
}

/**
 * The authorization_code grant (RFC 6749 §4.1.3, PKCE RFC 7636). Validation order: the code
 * exists and belongs to this client (before anything can revoke), redirect_uri, PKCE, replay,
 * expiry, the grant still alive; the code is consumed only once every check passed, by a conditional update.
 */
export function authorizationCodeGrant(services: Pick<Services, 'clock' | 'crypto'>): GrantHandler {
  return {
    grantType: AUTHORIZATION_CODE,
    parameters: ['code', 'redirect_uri', 'code_verifier'],
    async handle(ctx: GrantContext): Promise<TokenResponse> {
      const { client, params, oauth } = ctx;
      if (params.code === undefined) throw new OAuthError('invalid_request', 'code is required');
      const code = await oauth.codes.find(params.code);
      // A stranger's code and an unknown code look the same, and neither revokes anything.
      if (!code || code.clientId !== client.clientId) throw invalidGrant('invalid authorization code');
      checkRedirectUri(code, params.redirect_uri);
      checkPkce(code, client, params.code_verifier, services.crypto);
      // RFC 9449 §10: a code bound to a key (dpop_jkt) is redeemed only with a proof of that key.
      if (code.dpopJkt && oauth.proofKey !== code.dpopJkt) {
        throw invalidGrant(
          oauth.proofKey
            ? 'the DPoP proof is not of the key the code is bound to'
            : 'a DPoP proof of the key the code is bound to is required',
        );
      }
      if (code.usedAt) return refuseReplay(ctx, code);
      if (code.expiresAt <= services.clock.now()) throw invalidGrant('authorization code expired');
      // A logout or a reuse revoked the grant since the code was issued: its tokens would be dead.
      if (!code.grant || code.grant.revokedAt) throw invalidGrant('authorization code revoked');
      const grant = code.grant;
      if (!(await oauth.codes.consume(code))) {
        // The conditional update lost: either a concurrent redemption won, or the code just expired.
        const now = await oauth.codes.find(params.code);
        if (now?.usedAt) return refuseReplay(ctx, code);
        throw invalidGrant('authorization code expired');
      }
      return oauth.issue({
        client,
        subject: code.subject,
        scope: code.scope,
        grantType: AUTHORIZATION_CODE,
        grantId: code.grantId,
        grant,
        refreshToken: wantsRefreshToken(client.grantTypes, code.scope),
        idToken: { nonce: code.nonce, authTime: code.authTime, amr: code.amr, code: params.code },
        grantData: { auth_time: code.authTime, amr: code.amr },
      });
    },
  };
}
