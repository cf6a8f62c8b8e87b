import { html, type PageContext } from '@gatehouse-auth/plugin-api';
export type { PageContext } from '@gatehouse-auth/plugin-api';
import type { Response } from 'express';
import { pageHeaders, redirectSources } from '../login/headers.js';
import { layout, renderErrorPage } from '../login/layout.js';

/**
 * The authorization endpoint's own pages (error, consent, account choice, form_post), built
 * like the login page: escaped templates, the shared style sheet and headers, no inline script,
 * the messages of the request's locale.
 */

/**
 * An error shown to the user instead of a redirect (unknown client, bad redirect_uri, ...). The
 * description is the protocol's `error_description`, in English in every locale: it is for
 * whoever builds the app, the sentence around it for the user.
 */
export function errorPage(res: Response, ctx: PageContext, status: number, error: string, description: string): void {
  pageHeaders(res, [], undefined, ctx.brand);
  res
    .status(status)
    .send(
      renderErrorPage(
        ctx,
        ctx.t.t('oauth.error.title'),
        ctx.t.t('oauth.error.text', { description, error }),
        res.req?.id ? String(res.req.id) : undefined,
      ),
    );
}

export function consentPage(
  res: Response,
  ctx: PageContext,
  input: { clientName: string; scopes: string[]; requestId: string; csrf: string; redirectUris: string[] },
): void {
  const { t } = ctx;
  // The form posts here; the answer then redirects to the client, so its origins are form targets.
  pageHeaders(res, redirectSources(input.redirectUris), undefined, ctx.brand);
  const body = html`<main class="card">
    <h1>${t.t('consent.heading', { app: input.clientName })}</h1>
    <p>${t.t('consent.asks')}</p>
    <ul>
      ${input.scopes.map((s) => {
        // The standard scopes in the user's words; an app's own scope by its name.
        const words = t.optional(`consent.scope.${s}`, null);
        return words ? html`<li>${words} <code>${s}</code></li>` : html`<li><code>${s}</code></li>`;
      })}
    </ul>
    <form method="post" action="${ctx.base}/login/consent">
      <input type="hidden" name="request_id" value="${input.requestId}" />
      <input type="hidden" name="csrf" value="${input.csrf}" />
      <button class="primary" name="decision" value="allow">${t.t('consent.allow')}</button>
      <button name="decision" value="deny">${t.t('consent.deny')}</button>
    </form>
  </main>`;
  res.send(layout(ctx, t.t('consent.title'), body, null));
}

/**
 * `prompt=select_account` with a signed-in browser: continue as that account, or sign in with
 * another one. `formTargets`: where the answer's redirects may end (the app's redirect URIs).
 */
export function accountPage(
  res: Response,
  ctx: PageContext,
  input: { action: string; appName: string; userName: string; requestId: string; csrf: string; formTargets: string[] },
): void {
  const { t } = ctx;
  pageHeaders(res, redirectSources(input.formTargets), undefined, ctx.brand);
  const body = html`<main class="card" id="gh-account">
    <h1>${t.t('account.heading', { app: input.appName })}</h1>
    <p>${t.html('account.signed_in_as', { name: html`<strong>${input.userName}</strong>` })}</p>
    <form method="post" action="${input.action}">
      <input type="hidden" name="request_id" value="${input.requestId}" />
      <input type="hidden" name="csrf" value="${input.csrf}" />
      <button class="primary" name="choice" value="continue" id="gh-continue-as">
        ${t.t('account.continue', { name: input.userName })}
      </button>
      <button name="choice" value="other" id="gh-other-account">${t.t('account.other')}</button>
    </form>
  </main>`;
  res.send(layout(ctx, t.t('account.title'), body, null));
}

/** OAuth 2.0 Form Post Response Mode: a form the served script submits (a button without script). */
export function formPostPage(res: Response, ctx: PageContext, action: string, fields: Record<string, string>): void {
  pageHeaders(res, redirectSources([action]), undefined, ctx.brand);
  const body = html`<main class="card">
    <form method="post" action="${action}">
      ${Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
      <button class="primary">${ctx.t.t('form_post.continue')}</button>
    </form>
  </main>`;
  res.send(layout(ctx, ctx.t.t('form_post.title'), body, 'form-post'));
}
