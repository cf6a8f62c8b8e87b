import {
  OAuthError,
  type GrantContext,
  type GrantHandler,
  type OAuthClient,
  type Services,
  type TokenResponse,
} from '@gatehouse-auth/core';

export const PASSWORD = 'password';
/** The verification method that checks the password (@gatehouse-auth/method-password). */
export const PASSWORD_METHOD = 'PASSWORD';

/**
 * The password grant can prove one factor only. An app whose login needs more than the password
 * (a second stage, or a first stage without PASSWORD) would have its MFA bypassed, so refuse.
 */
function checkLoginStages(client: OAuthClient): void {
  const stages = client.loginStages;
  if (stages.length === 0) return;
  if (stages.length > 1 || !stages[0]!.includes(PASSWORD_METHOD)) {
    throw new OAuthError('unauthorized_client', 'this client requires an interactive login; use authorization_code');
  }
}

/**
 * The resource owner password credentials grant (RFC 6749 §4.3). RFC 9700 §2.4 says it MUST NOT
 * be used; it exists for legacy first-party apps and the core only dispatches here for a client
 * that lists `password` in its grant types. The password is checked by the core through the
 * PASSWORD method plugin and the FDS rules, with the same events as a login, so brute force here
 * is counted and throttled exactly like brute force on the login page.
 */
export function passwordGrant(services: Pick<Services, 'clock'>): GrantHandler {
  return {
    grantType: PASSWORD,
    parameters: ['username', 'password', 'scope'],
    async handle(ctx: GrantContext): Promise<TokenResponse> {
      const { client, params, oauth } = ctx;
      // The core already refuses clients without the grant; an off-by-default grant checks again.
      if (!client.grantTypes.includes(PASSWORD)) {
        throw new OAuthError('unauthorized_client', 'client may not use the password grant');
      }
      checkLoginStages(client);
      const { username, password } = params;
      if (username === undefined) throw new OAuthError('invalid_request', 'username is required');
      if (password === undefined) throw new OAuthError('invalid_request', 'password is required');
      const scope = oauth.resolveScope(params.scope, client.scopes, client.scopes);
      const result = await oauth.authenticateUser({
        identifier: username,
        method: PASSWORD_METHOD,
        fields: { password },
        clientId: client.clientId,
      });
      // Never say whether the user, the password or a fraud rule failed.
      if (!result.ok) throw new OAuthError('invalid_grant', 'invalid resource owner credentials');
      const authTime = Math.floor(services.clock.now().getTime() / 1000);
      return oauth.issue({
        client,
        subject: result.userId,
        scope,
        grantType: PASSWORD,
        refreshToken: client.grantTypes.includes('refresh_token'),
        idToken: { authTime, amr: result.amr },
        grantData: { auth_time: authTime, amr: result.amr },
      });
    },
  };
}
