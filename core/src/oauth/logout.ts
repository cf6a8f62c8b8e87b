import type { EventLog, IdTokenHint } from '@gatehouse-auth/plugin-api';
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import type { Logger } from 'pino';
import type { Extensions } from '../plugins/loader.js';
import { sha256 } from '../util/crypto.js';
import type { KeyStore } from './keys.js';
import type { SessionStore } from './sessions.js';
import type { TokenService } from './tokens.js';

/**
 * The token a sign-out form echoes (the end-session endpoint's confirmation, the hosted login
 * page's "Not you?"): bound to this browser's session cookie, so no other site can post one.
 */
export function logoutCsrf(sessionCookie: string): string {
  return sha256(`logout:${sessionCookie}`);
}

/**
 * Ending sign-ins: a session ends on every node at once (the database), takes the tokens issued
 * in it along (their grants are revoked), and the plugins' `sessionEnded` listeners are told,
 * with the apps it touched (back-channel logout is one, decision 71), before the call returns.
 */
export class LogoutService {
  constructor(
    private readonly deps: {
      issuer: string;
      sessions: SessionStore;
      tokens: TokenService;
      keys: KeyStore;
      events: EventLog;
      extensions: Extensions;
      logger: Logger;
    },
  ) {}

  /** Ends one session; false if it had ended already (then nothing else happens). */
  async endSession(sid: string, reason: string): Promise<boolean> {
    const userId = await this.deps.sessions.end(sid);
    if (!userId) return false;
    await this.deps.tokens.revokeSession(userId, sid, `logout:${reason}`);
    const ended = { sub: userId, sid, clientIds: await this.deps.sessions.clientsOf(sid), reason };
    for (const { plugin, listener } of this.deps.extensions.sessionEnded.values()) {
      try {
        await listener(ended);
      } catch (err) {
        this.deps.logger.error({ err, plugin }, 'a session end listener failed');
      }
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
}
