import {
  html,
  pageContext,
  pageLayout,
  type AccountPrompt,
  type ConsentPrompt,
  type PluginApi,
} from '@gatehouse-auth/core';
import type { Request, Response } from 'express';

/** The consent page's path: the core sends the browser here when the app asks for consent. */
export const CONSENT_PATH = '/login/consent';

/** The account choice's path: the core sends a signed-in browser here for `prompt=select_account`. */
export const ACCOUNT_PATH = '/login/account';

/**
 * The two pages, in the sign-in request's language (`ui_locales`, then the browser's) with the
 * app's brand. Their texts are the core's page catalogs (`consent.…`, `account.…` in
 * core/locales, and `locales.messages_dir`), as the other pages of a sign-in.
 */
export function choicePages(api: PluginApi) {
  const { web } = api;

  return {
    /** What the app asks for, with Allow and Deny. */
    consent(req: Request, res: Response, shown: ConsentPrompt) {
      // The page's context, with its headers set: the answer's redirects may end at `formTargets`.
      const ctx = pageContext(web, req, res, { flow: shown.flow, formTargets: shown.formTargets });
      const { t } = ctx;
      const body = html`<main class="card">
        <h1>${t.t('consent.heading', { app: shown.flow.clientName })}</h1>
        <p>${t.t('consent.asks')}</p>
        <ul>
          ${shown.scopes.map((s) => {
            // The standard scopes in the user's words; an app's own scope by its name.
            const words = t.optional(`consent.scope.${s}`, null);
            return words ? html`<li>${words} <code>${s}</code></li>` : html`<li><code>${s}</code></li>`;
          })}
        </ul>
        <form method="post" action="${ctx.base}${CONSENT_PATH}">
          <input type="hidden" name="request_id" value="${shown.flow.id}" />
          <input type="hidden" name="csrf" value="${shown.csrf}" />
          <button class="primary" name="decision" value="allow">${t.t('consent.allow')}</button>
          <button name="decision" value="deny">${t.t('consent.deny')}</button>
        </form>
      </main>`;
      res.send(pageLayout(ctx, t.t('consent.title'), body, null));
    },

    /** "Continue as <name>" or "Use another account". */
    account(req: Request, res: Response, shown: AccountPrompt) {
      const ctx = pageContext(web, req, res, { flow: shown.flow, formTargets: shown.formTargets });
      const { t } = ctx;
      const name = shown.userName;
      const body = html`<main class="card" id="gh-account">
        <h1>${t.t('account.heading', { app: shown.flow.clientName })}</h1>
        <p>${t.html('account.signed_in_as', { name: html`<strong>${name}</strong>` })}</p>
        <form method="post" action="${ctx.base}${ACCOUNT_PATH}">
          <input type="hidden" name="request_id" value="${shown.flow.id}" />
          <input type="hidden" name="csrf" value="${shown.csrf}" />
          <button class="primary" name="choice" value="continue" id="gh-continue-as">
            ${t.t('account.continue', { name })}
          </button>
          <button name="choice" value="other" id="gh-other-account">${t.t('account.other')}</button>
        </form>
      </main>`;
      res.send(pageLayout(ctx, t.t('account.title'), body, null));
    },
  };
}
