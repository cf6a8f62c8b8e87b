import {
  OAuthError,
  type GrantContext,
  type GrantHandler,
  type GrantRecord,
  type JsonObject,
  type StoredToken,
  type TokenResponse,
} from '@gatehouse-auth/core';

export const REFRESH_TOKEN = 'refresh_token';

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

/** auth_time and amr as the grant recorded them at login, for the ID token of a refresh. */
export function authenticationOf(data: JsonObject): { authTime?: number; amr?: string[] } {
  const authTime = typeof data.auth_time === 'number' ? data.auth_time : undefined;
  const amr = Array.isArray(data.amr) ? data.amr.filter((v): v is string => typeof v === 'string') : undefined;
  return { ...(authTime !== undefined ? { authTime } : {}), ...(amr ? { amr } : {}) };
}

/**
 * A rotated refresh token presented again: someone holds a copy. The whole family goes — the
 * newest refresh token and every access token of the grant (RFC 9700 §4.14.2). No grace period.
 */
async function refuseReuse(ctx: GrantContext, token: StoredToken): Promise<never> {
  await ctx.oauth.grants.revoke(token.grantId, 'refresh_reuse');
  ctx.logger.warn({ clientId: ctx.client.clientId, grantId: token.grantId }, 'refresh token reused; grant revoked');
  throw invalidGrant('refresh token already used');
}

/**
 * The refresh_token grant (RFC 6749 §6) with rotation: every refresh marks the presented token
 * rotated (a conditional update) and issues a successor in the same grant, which keeps the
 * grant's absolute expiry. Order: the token exists, is a refresh token and belongs to this client
 * (before anything can revoke), reuse, still active, scope; then rotate and issue.
 */
export function refreshTokenGrant(): GrantHandler {
  return {
    grantType: REFRESH_TOKEN,
    parameters: ['refresh_token', 'scope'],
    async handle(ctx: GrantContext): Promise<TokenResponse> {
      const { client, params, oauth } = ctx;
      if (params.refresh_token === undefined) throw new OAuthError('invalid_request', 'refresh_token is required');
      const info = await oauth.inspect(params.refresh_token);
      const token = info.token;
      // Unknown, an access token, or another client's: all look the same and revoke nothing.
      if (!token || token.kind !== 'refresh' || token.clientId !== client.clientId) {
        throw invalidGrant('invalid refresh token');
      }
      if (token.rotatedAt) return refuseReuse(ctx, token);
      const grant: GrantRecord | undefined = info.grant;
      if (!info.active || !grant) throw invalidGrant('refresh token expired or revoked');
      const scope = oauth.resolveScope(params.scope, token.scope, token.scope);
      // A subject that was deleted or disabled ends the family.
      if (token.subject) {
        const user = await oauth.users.findById(token.subject);
        if (!user || user.status !== 'active') {
          await oauth.grants.revoke(token.grantId, 'subject_inactive');
          throw invalidGrant('the user of this grant is no longer active');
        }
      }
      // Lost the race to a concurrent refresh with the same token: that is reuse as well.
      if (!(await oauth.refreshTokens.rotate(token))) return refuseReuse(ctx, token);
      return oauth.issue({
        client,
        subject: token.subject,
        scope,
        // The refresh token keeps the original scope, so a later refresh may ask for it again.
        refreshScope: token.scope,
        grantType: REFRESH_TOKEN,
        grantId: token.grantId,
        refreshToken: true,
        parentRefreshKey: token.key,
        idToken: authenticationOf(grant.data),
      });
    },
  };
}
