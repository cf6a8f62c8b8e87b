import {
  html,
  pageContext,
  pageLayout,
  renderErrorPage,
  renderNoticePage,
  type LinkFacts,
  type LoginFlowView,
  type PluginApi,
  type SignInLinkProblem,
} from '@gatehouse-auth/core';
import type { Request, Response } from 'express';
import { linkDetails } from './details.js';

/** Where the page's routes are mounted: the core builds the links it mails under it (`/{method}/link`). */
export const LINK_MOUNT = '/verification-srv/authentication';

/** The page's route under its mount: `{issuer}/verification-srv/authentication/EMAIL/link?exchange_id=…&token=…`. */
export const LINK_ROUTE = '/:method/link';

/** The link page's rendering: in the sign-in request's language where the link's flow is known, else the browser's. */
export function linkPages(api: PluginApi) {
  const { web } = api;

  /** The page's context, with its headers set: no referrer (the token is in the URL), no caching. */
  const contextOf = (req: Request, res: Response, flow?: LoginFlowView | null) => pageContext(web, req, res, { flow });

  return {
    /** Why the link does not work (400): a page, never a JSON error. */
    problem(req: Request, res: Response, problem: SignInLinkProblem) {
      const ctx = contextOf(req, res);
      res.status(400).send(renderErrorPage(ctx, ctx.t.t('link.problem.title'), ctx.t.t(`link.problem.${problem}`)));
    },

    /** A short notice of what the answer did: a title and a sentence, no script. */
    notice(req: Request, res: Response, flow: LoginFlowView, keys: [string, string]) {
      const ctx = contextOf(req, res, flow);
      const [title, text] = keys.map((key) => ctx.t.t(key)) as [string, string];
      res.send(renderNoticePage(ctx, title, text));
    },

    /** The question on another device: which app, the sign-in's facts, "yes, it was me" or "no". */
    confirm(
      req: Request,
      res: Response,
      link: { method: string; exchangeId: string; token: string },
      flow: LoginFlowView,
      facts: LinkFacts | null,
    ) {
      const ctx = contextOf(req, res, flow);
      const { t } = ctx;
      const app = flow.clientName;
      const body = html`<main class="card">
        <h1>${t.t('link.confirm.title', { app })}</h1>
        <p>${t.t('link.confirm.text', { app })}</p>
        ${facts ? linkDetails(t, facts, api.services.clock.now()) : null}
        <form method="post" action="${ctx.base}${LINK_MOUNT}${LINK_ROUTE.replace(':method', link.method)}">
          <input type="hidden" name="exchange_id" value="${link.exchangeId}" />
          <input type="hidden" name="token" value="${link.token}" />
          <button class="primary" name="decision" value="confirm">${t.t('link.confirm.yes')}</button>
          <button name="decision" value="deny">${t.t('link.confirm.no')}</button>
        </form>
      </main>`;
      res.send(pageLayout(ctx, t.t('link.confirm.title', { app }), body, null));
    },
  };
}
