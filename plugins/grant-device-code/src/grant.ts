import {
  OAuthError,
  type GrantContext,
  type GrantHandler,
  type Services,
  type TokenResponse,
} from '@gatehouse-auth/core';
import type { DeviceGrants } from './store.js';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 8628 §3.5: every error of the polling answer is a 400 (RFC 6749 §5.2). */
const deviceError = (code: string, description: string) => new OAuthError(code, description, 400);

/** RFC 8628 §3.5: the interval grows by 5 seconds at each slow_down. */
export const SLOW_DOWN_STEP = 5;

/**
 * The device_code grant (RFC 8628 §3.4, §3.5): the device polls with its device_code until the
 * user answered on the user code page. Order: the code is known and this client's (else
 * invalid_grant, alike for both), not expired, answered (denied → access_denied; approved →
 * the request is consumed, so exactly one poll gets tokens), then the polling pace.
 */
export function deviceCodeGrant(grants: DeviceGrants, services: Pick<Services, 'clock'>): GrantHandler {
  return {
    grantType: DEVICE_CODE_GRANT,
    parameters: ['device_code'],
    errors: [
      'authorization_pending',
      { code: 'slow_down', status: 400, description: 'polled faster than the interval; it grows by 5 s (RFC 8628)' },
      'expired_token',
      { code: 'access_denied', status: 400, description: 'the user denied the device (RFC 8628)' },
    ],
    async handle(ctx: GrantContext): Promise<TokenResponse> {
      const { client, params, oauth } = ctx;
      if (params.device_code === undefined) throw new OAuthError('invalid_request', 'device_code is required');
      const device = grants.deviceKey(params.device_code);
      const request = await grants.request(device);
      if (!request || request.clientId !== client.clientId)
        throw new OAuthError('invalid_grant', 'invalid device_code');
      const now = services.clock.now().getTime();
      if (request.expiresAt <= now) throw deviceError('expired_token', 'the device_code has expired');
      const decision = await grants.decision(device);
      if (decision && !decision.approved) throw deviceError('access_denied', 'the user denied the request');
      if (decision) {
        // Consumed: a second poll, concurrent or later, finds no request (invalid_grant).
        if (!(await grants.take(device))) throw new OAuthError('invalid_grant', 'invalid device_code');
        const user = await oauth.users.findById(decision.userId);
        if (!user || user.status !== 'active') throw new OAuthError('invalid_grant', 'the user is no longer active');
        ctx.logger.info({ clientId: client.clientId, userId: decision.userId }, 'device code redeemed');
        return oauth.issue({
          client,
          subject: decision.userId,
          scope: request.scope,
          grantType: DEVICE_CODE_GRANT,
          refreshToken: client.grantTypes.includes('refresh_token'),
          idToken: { authTime: decision.authTime, amr: decision.amr },
          // No sid: the device's grant is its own, not the phone browser's session, so signing out
          // of that browser does not sign the TV out (RFC 8628 §5.6: the device is another client).
          grantData: { auth_time: decision.authTime, amr: decision.amr },
        });
      }
      const state = await grants.poll(device);
      const interval = state?.interval ?? request.interval;
      if (state && now - state.last < interval * 1000) {
        await grants.polled(device, request, { last: now, interval: interval + SLOW_DOWN_STEP });
        throw deviceError('slow_down', `poll at most every ${interval + SLOW_DOWN_STEP} seconds`);
      }
      await grants.polled(device, request, { last: now, interval });
      throw deviceError('authorization_pending', 'the user has not answered yet');
    },
  };
}
