import { definePlugin, z } from '@gatehouse-auth/core';
import type { Request } from 'express';
import { LINK_MOUNT, LINK_ROUTE, linkPages } from './page.js';

export { LINK_MOUNT, LINK_ROUTE } from './page.js';

/** The link as the browser sent it back: the path's method, the query's (GET) or the form's (POST) ids. */
function linkOf(req: Request) {
  const source = (req.method === 'POST' ? req.body : req.query) as Record<string, unknown>;
  return { method: String(req.params.method).toUpperCase(), exchangeId: source.exchange_id, token: source.token };
}

/**
 * The page a sign-in link opens (`processingType: LINK`, decision 66), on the login-flow API's
 * `openLink` and `answerLink`, which keep every check of the link in the core. In the browser
 * doing the login the GET moves the login on; anywhere else it asks, and the answer is a POST.
 * Left out of `plugins:`, the link path answers 404 and `processingType: LINK` is refused.
 */
export default definePlugin({
  name: '@gatehouse-auth/page-link',
  apiVersion: '^1.3',
  options: z.strictObject({}),
  register(api) {
    const { loginFlows } = api.web;
    const pages = linkPages(api);
    const router = api.services.http.createRouter();

    router.get(LINK_ROUTE, async (req, res) => {
      const link = linkOf(req);
      const opened = await loginFlows.openLink(req, link);
      if (opened.outcome === 'refused') return pages.problem(req, res, opened.problem);
      if (opened.outcome === 'continued') return res.redirect(303, opened.continuation.location);
      // Shown only after the core's checks: the ids are a live exchange's, the token a string.
      const shown = { method: link.method, exchangeId: String(link.exchangeId), token: String(link.token) };
      pages.confirm(req, res, shown, opened.flow, opened.facts);
    });

    router.post(LINK_ROUTE, api.services.http.form(), async (req, res) => {
      const decision = (req.body as Record<string, unknown>).decision === 'deny' ? 'deny' : 'confirm';
      const answered = await loginFlows.answerLink(req, linkOf(req), decision);
      if (answered.outcome === 'refused') return pages.problem(req, res, answered.problem);
      pages.notice(
        req,
        res,
        answered.flow,
        answered.outcome === 'denied'
          ? ['link.cancelled.title', 'link.cancelled.text']
          : ['link.confirmed.title', 'link.confirmed.text'],
      );
    });

    api.routes.add({ path: LINK_MOUNT, router });
  },
});
