import type { Request, Response } from 'express';
import { CALLBACK_PATH } from '../config/schema.js';
import { readCookie } from '../http/cookies.js';
import type { RecordStore, UserRecord } from '../plugins/extensions.js';
import type { Clock } from '../services.js';
import type { SessionStore } from '../oauth/sessions.js';
import type { TokenService } from '../oauth/tokens.js';
import type { BrowserBinding } from '../oauth/authorize/index.js';
import { randomToken, safeEqual, sha256 } from '../util/crypto.js';

/** A built-in app (the console, the account page): its client, where it lives, its cookie. */
export interface BuiltInSite {
  clientId: string;
  /** Its path under the issuer: '/console', '/account'. */
  path: string;
  /** The base of its cookie names ('gh_console'); `__Host-` is added on https. */
  cookie: string;
  /** How long a sign-in lasts, in seconds. */
  ttlSeconds: number;
  /** `max_age` of its sign-ins: how recent the factors must be (null: any the session has). */
  maxAge: number | null;
}

/** Someone signed in to a built-in app. */
export interface SiteSession {
  user: UserRecord;
  /** The browser session the sign-in rests on: it ends with it. */
  sid: string;
  authTime: number;
  amr: string[];
  /** The token every POST form of this sign-in must echo. */
  csrf: string;
}

/** Why a callback did not sign anyone in (each a page of its own, never a redirect). */
export type CallbackProblem = 'no_login' | 'state' | 'denied' | 'code';

export interface SignInDeps {
  config: { issuer: string };
  issuerPath: string;
  binding: BrowserBinding;
  tokens: TokenService;
  sessions: SessionStore;
  users: { findById(id: string): Promise<UserRecord | null> };
  clock: Clock;
}

/** A sign-in may take this long between leaving for /authorize and coming back. */
const LOGIN_TTL_SECONDS = 900;
const MAX_PARAM = 512;

/**
 * How a built-in app signs its users in through Gatehouse itself (decision 27): it sends the
 * browser to /authorize as any public client would (PKCE S256, state, nonce), takes the code
 * back at its callback, redeems it in-process with the same checks the token endpoint makes,
 * and keeps a session of its own in a cookie (HttpOnly, SameSite=Lax, `__Host-` on https).
 * The session rests on the browser session the code came from: ending that ends it.
 */
export class SiteSignIn {
  private readonly redirectUri: string;

  constructor(
    private readonly deps: SignInDeps,
    private readonly records: RecordStore,
    readonly site: BuiltInSite,
  ) {
    this.redirectUri = `${deps.config.issuer.replace(/\/+$/, '')}${site.path}${CALLBACK_PATH}`;
  }

  private cookieName(kind: 'session' | 'login'): string {
    return this.deps.binding.cookieName(`${this.site.cookie}_${kind}`);
  }

  /** HttpOnly, SameSite=Lax, Path=/; Secure on an https issuer (plain http is for loopback and dev_mode only). */
  private cookieOptions(maxAgeSeconds: number) {
    return this.deps.binding.cookieOptions(maxAgeSeconds);
  }

  /** Leaves for /authorize; `returnTo` (a path of this site) is where the callback ends. */
  async start(res: Response, returnTo: string): Promise<void> {
    const handle = randomToken(32);
    const state = randomToken(24);
    const nonce = randomToken(24);
    const verifier = randomToken(48);
    await this.records.put(
      `login:${sha256(handle)}`,
      { state, nonce, verifier, return_to: this.ownPath(returnTo) },
      { ttlSeconds: LOGIN_TTL_SECONDS },
    );
    res.cookie(this.cookieName('login'), handle, this.cookieOptions(LOGIN_TTL_SECONDS));
    const query = new URLSearchParams({
      client_id: this.site.clientId,
      redirect_uri: this.redirectUri,
      response_type: 'code',
      scope: 'openid',
      state,
      nonce,
      code_challenge: sha256(verifier),
      code_challenge_method: 'S256',
      ...(this.site.maxAge !== null ? { max_age: String(this.site.maxAge) } : {}),
    });
    res.redirect(303, `${this.deps.issuerPath}/api/oauth2/authorize?${query.toString()}`);
  }

  /** A path of this site, or the site's root: the callback never redirects anywhere else. */
  private ownPath(path: string): string {
    const root = `${this.deps.issuerPath}${this.site.path}`;
    const own = path === root || path.startsWith(`${root}/`) || path.startsWith(`${root}?`);
    const safe = own && !path.startsWith('//') && !/[\\\s]/.test(path);
    return safe && path.length <= MAX_PARAM ? path : root;
  }

  /**
   * The callback: the login this browser started (its cookie), the state it sent, then the code,
   * redeemed as the token endpoint would (client, redirect URI, PKCE, nonce, single use). On
   * success the session cookie is set and the path to go on to returned.
   */
  async callback(req: Request, res: Response): Promise<{ returnTo: string } | { problem: CallbackProblem }> {
    const handle = readCookie(req, this.cookieName('login'));
    res.clearCookie(this.cookieName('login'), this.cookieOptions(0));
    const login = handle && handle.length <= MAX_PARAM ? await this.records.consume(`login:${sha256(handle)}`) : null;
    if (!login) return { problem: 'no_login' };
    const pending = login.data as { state: string; nonce: string; verifier: string; return_to: string };
    const { state, code, error } = req.query;
    if (typeof state !== 'string' || !safeEqual(state, pending.state)) return { problem: 'state' };
    if (error !== undefined) return { problem: 'denied' };
    if (typeof code !== 'string' || code.length > MAX_PARAM) return { problem: 'code' };
    const redeemed = await this.redeem(code, pending);
    if (!redeemed) return { problem: 'code' };
    const cookie = randomToken(32);
    const ttlSeconds = this.site.ttlSeconds;
    await this.records.put(
      `session:${sha256(cookie)}`,
      { user_id: redeemed.subject, sid: redeemed.sid, auth_time: redeemed.authTime, amr: redeemed.amr },
      { ttlSeconds },
    );
    res.cookie(this.cookieName('session'), cookie, this.cookieOptions(ttlSeconds));
    return { returnTo: pending.return_to };
  }

  private async redeem(value: string, pending: { nonce: string; verifier: string }) {
    const { tokens } = this.deps;
    const code = await tokens.findCode(value);
    if (!code || code.clientId !== this.site.clientId || code.redirectUri !== this.redirectUri) return null;
    if (code.codeChallengeMethod !== 'S256' || !code.codeChallenge) return null;
    if (!safeEqual(sha256(pending.verifier), code.codeChallenge)) return null;
    if (code.nonce === null || !safeEqual(code.nonce, pending.nonce)) return null;
    if (code.usedAt || code.expiresAt <= this.deps.clock.now() || !(await tokens.consumeCode(code))) return null;
    // No token is issued: the grant served only this sign-in, and its sid is what the session rests on.
    const grant = await tokens.getGrant(code.grantId);
    await tokens.revokeGrant(code.grantId, 'redeemed_in_process');
    const sid = grant?.data.sid;
    if (typeof sid !== 'string') return null;
    return { subject: code.subject, sid, authTime: code.authTime, amr: code.amr };
  }

  /** The signed-in user of this request, or null (no cookie, expired, browser session ended, user gone). */
  async current(req: Request): Promise<SiteSession | null> {
    const cookie = readCookie(req, this.cookieName('session'));
    if (!cookie || cookie.length > MAX_PARAM) return null;
    const record = await this.records.get(`session:${sha256(cookie)}`);
    if (!record) return null;
    const data = record.data as { user_id: string; sid: string; auth_time: number; amr: string[] };
    if (!(await this.deps.sessions.isLive(data.sid))) return null;
    const user = await this.deps.users.findById(data.user_id);
    if (!user || user.status !== 'active') return null;
    return { user, sid: data.sid, authTime: data.auth_time, amr: data.amr, csrf: sha256(`csrf:${cookie}`) };
  }

  /** Whether a form's `csrf` field is this sign-in's token (constant time). */
  static csrfOk(session: SiteSession, presented: unknown): boolean {
    return typeof presented === 'string' && presented.length <= MAX_PARAM && safeEqual(presented, session.csrf);
  }

  /** Ends this app's sign-in (not the browser session: other apps stay signed in). */
  async signOut(req: Request, res: Response): Promise<void> {
    const cookie = readCookie(req, this.cookieName('session'));
    if (cookie && cookie.length <= MAX_PARAM) await this.records.delete(`session:${sha256(cookie)}`);
    res.clearCookie(this.cookieName('session'), this.cookieOptions(0));
  }
}
