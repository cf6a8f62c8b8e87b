import type { Request, Response } from 'express';
import { readCookie, type PluginApi, type UserRecord } from '@gatehouse-auth/core';

/** A site (the console, the account page): its app, where it lives, its cookie. */
export interface SiteApp {
  clientId: string;
  /** Its path under the issuer: '/console', '/account'. */
  path: string;
  /** The base of its cookie names ('gh_console'); `__Host-` is added on https. */
  cookie: string;
  /** How long a sign-in lasts, in seconds. */
  ttlSeconds: number;
  /** How recent the factors must be, in seconds (null: any the session has). */
  maxAge: number | null;
}

/** Someone signed in to a site. */
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
export type CallbackProblem = 'no_login' | 'code';

/** A sign-in may take this long between leaving for the login and coming back. */
const LOGIN_TTL_SECONDS = 900;
const MAX_PARAM = 512;
export const CALLBACK_PATH = '/callback';

/**
 * How a site signs its users in (decisions 27, 39): a hosted login for its app
 * (`web.login.start`, with `maxAge` for fresh factors), read back at its callback
 * (`web.login.result`), then a sign-in of its own: a cookie (HttpOnly, SameSite=Lax, `__Host-`
 * on https) naming a record of the plugin. The sign-in rests on the browser session the login
 * made: when that session ends, so does the sign-in.
 */
export class SiteSignIn {
  private readonly secure: boolean;
  private readonly root: string;

  constructor(
    private readonly api: Pick<PluginApi, 'web' | 'records' | 'services'>,
    readonly site: SiteApp,
  ) {
    this.secure = api.web.issuer.startsWith('https://');
    this.root = `${api.web.base}${site.path}`;
  }

  private cookieName(kind: 'session' | 'login'): string {
    return `${this.secure ? '__Host-' : ''}${this.site.cookie}_${kind}`;
  }

  private cookieOptions(maxAgeSeconds: number) {
    return { httpOnly: true, secure: this.secure, sameSite: 'lax' as const, path: '/', maxAge: maxAgeSeconds * 1000 };
  }

  private hash(value: string): string {
    return this.api.services.crypto.sha256(value);
  }

  /**
   * Leaves for the hosted login; `returnTo` (a path of this site) is where the callback ends.
   * `maxAge` (seconds) asks for factors that recent instead of the site's own: a sign-in again
   * before a sensitive action (the account page's setup, password, deletion).
   */
  async start(req: Request, res: Response, returnTo: string, maxAge?: number): Promise<void> {
    const handle = this.api.services.crypto.randomToken(32);
    await this.api.records.put(
      `login:${this.hash(handle)}`,
      { return_to: this.ownPath(returnTo) },
      { ttlSeconds: LOGIN_TTL_SECONDS },
    );
    res.cookie(this.cookieName('login'), handle, this.cookieOptions(LOGIN_TTL_SECONDS));
    await this.api.web.login.start(req, res, {
      clientId: this.site.clientId,
      returnTo: this.api.web.url(`${this.site.path}${CALLBACK_PATH}`),
      ...(maxAge !== undefined ? { maxAge } : this.site.maxAge !== null ? { maxAge: this.site.maxAge } : {}),
    });
  }

  /** A path of this site, or the site's root: the callback never redirects anywhere else. */
  private ownPath(path: string): string {
    const own = path === this.root || path.startsWith(`${this.root}/`) || path.startsWith(`${this.root}?`);
    const safe = own && !path.startsWith('//') && !/[\\\s]/.test(path);
    return safe && path.length <= MAX_PARAM ? path : this.root;
  }

  /**
   * The callback: the login this browser started (its cookie), then the hosted login's result
   * for this browser (once). On success the session cookie is set and the path to go on to returned.
   */
  async callback(req: Request, res: Response): Promise<{ returnTo: string } | { problem: CallbackProblem }> {
    const handle = readCookie(req, this.cookieName('login'));
    res.clearCookie(this.cookieName('login'), this.cookieOptions(0));
    const login =
      handle && handle.length <= MAX_PARAM ? await this.api.records.consume(`login:${this.hash(handle)}`) : null;
    if (!login) return { problem: 'no_login' };
    const result = await this.api.web.login.result(req, res, req.query.request_id);
    if (!result) return { problem: 'code' };
    const cookie = this.api.services.crypto.randomToken(32);
    const { ttlSeconds } = this.site;
    await this.api.records.put(
      `session:${this.hash(cookie)}`,
      { user_id: result.userId, sid: result.sid, auth_time: result.authTime, amr: result.amr },
      { ttlSeconds },
    );
    res.cookie(this.cookieName('session'), cookie, this.cookieOptions(ttlSeconds));
    return { returnTo: (login.data as { return_to: string }).return_to };
  }

  /** The signed-in user of this request, or null (no cookie, expired, browser session ended, user gone). */
  async current(req: Request): Promise<SiteSession | null> {
    const cookie = readCookie(req, this.cookieName('session'));
    if (!cookie || cookie.length > MAX_PARAM) return null;
    const record = await this.api.records.get(`session:${this.hash(cookie)}`);
    if (!record) return null;
    const data = record.data as { user_id: string; sid: string; auth_time: number; amr: string[] };
    const browser = await this.api.web.session(req);
    if (browser?.sid !== data.sid) return null;
    const user = await this.api.services.users.findById(data.user_id);
    if (!user || user.status !== 'active') return null;
    return { user, sid: data.sid, authTime: data.auth_time, amr: data.amr, csrf: this.hash(`csrf:${cookie}`) };
  }

  /** Whether a form's `csrf` field is this sign-in's token (constant time). */
  csrfOk(session: SiteSession, presented: unknown): boolean {
    return (
      typeof presented === 'string' &&
      presented.length <= MAX_PARAM &&
      this.api.services.crypto.safeEqual(presented, session.csrf)
    );
  }

  /** Ends this site's sign-in (the site's sign-out then ends the browser session too: `web.endSession`). */
  async signOut(req: Request, res: Response): Promise<void> {
    const cookie = readCookie(req, this.cookieName('session'));
    if (cookie && cookie.length <= MAX_PARAM) await this.api.records.delete(`session:${this.hash(cookie)}`);
    res.clearCookie(this.cookieName('session'), this.cookieOptions(0));
  }
}
