import type { Request, RequestHandler } from 'express';
import { safeEqual } from '../../util/crypto.js';
import { accountPage } from '../pages.js';
import { flowFormToken } from './browser.js';
import { RESUME_PATH, type AuthorizeContext } from './context.js';
import { alreadyFinished, authorizeUrlOf, ErrorPage, type AuthorizationRequest } from './request.js';

/** The account choice of `prompt=select_account` (OIDC Core §3.1.2.1). */
export const ACCOUNT_PATH = '/login/account';

/**
 * The flow of this browser that waits for the choice: started with `prompt=select_account` from
 * a session (so its user is known), completed by single sign-on or with stages left. The form's
 * token is the flow's CSRF token.
 */
async function waitingFlow(ctx: AuthorizeContext, req: Request, requestId: unknown) {
  const { flow, request } = await ctx.boundFlow(req, requestId, ['completed', 'active']);
  const user = flow.userId ? await ctx.deps.users.findById(flow.userId) : null;
  const csrf = flowFormToken(ctx.deps.config.issuer, req, flow);
  if (!request.prompt.includes('select_account') || !user || !csrf) {
    throw new ErrorPage(400, 'invalid_request', 'This sign-in does not ask which account to use.');
  }
  return { flow, request, user, csrf };
}

/**
 * GET /login/account: with `prompt=select_account` and a signed-in browser, /authorize comes here
 * before the session is used: "Continue as <name>" or "Use another account".
 */
export function showAccountChoice(ctx: AuthorizeContext): RequestHandler {
  return async (req, res) => {
    const { flow, request, user, csrf } = await waitingFlow(ctx, req, req.query.request_id);
    const client = ctx.deps.clients.get(request.client_id)!;
    accountPage(res, ctx.pageFor(req, request), {
      action: `${ctx.page.base}${ACCOUNT_PATH}`,
      appName: client.name,
      userName: user.username,
      requestId: flow.id,
      csrf,
      // Continuing ends at the app's redirect URI, or at its own login UI for the stages left.
      formTargets: [...client.redirectUris, ...(client.loginPageUrl ? [client.loginPageUrl] : [])],
    });
  };
}

/**
 * POST /login/account. "continue" goes on as single sign-on does: to the app, or to the stages
 * this app still asks for. "other" ends this sign-in and starts the same request again without
 * the session counting (`prompt=login`) and without the app's `login_hint`, so the login begins
 * at the first stage; the session is replaced once someone signs in.
 */
export function decideAccount(ctx: AuthorizeContext): RequestHandler {
  const { flows } = ctx.deps;
  return async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const { flow, request, csrf } = await waitingFlow(ctx, req, body.request_id);
    if (typeof body.csrf !== 'string' || !safeEqual(body.csrf, csrf)) {
      throw new ErrorPage(403, 'invalid_request', 'The form has expired. Start again from the app.');
    }
    if (body.choice !== 'continue' && body.choice !== 'other') {
      throw new ErrorPage(400, 'invalid_request', 'Choose to continue or to use another account.');
    }
    if (body.choice === 'continue') {
      return res.redirect(303, flow.status === 'completed' ? ctx.flowUrl(RESUME_PATH, flow) : ctx.loginUrl(flow));
    }
    if (!(await (flow.status === 'completed' ? flows.finish(flow.id) : flows.cancel(flow.id)))) throw alreadyFinished();
    ctx.forgetFlow(res, flow);
    res.redirect(303, `${ctx.page.base}${authorizeUrlOf(anotherAccount(request))}`);
  };
}

/** The request again, for someone other than the session's user. */
function anotherAccount(request: AuthorizationRequest): AuthorizationRequest {
  const prompt = [...new Set([...request.prompt.filter((p) => p !== 'select_account'), 'login'])];
  return { ...request, prompt, login_hint: null };
}
