import {
  boundToAnother,
  unprovenBinding,
  OAuthError,
  z,
  type GrantContext,
  type GrantHandler,
  type GrantRecord,
  type JsonObject,
  type RecordStore,
  type Services,
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
 * The app setting `refresh_token_reuse_interval` (seconds, 0–60, default 0 = none): how long a
 * rotated refresh token still answers, with the very pair its rotation issued (docs/oauth.md,
 * "Refresh token rotation").
 */
export const reuseIntervalConfig = z.number().int().min(0).max(60).default(0);

/**
 * A rotated refresh token presented again: someone holds a copy. The whole family goes — the
 * newest refresh token and every access token of the grant (RFC 9700 §4.14.2).
 */
async function refuseReuse(ctx: GrantContext, token: StoredToken): Promise<never> {
  await ctx.oauth.grants.revoke(token.grantId, 'refresh_reuse');
  ctx.logger.warn({ clientId: ctx.client.clientId, grantId: token.grantId }, 'refresh token reused; grant revoked');
  throw invalidGrant('refresh token already used');
}

/** What a rotation issued, kept (encrypted) for the app's reuse interval. */
interface IssuedPair {
  sealed: string;
  /** Epoch ms of the rotation. */
  at: number;
}

/** How long a concurrent refresh waits for the rotation it lost to finish (ms). */
const RACE_WAIT_MS = 1000;
const RACE_POLL_MS = 25;

export interface RefreshGrantDeps {
  records: RecordStore;
  services: Pick<Services, 'secrets' | 'clock'>;
}

/**
 * The refresh_token grant (RFC 6749 §6) with rotation: every refresh marks the presented token
 * rotated (a conditional update) and issues a successor in the same grant, which keeps the
 * grant's absolute expiry. Order: the token exists, is a refresh token and belongs to this client
 * (before anything can revoke), reuse, still active, scope; then rotate and issue.
 *
 * With an app's reuse interval, the rotated token presented again within it (two tabs renewing
 * at once) answers the pair its rotation issued, while that pair's refresh token is unused; past
 * the interval, or once the successor was used, it is reuse and the family is revoked.
 */
export function refreshTokenGrant(deps: RefreshGrantDeps): GrantHandler {
  const reuseInterval = (ctx: GrantContext) =>
    reuseIntervalConfig.parse(ctx.client.settings.refresh_token_reuse_interval);

  /** The pair the rotation of `token` issued, when the app allows it to answer again; else null. */
  async function replay(ctx: GrantContext, token: StoredToken): Promise<TokenResponse | null> {
    const interval = reuseInterval(ctx);
    if (interval === 0) return null;
    const now = () => deps.services.clock.now().getTime();
    if (token.rotatedAt && now() - token.rotatedAt.getTime() > interval * 1000) return null;
    let record = await deps.records.get(`issued:${token.key}`);
    // A refresh that lost the race arrives while the winner is still issuing: wait for its pair.
    for (let waited = 0; !record && waited < RACE_WAIT_MS; waited += RACE_POLL_MS) {
      await new Promise((resolve) => setTimeout(resolve, RACE_POLL_MS));
      record = await deps.records.get(`issued:${token.key}`);
    }
    if (!record) return null;
    const issued = record.data as unknown as IssuedPair;
    if (now() - issued.at > interval * 1000) return null;
    const pair = JSON.parse(deps.services.secrets.decrypt(issued.sealed)) as TokenResponse;
    // Its refresh token used already: the old one is not a tab catching up any more.
    if (!pair.refresh_token || !(await ctx.oauth.inspect(pair.refresh_token)).active) return null;
    const elapsed = Math.floor((now() - issued.at) / 1000);
    const expiresIn = typeof pair.expires_in === 'number' ? Math.max(pair.expires_in - elapsed, 0) : undefined;
    return expiresIn === undefined ? pair : { ...pair, expires_in: expiresIn };
  }

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
      // Bound (DPoP key, client certificate; public clients): only with its proof may it be used, or revoke anything.
      const unproven = unprovenBinding(token, oauth.confirmation);
      if (unproven) throw invalidGrant(boundToAnother(unproven));
      // Rotated already: within the interval the rotation's pair may still be on its way to the
      // records (rotation commits first), so a tab that arrives between the two waits for it too.
      if (token.rotatedAt) return (await replay(ctx, token)) ?? refuseReuse(ctx, token);
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
      // FAPI 2.0 §5.3.2.1 (9): no rotation, so a client that lost a response simply retries with
      // the same token (decision 0053). A new access token (and ID token) under the same grant.
      // The app is held to FAPI 2.0 by the client policy of @gatehouse-auth/oauth-fapi (decision 80).
      if (client.policies?.includes('fapi2')) {
        return oauth.issue({
          client,
          subject: token.subject,
          scope,
          grantType: REFRESH_TOKEN,
          grantId: token.grantId,
          grant,
          refreshToken: false,
          idToken: authenticationOf(grant.data),
        });
      }
      // The rotation and the successor commit together: a failure between them spends nothing.
      const response = await oauth.refreshTokens.rotateAndIssue(token, {
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
      // Lost the race to a concurrent refresh with the same token: that is reuse as well.
      if (!response) return (await replay(ctx, token)) ?? refuseReuse(ctx, token);
      const interval = reuseInterval(ctx);
      if (interval > 0) {
        const issued: IssuedPair = {
          sealed: deps.services.secrets.encrypt(JSON.stringify(response)),
          at: deps.services.clock.now().getTime(),
        };
        await deps.records.put(`issued:${token.key}`, { ...issued }, { ttlSeconds: interval });
      }
      return response;
    },
  };
}
