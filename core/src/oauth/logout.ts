import type { Clock, EventLog, IdTokenHint, JsonObject } from '@gatehouse-auth/plugin-api';
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import type { Logger } from 'pino';
import type { JobHandler, JobQueue } from '../jobs/queue.js';
import { randomToken, sha256 } from '../util/crypto.js';
import type { ClientRegistry } from './clients.js';
import { signJwt } from './jws.js';
import type { KeyStore } from './keys.js';
import type { SessionStore } from './sessions.js';
import type { TokenService } from './tokens.js';

export const BACKCHANNEL_LOGOUT_JOB = 'backchannel_logout';
/** OpenID Connect Back-Channel Logout 1.0 §2.4: the event a logout token carries. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** How long an app may take to answer one logout notice. */
const NOTICE_TIMEOUT_MS = 5_000;
/** How long notices to an app that does not answer are retried. */
const NOTICE_RETRY_MS = 3_600_000;

interface NoticeJob {
  client_id: string;
  sub: string;
  sid: string;
}

/**
 * The token a sign-out form echoes (the end-session endpoint's confirmation, the hosted login
 * page's "Not you?"): bound to this browser's session cookie, so no other site can post one.
 */
export function logoutCsrf(sessionCookie: string): string {
  return sha256(`logout:${sessionCookie}`);
}

/**
 * Ending sign-ins: a session ends on every node at once (the database), takes the tokens issued
 * in it along (their grants are revoked), and each app that received tokens in it and
 * registered a `backchannel_logout_uri` is sent a logout token (OpenID Connect Back-Channel
 * Logout 1.0) through the background jobs, retried for an hour.
 */
export class LogoutService {
  constructor(
    private readonly deps: {
      issuer: string;
      sessions: SessionStore;
      tokens: TokenService;
      clients: ClientRegistry;
      keys: KeyStore;
      jobs: JobQueue;
      events: EventLog;
      clock: Clock;
      logger: Logger;
    },
  ) {}

  /** The background job that delivers logout notices (registered with the queue at start-up). */
  noticeJob(): JobHandler {
    return {
      kind: BACKCHANNEL_LOGOUT_JOB,
      maxAttempts: 8,
      run: (payload) => this.notify(payload as unknown as NoticeJob),
      describe: (payload) => ({ userId: String(payload.sub), clientId: String(payload.client_id) }),
    };
  }

  /** Ends one session; false if it had ended already (then nothing else happens). */
  async endSession(sid: string, reason: string): Promise<boolean> {
    const userId = await this.deps.sessions.end(sid);
    if (!userId) return false;
    await this.deps.tokens.revokeSession(userId, sid, `logout:${reason}`);
    const expiresAt = new Date(this.deps.clock.now().getTime() + NOTICE_RETRY_MS);
    for (const clientId of await this.deps.sessions.clientsOf(sid)) {
      if (!this.deps.clients.get(clientId)?.backchannelLogoutUri) continue;
      const job: NoticeJob = { client_id: clientId, sub: userId, sid };
      await this.deps.jobs.enqueue({ kind: BACKCHANNEL_LOGOUT_JOB, payload: job as unknown as JsonObject, expiresAt });
    }
    await this.deps.events.record({ type: 'session.ended', userId, reason });
    return true;
  }

  /** Ends every session of a user (a new password, a removed method, an admin's request). */
  async endUserSessions(userId: string, reason: string): Promise<number> {
    const sids = new Set((await this.deps.sessions.ofUser(userId)).map((s) => s.sid));
    let ended = 0;
    for (const sid of sids) if (await this.endSession(sid, reason)) ended++;
    return ended;
  }

  /**
   * An `id_token_hint` (RP-Initiated Logout 1.0 §2): an ID token this server signed, possibly
   * expired (the spec asks OPs to accept those); null when it is not one. Our access tokens
   * (`at+jwt`) and logout tokens (`logout+jwt`) are signed by the same keys: the `typ` header
   * tells them apart, so neither can sign a user out without the confirmation.
   */
  async readIdTokenHint(token: string): Promise<IdTokenHint | null> {
    try {
      const { kid, typ } = decodeProtectedHeader(token);
      if (typ !== undefined && typ.toUpperCase() !== 'JWT') return null;
      const jwk = (await this.deps.keys.jwks()).keys.find((k) => k.kid === kid);
      if (!jwk?.alg) return null;
      const { payload } = await compactVerify(token, await importJWK(jwk, jwk.alg), { algorithms: [jwk.alg] });
      const claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
      const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
      const clientIds = aud.filter((a): a is string => typeof a === 'string');
      // The party it was issued to: `azp` (one of the audience), else the only audience.
      const azp = typeof claims.azp === 'string' ? claims.azp : clientIds.length === 1 ? clientIds[0] : undefined;
      if (claims.iss !== this.deps.issuer || typeof claims.sub !== 'string' || !azp || !clientIds.includes(azp))
        return null;
      return { sub: claims.sub, clientId: azp, clientIds, sid: typeof claims.sid === 'string' ? claims.sid : null };
    } catch {
      return null;
    }
  }

  /** A logout token for one app, signed like ID tokens (§2.4). */
  async logoutToken(clientId: string, sub: string, sid: string): Promise<string> {
    const iat = Math.floor(this.deps.clock.now().getTime() / 1000);
    return signJwt(
      await this.deps.keys.signer(this.deps.clients.get(clientId)?.idTokenAlg),
      { typ: 'logout+jwt' },
      {
        iss: this.deps.issuer,
        aud: clientId,
        iat,
        exp: iat + 120,
        jti: randomToken(16),
        sub,
        sid,
        events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
      },
    );
  }

  /** One delivery of a logout notice; anything but 200/204 is retried (§2.8). */
  private async notify(job: NoticeJob): Promise<void> {
    const uri = this.deps.clients.get(job.client_id)?.backchannelLogoutUri;
    if (!uri) return; // the app no longer wants notices
    const response = await fetch(uri, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ logout_token: await this.logoutToken(job.client_id, job.sub, job.sid) }),
      redirect: 'manual',
      signal: AbortSignal.timeout(NOTICE_TIMEOUT_MS),
    });
    await response.body?.cancel().catch(() => undefined);
    if (response.status !== 200 && response.status !== 204) throw new Error(`the app answered ${response.status}`);
  }
}
