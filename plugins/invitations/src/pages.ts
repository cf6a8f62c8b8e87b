import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import {
  html,
  isProtocolError,
  pageLayout,
  type PluginApi,
  type SafeHtml,
  type MethodSetup,
} from '@gatehouse-auth/core';
import type { Request, Response } from 'express';
import { PASSWORD_METHOD, type Invitations, type Opened } from './service.js';

type Router = ReturnType<PluginApi['services']['http']['createRouter']>;

const ACCEPT_JS = readFileSync(new URL('../assets/accept-page.js', import.meta.url), 'utf8');
const ACCEPT_JS_VERSION = createHash('sha256').update(ACCEPT_JS).digest('hex').slice(0, 16);

/** The status of each reason a link opens nothing. */
const GONE: Record<Exclude<Opened, { ok: true }>['reason'], number> = {
  unknown: 404,
  used: 410,
  expired: 410,
  revoked: 410,
};

/**
 * The invitation pages, on a router mounted at `/invitations`: `GET /accept` (the emailed link;
 * its token in the fragment), `POST /accept/open` (the script posts the token: the password form,
 * or why the link opens nothing), `POST /accept` (the password, CSRF-checked; the token used once).
 */
export function invitationPages(api: PluginApi, router: Router, invitations: Invitations): void {
  const { web } = api;
  const base = web.base;
  const tries = web.limit('accept', 20, 600);

  function send(req: Request, res: Response, title: string, body: SafeHtml, status = 200, script = false): void {
    const t = web.messages(req);
    // same-origin: the forms' POSTs carry this site's Origin (the CSRF check wants it).
    const brand = web.brand();
    web.headers(res, [], 'same-origin', brand);
    const head = script
      ? html`<script src="${base}/invitations/assets/accept-page.js?v=${ACCEPT_JS_VERSION}" defer></script>`
      : '';
    res.status(status).send(pageLayout({ base, t, brand }, title, html`<main class="card">${body}</main>`, null, head));
  }

  function gone(req: Request, res: Response, reason: keyof typeof GONE): void {
    const m = web.messages(req);
    send(
      req,
      res,
      m.t(`invite.${reason}.title`),
      html`<h1 id="gh-invite-gone" data-reason="${reason}">${m.t(`invite.${reason}.title`)}</h1>
        <p>${m.t(`invite.${reason}.text`)}</p>`,
      GONE[reason],
    );
  }

  function passwordForm(
    req: Request,
    res: Response,
    token: string,
    username: string,
    error: string | null,
    status = 200,
  ) {
    const t = web.messages(req);
    send(
      req,
      res,
      t.t('invite.title'),
      html`<h1>${t.t('invite.title')}</h1>
        <p>${t.t('invite.intro', { username })}</p>
        ${error ? html`<p class="message error" role="alert">${error}</p>` : ''}
        <form method="post" action="${base}/invitations/accept">
          <input type="hidden" name="csrf" value="${web.csrf.token(req, res)}" />
          <input type="hidden" name="token" value="${token}" />
          <input type="text" name="username" value="${username}" autocomplete="username" hidden />
          <div class="field">
            <label for="gh-password">${t.t('invite.password')}</label>
            <input id="gh-password" name="password" type="password" autocomplete="new-password" />
          </div>
          <div class="field">
            <label for="gh-repeat">${t.t('invite.repeat')}</label>
            <input id="gh-repeat" name="repeat" type="password" autocomplete="new-password" />
          </div>
          <button type="submit" class="primary" id="gh-invite-save">${t.t('invite.save')}</button>
        </form>`,
      status,
    );
  }

  /** The CSRF and rate checks of a POST; answers the page itself (and false) when one fails. */
  async function admitted(req: Request, res: Response): Promise<boolean> {
    const t = web.messages(req);
    if (!web.csrf.valid(req, (req.body as Record<string, unknown> | undefined)?.csrf)) {
      send(req, res, t.t('invite.csrf'), html`<h1>${t.t('invite.csrf')}</h1>`, 403);
      return false;
    }
    const wait = await tries.hit(web.clientIp(req));
    if (wait) {
      res.set('Retry-After', String(wait));
      send(req, res, t.t('invite.rate'), html`<h1>${t.t('invite.rate')}</h1>`, 429);
      return false;
    }
    return true;
  }

  router.get('/assets/accept-page.js', (_req, res) => {
    res.set({
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=300',
      'X-Content-Type-Options': 'nosniff',
    });
    res.send(ACCEPT_JS);
  });

  // The emailed link: the page only carries the fragment's token into a POST (nothing in a URL
  // reaches the server).
  router.get('/accept', (req: Request, res: Response) => {
    const t = web.messages(req);
    send(
      req,
      res,
      t.t('invite.title'),
      html`<h1>${t.t('invite.title')}</h1>
        <p>${t.t('invite.opening')}</p>
        <noscript><p class="message error">${t.t('invite.noscript')}</p></noscript>
        <form id="gh-invite-open" method="post" action="${base}/invitations/accept/open">
          <input type="hidden" name="csrf" value="${web.csrf.token(req, res)}" />
          <input type="hidden" name="token" value="" />
          <button type="submit">${t.t('invite.open')}</button>
        </form>`,
      200,
      true,
    );
  });

  router.post('/accept/open', api.services.http.form(), async (req: Request, res: Response) => {
    if (!(await admitted(req, res))) return;
    const opened = await invitations.open((req.body as Record<string, unknown>).token);
    if (!opened.ok) return gone(req, res, opened.reason);
    passwordForm(req, res, String((req.body as Record<string, unknown>).token), opened.user.username, null);
  });

  router.post('/accept', api.services.http.form(), async (req: Request, res: Response) => {
    if (!(await admitted(req, res))) return;
    const t = web.messages(req);
    const form = req.body as Record<string, unknown>;
    const opened = await invitations.open(form.token);
    if (!opened.ok) return gone(req, res, opened.reason);
    const token = String(form.token);
    if (typeof form.password !== 'string' || form.password !== form.repeat) {
      return passwordForm(req, res, token, opened.user.username, t.t('invite.mismatch'), 400);
    }
    let result: Opened;
    try {
      // The PASSWORD method's own setup: its policy and its hash.
      result = await invitations.accept(token, async (user) => {
        await api.services
          .resolve<MethodSetup>('methodSetup')
          .step('initiation', PASSWORD_METHOD, user, { password: form.password }, req);
      });
    } catch (err) {
      if (!isProtocolError(err)) throw err;
      const reason = t.t('invite.refused', { reason: err.message });
      return passwordForm(req, res, token, opened.user.username, reason, 400);
    }
    if (!result.ok) return gone(req, res, result.reason);
    const link = result.invitation.sign_in_url;
    send(
      req,
      res,
      t.t('invite.done.title'),
      html`<h1 id="gh-invite-done">${t.t('invite.done.title')}</h1>
        <p>${t.t('invite.done.text')}</p>
        ${link ? html`<p><a class="button primary" id="gh-invite-sign-in" href="${link}">${t.t('invite.done.link')}</a></p>` : ''}`,
    );
  });
}
