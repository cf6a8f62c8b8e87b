import {
  html,
  layout,
  pageHeaders,
  redirectSources,
  renderErrorPage,
  type PageContext,
} from '@gatehouse-auth/plugin-api';
export type { PageContext } from '@gatehouse-auth/plugin-api';
import type { Response } from 'express';

/**
 * The authorization endpoint's own pages (error, form_post: its protocol answers), built
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
