import { absoluteUrl, definePlugin, z, type OAuthClient, type Services } from '@gatehouse-auth/core';

/** The background job that delivers one notice (its outcome events: `backchannel_logout.done` / `.failed`). */
export const BACKCHANNEL_LOGOUT_JOB = 'backchannel_logout';
/** OpenID Connect Back-Channel Logout 1.0 §2.4: the event a logout token carries. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** How long an app may take to answer one logout notice. */
const NOTICE_TIMEOUT_MS = 5_000;
/** How long notices to an app that does not answer are retried. */
const NOTICE_RETRY_MS = 3_600_000;

/** The app keys (§2.2): where notices go, and whether the app needs `sid` (always sent). */
export const backchannelAppConfig = {
  backchannel_logout_uri: absoluteUrl({ noFragment: true }).optional(),
  backchannel_logout_session_required: z.boolean().default(false),
};

interface NoticeJob {
  client_id: string;
  sub: string;
  sid: string;
}

/** An app's `backchannel_logout_uri`, if it registered one. */
const noticeUri = (client: OAuthClient | null): string | undefined =>
  client?.settings.backchannel_logout_uri as string | undefined;

/** A logout token for one app (§2.4), signed like its ID tokens (`logout+jwt`, its `idTokenAlg`). */
export async function logoutToken(services: Services, client: OAuthClient, sub: string, sid: string): Promise<string> {
  const iat = Math.floor(services.clock.now().getTime() / 1000);
  return services.signJwt(
    'logout+jwt',
    {
      aud: client.clientId,
      iat,
      exp: iat + 120,
      jti: services.crypto.randomToken(16),
      sub,
      sid,
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    },
    client.idTokenAlg,
  );
}

/**
 * @gatehouse-auth/oauth-backchannel-logout: OpenID Connect Back-Channel Logout 1.0. When a sign-in
 * session ends (RP-initiated logout, "Not you?", an admin's request, a new password: every way the
 * core ends one), each app that got tokens in it and registered a `backchannel_logout_uri` is
 * POSTed a logout token (`sub`, `sid`), by a durable background job retried for an hour; anything
 * but 200/204 is retried. Discovery says `backchannel_logout_supported` and
 * `backchannel_logout_session_supported`. Left out of `plugins:`, an app with either key stops
 * start-up naming this plugin.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/oauth-backchannel-logout'
 * apps:
 *   - client_id: web
 *     backchannel_logout_uri: https://app.example/backchannel-logout
 */
export default definePlugin({
  name: '@gatehouse-auth/oauth-backchannel-logout',
  apiVersion: '^1.3',
  appConfig: backchannelAppConfig,
  // Logout tokens go there: https outside dev_mode, checked by the core.
  appUrlKeys: ['backchannel_logout_uri'],
  register(api) {
    const { services, web } = api;
    const enqueue = api.job({
      kind: BACKCHANNEL_LOGOUT_JOB,
      maxAttempts: 8,
      // One delivery (§2.5); anything but 200/204 is retried (§2.8).
      async run(payload) {
        const job = payload as unknown as NoticeJob;
        const client = web.client(job.client_id);
        const uri = noticeUri(client);
        if (!client || !uri) return; // the app no longer wants notices
        const response = await fetch(uri, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ logout_token: await logoutToken(services, client, job.sub, job.sid) }),
          redirect: 'manual',
          signal: AbortSignal.timeout(NOTICE_TIMEOUT_MS),
        });
        await response.body?.cancel().catch(() => undefined);
        if (response.status !== 200 && response.status !== 204) throw new Error(`the app answered ${response.status}`);
      },
      describe: (payload) => ({ userId: String(payload.sub), clientId: String(payload.client_id) }),
    });
    api.sessionEnded(async ({ sub, sid, clientIds }) => {
      const expiresAt = new Date(services.clock.now().getTime() + NOTICE_RETRY_MS);
      for (const clientId of clientIds) {
        if (noticeUri(web.client(clientId))) await enqueue({ client_id: clientId, sub, sid }, expiresAt);
      }
    });
    api.discovery({ backchannel_logout_supported: true, backchannel_logout_session_supported: true });
  },
});
