import type { Response } from 'express';
import { pageHeaders, redirectSources } from '../login/headers.js';
import { html } from '../login/html.js';
import { layout, renderErrorPage } from '../login/page.js';

/**
 * The authorization endpoint's own pages (error, consent, form_post), built like the login
 * page: escaped templates, the shared style sheet and headers, no inline script.
 */
export interface PageContext {
  /** The issuer's path prefix ('' at the root). */
  base: string;
}

/** An error shown to the user instead of a redirect (unknown client, bad redirect_uri, ...). */
export function errorPage(res: Response, ctx: PageContext, status: number, error: string, description: string): void {
  pageHeaders(res);
  res
    .status(status)
    .send(renderErrorPage(ctx.base, 'This sign-in request cannot be completed', `${description} (${error})`));
}

export function consentPage(
  res: Response,
  ctx: PageContext,
  input: { clientName: string; scopes: string[]; requestId: string; csrf: string; redirectUris: string[] },
): void {
  // The form posts here; the answer then redirects to the client, so its origins are form targets.
  pageHeaders(res, redirectSources(input.redirectUris));
  const body = html`<main class="card">
    <h1>${input.clientName} wants access to your account</h1>
    <p>It asks for:</p>
    <ul>
      ${input.scopes.map((s) => html`<li><code>${s}</code></li>`)}
    </ul>
    <form method="post" action="${ctx.base}/login/consent">
      <input type="hidden" name="request_id" value="${input.requestId}" />
      <input type="hidden" name="csrf" value="${input.csrf}" />
      <button class="primary" name="decision" value="allow">Allow</button>
      <button name="decision" value="deny">Deny</button>
    </form>
  </main>`;
  res.send(layout(ctx.base, 'Allow access?', body, null));
}

/** OAuth 2.0 Form Post Response Mode: a form the served script submits (a button without script). */
export function formPostPage(res: Response, ctx: PageContext, action: string, fields: Record<string, string>): void {
  pageHeaders(res, redirectSources([action]));
  const body = html`<main class="card">
    <form method="post" action="${action}">
      ${Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
      <button class="primary">Continue</button>
    </form>
  </main>`;
  res.send(layout(ctx.base, 'Continue', body, 'form-post'));
}

/** RP-Initiated Logout without proof of who asks: the user confirms (a CSRF-bound form). */
export function logoutConfirmPage(
  res: Response,
  ctx: PageContext,
  input: { appName: string | null; fields: Record<string, string>; redirectUris: string[] },
): void {
  pageHeaders(res, redirectSources(input.redirectUris));
  const body = html`<main class="card">
    <h1>Sign out?</h1>
    <p>${input.appName ? `${input.appName} asks to sign you out.` : 'You are about to sign out.'}</p>
    <form method="post" action="${ctx.base}/session/end_session">
      ${Object.entries(input.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
      <button class="primary" name="confirm" value="yes">Sign out</button>
    </form>
    <p class="note">To stay signed in, close this page.</p>
  </main>`;
  res.send(layout(ctx.base, 'Sign out?', body, null));
}

/** After a logout that has nowhere to go back to. */
export function signedOutPage(res: Response, ctx: PageContext, appName: string | null): void {
  pageHeaders(res);
  const body = html`<main class="card">
    <h1>You are signed out</h1>
    <p>
      ${appName ? `You are signed out of ${appName} and every app you signed in to here.` : 'You are signed out of every app you signed in to here.'}
    </p>
  </main>`;
  res.send(layout(ctx.base, 'Signed out', body, null));
}
