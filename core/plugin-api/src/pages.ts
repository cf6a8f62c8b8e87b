import type { Request, Response } from 'express';
import type { PageContext } from './login.js';
import type { LoginFlowView, WebApi } from './web.js';

/**
 * Since plugin API 1.3: the context of a page a plugin renders itself in the hosted layout
 * (`pageLayout`, `renderErrorPage`, …), with the hosted pages' headers set (`web.headers`): the
 * issuer's path, the core's page messages in the sign-in request's language, then the browser's
 * (`web.loginFlows.messages`), and the brand of the flow's app (`web.brand`; the global one
 * without a flow). `formTargets` and `referrer` are `web.headers`'s (default: none, `no-referrer`).
 */
export function pageContext(
  web: WebApi,
  req: Request,
  res: Response,
  page: { flow?: LoginFlowView | null; formTargets?: string[]; referrer?: 'no-referrer' | 'same-origin' } = {},
): PageContext {
  const brand = web.brand(page.flow?.clientId);
  web.headers(res, page.formTargets ?? [], page.referrer ?? 'no-referrer', brand);
  return { base: web.base, t: web.loginFlows.messages(req, page.flow), brand };
}
