import type { Request, Response } from 'express';
import { html, type WebApi } from '@gatehouse-auth/core';
import { END_SESSION_PATH } from './paths.js';

/** Schemes that must never become a form target, whatever the config says. */
const UNSAFE_SCHEMES = new Set(['javascript:', 'data:', 'blob:', 'filesystem:', 'about:']);

/**
 * CSP form-action sources for the app's post-logout redirect URIs: the confirmation's POST ends
 * in a redirect there, and browsers apply form-action to it.
 */
export function redirectTargets(uris: string[]): string[] {
  const out = new Set<string>();
  for (const uri of uris) {
    if (!URL.canParse(uri)) continue;
    const url = new URL(uri);
    if (url.protocol === 'https:' || url.protocol === 'http:') out.add(url.origin);
    else if (!UNSAFE_SCHEMES.has(url.protocol) && /^[a-z][a-z0-9+.-]*:$/.test(url.protocol)) out.add(url.protocol);
  }
  return [...out];
}

/**
 * The logout endpoint's pages, in the language of the request's `ui_locales`, then the browser's;
 * `no-referrer`, as the id_token_hint may be in their URL.
 */
export function logoutPages(web: WebApi) {
  const action = web.base + END_SESSION_PATH;
  return {
    /** RP-Initiated Logout without proof of who asks: the user confirms (a session-bound form). */
    confirm(
      req: Request,
      res: Response,
      uiLocales: string | null,
      input: { appName: string | null; fields: Record<string, string>; redirectUris: string[] },
    ): void {
      const t = web.messages(req, uiLocales);
      web.page(req, res, {
        title: t.t('logout.title'),
        uiLocales,
        referrer: 'no-referrer',
        formTargets: redirectTargets(input.redirectUris),
        body: html`<main class="card">
          <h1>${t.t('logout.title')}</h1>
          <p>${input.appName ? t.t('logout.asked_by', { app: input.appName }) : t.t('logout.about_to')}</p>
          <form method="post" action="${action}">
            ${Object.entries(input.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
            <button class="primary" name="confirm" value="yes">${t.t('logout.confirm')}</button>
          </form>
          <p class="note">${t.t('logout.stay')}</p>
        </main>`,
      });
    },

    /** After a logout that has nowhere to go back to. */
    signedOut(req: Request, res: Response, uiLocales: string | null, appName: string | null): void {
      const t = web.messages(req, uiLocales);
      web.page(req, res, {
        title: t.t('logout.done.title'),
        uiLocales,
        referrer: 'no-referrer',
        body: html`<main class="card">
          <h1>${t.t('logout.done.heading')}</h1>
          <p>${appName ? t.t('logout.done.app', { app: appName }) : t.t('logout.done.all')}</p>
        </main>`,
      });
    },

    /**
     * A refused request, shown instead of a redirect. The description is the protocol's
     * `error_description`, in English in every locale: it is for whoever builds the app.
     */
    error(req: Request, res: Response, uiLocales: string | null, status: number, error: string, description: string) {
      const t = web.messages(req, uiLocales);
      web.page(req, res, {
        title: t.t('logout.error.title'),
        status,
        uiLocales,
        referrer: 'no-referrer',
        body: html`<main class="card">
          <h1>${t.t('logout.error.title')}</h1>
          <p>${t.t('logout.error.text', { description, error })}</p>
          <p class="note">${t.t('logout.error.note')}</p>
        </main>`,
      });
    },
  };
}
