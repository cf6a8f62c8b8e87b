import type { RequestHandler } from 'express';
import { CONSENT_PATH, type AuthorizeContext } from './context.js';
import { finish } from './finish.js';
import { OAuthError } from '../errors.js';
import { ErrorPage } from './request.js';
import { startBrowserSession } from './hosted-login.js';
import { REQUIRED_ACTIONS_PATH } from '../../users/required-actions.js';

/**
 * GET /api/oauth2/authorize/resume, after the last stage (or straight from single sign-on):
 * binds a new session cookie to the sign-in (not for a flow claimed from another site), asks for consent where needed, answers the client.
 */
export function resumeAuthorization(ctx: AuthorizeContext): RequestHandler {
  const { clients } = ctx.deps;
  return async (req, res) => {
    const { flow, request } = await ctx.boundFlow(req, req.query.request_id, 'completed');
    const client = clients.get(request.client_id);
    if (!client) throw new ErrorPage(400, 'invalid_client', 'The app is no longer registered.');
    // What an admin asked of the user (a new password, a second factor) comes first, on the
    // hosted page, before any session or answer: its page sends the browser back here (plugin API 1.3).
    if (ctx.deps.extensions.routes.has('/login') && (await ctx.deps.requiredActions.of(flow.userId!)).length) {
      return res.redirect(303, ctx.flowUrl(REQUIRED_ACTIONS_PATH, flow));
    }
    // A generated flow claimed by a form from another site makes no SSO session: otherwise a
    // login forced into this browser from there would sign it in at every app (decision 20).
    const session =
      flow.params.claimed_cross_site === true
        ? null
        : await startBrowserSession(ctx.deps, req, res, flow, ctx.deps.clock.now());
    if (request.prompt.includes('consent') || (await ctx.needsConsent(client, flow.userId!, request))) {
      if (ctx.serves(CONSENT_PATH)) return res.redirect(303, ctx.flowUrl(CONSENT_PATH, flow));
      // The page went between /authorize and here (a restart without its plugin): the app is told.
      return ctx.refuse(res, flow, request, new OAuthError('consent_required', 'no consent page is configured'));
    }
    await finish(ctx, res, { flow, client, request, session }, req.log);
  };
}
