import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { html, type Actor, type PluginApi, type SafeHtml } from '@gatehouse-auth/core';
import { CSS_PATH, notice, SITE_CSS, sitePage, type Messages, type SitePage } from './layout.js';
import { CALLBACK_PATH, SiteSignIn, type SiteApp, type SiteSession } from './signin.js';

/** A request of a signed-in user of a site, CSRF-checked when it is a POST. */
export interface SiteRequest {
  req: Request;
  res: Response;
  session: SiteSession;
  t: Messages;
  page: SitePage;
  actor: Actor;
}

export type SiteHandler = (r: SiteRequest) => Promise<void>;

/** What a site's pages are made of: its app, its sections, who may use it. */
export interface SiteOptions extends SiteApp {
  via: Actor['via'];
  titleKey: string;
  nav: [string, string][];
  /** Who may use the site once signed in (the console: its admins). */
  allowed(session: SiteSession): boolean;
}

/**
 * The frame of a site (the console, the account page): its callback and sign-out, the style
 * sheet, and `get`/`post` wrappers that sign the browser in when it is not, refuse users the
 * site does not allow (403), and refuse a POST without this sign-in's CSRF token (403). Its
 * routes are added under the site's path (`api.routes.add`).
 */
export class Site {
  readonly router: Router;
  readonly signIn: SiteSignIn;
  private readonly root: string;
  private readonly issuerPath: string;
  private readonly form: RequestHandler;

  constructor(
    private readonly api: Pick<PluginApi, 'web' | 'records' | 'services' | 'routes'>,
    private readonly opts: SiteOptions,
  ) {
    this.signIn = new SiteSignIn(api, opts);
    this.root = opts.path;
    this.issuerPath = api.web.base;
    this.router = api.services.http.createRouter();
    this.form = api.services.http.form();
    const { router } = this;
    api.routes.add({ path: opts.path, router });
    router.get(CSS_PATH, (_req, res) => {
      res.set({
        'Content-Type': 'text/css; charset=utf-8',
        'Cache-Control': 'public, max-age=300',
        'X-Content-Type-Options': 'nosniff',
      });
      res.send(SITE_CSS.body);
    });
    router.get(CALLBACK_PATH, async (req, res) => {
      const outcome = await this.signIn.callback(req, res);
      if ('returnTo' in outcome) return res.redirect(303, outcome.returnTo);
      this.problem(req, res, 400, this.messages(req).t(`site.callback.${outcome.problem}`), true);
    });
    router.post('/sign-out', this.form, async (req, res) => {
      const session = await this.signIn.current(req);
      const t = this.messages(req);
      if (!session || !this.signIn.csrfOk(session, req.body?.csrf)) {
        return this.problem(req, res, 403, t.t('site.form_expired'), true);
      }
      // Signing out of a Gatehouse page signs the browser out of Gatehouse (issue 29): else the
      // next "Sign in" would sign the same user in again, silently.
      await this.signIn.signOut(req, res);
      await this.api.web.endSession(req, res);
      const body = html`<p>${t.t('site.signed_out_text')}</p>
        <p><a href="${this.href}">${t.t('site.sign_in_again')}</a></p>`;
      this.send(res, 200, sitePage(this.bare(req), t.t('site.signed_out'), body));
    });
  }

  private messages(req: Request): Messages {
    return this.api.web.messages(req);
  }

  /** The frame of a page without anyone signed in (no sections). */
  private bare(req: Request): SitePage {
    return {
      base: this.issuerPath,
      root: this.root,
      t: this.messages(req),
      titleKey: this.opts.titleKey,
      nav: [],
      brand: this.api.web.brand(),
    };
  }

  private send(res: Response, status: number, body: string): void {
    this.api.web.headers(res, [], undefined, this.api.web.brand());
    res.status(status).send(body);
  }

  /** A page that says why not; `signIn` adds the way to sign in (again). */
  private problem(req: Request, res: Response, status: number, text: string, signIn: boolean, page?: SitePage) {
    const frame = page ?? this.bare(req);
    const again = signIn ? html`<p><a href="${this.href}">${frame.t.t('site.sign_in_again')}</a></p>` : '';
    this.send(res, status, sitePage(frame, frame.t.t('site.problem'), html`${notice(text, true)} ${again}`));
  }

  /** The signed-in, allowed user of a request, or null once a page said why not. */
  private async context(req: Request, res: Response, current: string): Promise<SiteRequest | null> {
    const session = await this.signIn.current(req);
    const t = this.messages(req);
    if (!session) {
      if (req.method === 'GET') await this.signIn.start(req, res, `${this.issuerPath}${req.originalUrl}`);
      else this.problem(req, res, 403, t.t('site.form_expired'), true);
      return null;
    }
    const page: SitePage = {
      ...this.bare(req),
      nav: this.opts.nav,
      current,
      who: { name: session.user.username, csrf: session.csrf },
    };
    if (!this.opts.allowed(session)) {
      this.problem(req, res, 403, t.t('site.not_allowed'), false, { ...page, nav: [] });
      return null;
    }
    if (req.method === 'POST' && !this.signIn.csrfOk(session, req.body?.csrf)) {
      this.problem(req, res, 403, t.t('site.form_expired'), false, page);
      return null;
    }
    const actor: Actor = { via: this.opts.via, userId: session.user.id, ip: this.api.web.clientIp(req) || null };
    return { req, res, session, t, page, actor };
  }

  private wrap(current: string, handler: SiteHandler): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      this.context(req, res, current)
        .then((r) => (r ? handler(r) : undefined))
        .catch(next);
    };
  }

  /** A GET page of the site under `path`; `current` names its section in the bar. */
  get(path: string, current: string, handler: SiteHandler): void {
    this.router.get(path || '/', this.wrap(current, handler));
  }

  /** A POST action (a form) of the site under `path`. */
  post(path: string, current: string, handler: SiteHandler): void {
    this.router.post(path || '/', this.form, this.wrap(current, handler));
  }

  /** Renders a page of the site. */
  render(r: SiteRequest, title: string, body: SafeHtml, status = 200): void {
    this.send(r.res, status, sitePage(r.page, title, body));
  }

  /** After an action: back to `path` of the site, with what was done (`done`, a message key's last part). */
  done(r: SiteRequest, path: string, done: string): void {
    r.res.redirect(303, `${this.href}${path}?done=${encodeURIComponent(done)}`);
  }

  /** The notice of a `?done=` (a known message only: a link cannot make the page say anything). */
  doneNotice(r: SiteRequest, prefix: string): SafeHtml {
    const done = r.req.query.done;
    if (typeof done !== 'string' || !/^[a-z_]{1,40}$/.test(done)) return html``;
    const key = `${prefix}.done.${done}`;
    const text = r.t.t(key);
    return text === key ? html`` : notice(text);
  }

  /** A page that says why an action could not be done, in the site's frame. */
  refuse(r: SiteRequest, status: number, text: string): void {
    this.problem(r.req, r.res, status, text, false, r.page);
  }

  /** The site's paths start with this (the issuer's path and the site's). */
  get href(): string {
    return `${this.issuerPath}${this.root}`;
  }
}
