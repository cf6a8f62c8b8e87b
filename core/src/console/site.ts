import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import { CALLBACK_PATH } from '../config/schema.js';
import { formBody } from '../http/parsers.js';
import type { Locales } from '../i18n/locales.js';
import type { Messages } from '../i18n/messages.js';
import { html } from '../login/html.js';
import { pageHeaders } from '../login/headers.js';
import type { AuthMethod } from '../plugins/extensions.js';
import { clientIp } from '../verification/context.js';
import type { Actor } from './actions.js';
import { CONSOLE_CSS, CONSOLE_CSS_PATH } from './assets.js';
import { notice, sitePage, type SitePage } from './layout.js';
import { SiteSignIn, type SiteSession } from './signin.js';

/** A request of a signed-in user of a built-in site, CSRF-checked when it is a POST. */
export interface SiteRequest {
  req: Request;
  res: Response;
  session: SiteSession;
  t: Messages;
  page: SitePage;
  actor: Actor;
}

export type SiteHandler = (r: SiteRequest) => Promise<void>;

/** What a site's pages are made of: its sign-in, its messages, its sections. */
export interface SiteOptions {
  signIn: SiteSignIn;
  locales: Locales;
  issuerPath: string;
  via: Actor['via'];
  titleKey: string;
  nav: [string, string][];
  /** Who may use the site once signed in (the console: its admins). */
  allowed(session: SiteSession): boolean;
}

/** A method's name for users: its catalog label, else its own. */
export function methodLabel(t: Messages, method: AuthMethod | undefined, id: string): string {
  return t.or(`method.${id}.label`, method?.page?.label ?? id);
}

/**
 * The frame of a built-in site (the console, the account page): its callback and sign-out, the
 * style sheet, and `page`/`action` wrappers that sign the browser in when it is not, refuse
 * users the site does not allow (403), and refuse a POST without this sign-in's CSRF token (403).
 */
export class Site {
  readonly router: Router = express.Router();
  private readonly root: string;

  constructor(private readonly opts: SiteOptions) {
    this.root = opts.signIn.site.path;
    const { router } = this;
    router.get(CONSOLE_CSS_PATH, (_req, res) => {
      res.set({
        'Content-Type': CONSOLE_CSS.contentType,
        'Cache-Control': 'public, max-age=300',
        'X-Content-Type-Options': 'nosniff',
      });
      res.send(CONSOLE_CSS.body);
    });
    router.get(`${this.root}${CALLBACK_PATH}`, async (req, res) => {
      const outcome = await opts.signIn.callback(req, res);
      if ('returnTo' in outcome) return res.redirect(303, outcome.returnTo);
      const t = this.messages(req);
      this.problem(req, res, 400, t.t(`site.callback.${outcome.problem}`), true);
    });
    router.post(`${this.root}/sign-out`, formBody('4kb', 10), async (req, res) => {
      const session = await opts.signIn.current(req);
      const t = this.messages(req);
      if (!session || !SiteSignIn.csrfOk(session, req.body?.csrf)) {
        return this.problem(req, res, 403, t.t('site.form_expired'), true);
      }
      await opts.signIn.signOut(req, res);
      this.send(
        res,
        200,
        sitePage(
          this.bare(req),
          t.t('site.signed_out'),
          html`<p>${t.t('site.signed_out_text')}</p>
            <p><a href="${this.opts.issuerPath}${this.root}">${t.t('site.sign_in_again')}</a></p>`,
        ),
      );
    });
  }

  private messages(req: Request): Messages {
    return this.opts.locales.for(req);
  }

  /** The frame of a page without anyone signed in (no sections). */
  private bare(req: Request): SitePage {
    return {
      base: this.opts.issuerPath,
      root: this.root,
      t: this.messages(req),
      titleKey: this.opts.titleKey,
      nav: [],
    };
  }

  private send(res: Response, status: number, body: string): void {
    pageHeaders(res);
    res.status(status).send(body);
  }

  /** A page that says why not; `signIn` adds the way to sign in (again). */
  private problem(req: Request, res: Response, status: number, text: string, signIn: boolean, page?: SitePage) {
    const frame = page ?? this.bare(req);
    this.send(
      res,
      status,
      sitePage(
        frame,
        frame.t.t('site.problem'),
        html`${notice(text, true)}
        ${signIn ? html`<p><a href="${this.opts.issuerPath}${this.root}">${frame.t.t('site.sign_in_again')}</a></p>` : ''}`,
      ),
    );
  }

  /** The signed-in, allowed user of a request, or null once a page said why not. */
  private async context(req: Request, res: Response, current: string): Promise<SiteRequest | null> {
    const session = await this.opts.signIn.current(req);
    const t = this.messages(req);
    if (!session) {
      if (req.method === 'GET') await this.opts.signIn.start(res, `${this.opts.issuerPath}${req.originalUrl}`);
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
    if (req.method === 'POST' && !SiteSignIn.csrfOk(session, req.body?.csrf)) {
      this.problem(req, res, 403, t.t('site.form_expired'), false, page);
      return null;
    }
    const actor: Actor = { via: this.opts.via, userId: session.user.id, ip: clientIp(req) || null };
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
    this.router.get(`${this.root}${path}`, this.wrap(current, handler));
  }

  /** A POST action (a form) of the site under `path`. */
  post(path: string, current: string, handler: SiteHandler): void {
    this.router.post(`${this.root}${path}`, formBody('8kb', 20), this.wrap(current, handler));
  }

  /** Renders a page of the site. */
  render(r: SiteRequest, title: string, body: ReturnType<typeof html>, status = 200): void {
    this.send(r.res, status, sitePage(r.page, title, body));
  }

  /** After an action: back to `path` of the site, with what was done (`done`, a message key's last part). */
  done(r: SiteRequest, path: string, done: string): void {
    r.res.redirect(303, `${this.opts.issuerPath}${this.root}${path}?done=${encodeURIComponent(done)}`);
  }

  /** The notice of a `?done=` (a known message only: a link cannot make the page say anything). */
  doneNotice(r: SiteRequest, prefix: string): ReturnType<typeof html> {
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
    return `${this.opts.issuerPath}${this.root}`;
  }
}
