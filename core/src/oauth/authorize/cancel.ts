import type { RequestHandler } from 'express';
import { safeEqual } from '../../util/crypto.js';
import { OAuthError } from '../errors.js';
import { flowFormToken } from './browser.js';
import type { AuthorizeContext } from './context.js';
import { ErrorPage, errorParams, type AuthorizationRequest } from './request.js';

/** POST /login/cancel, the hosted page's way back to the app: it hears access_denied, with its state. */
export function cancelAuthorization(ctx: AuthorizeContext): RequestHandler {
  const { flows, config } = ctx.deps;
  return async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const flow = typeof body.request_id === 'string' ? await flows.get(body.request_id) : null;
    // Only a flow an app started by /authorize has an app to go back to (a plugin's login has none).
    const token = flow?.params.oauth ? flowFormToken(config.issuer, req, flow) : null;
    if (!flow || !token || typeof body.csrf !== 'string' || !safeEqual(body.csrf, token)) {
      throw new ErrorPage(403, 'invalid_request', 'The form has expired. Go back to the app and start again.');
    }
    const request = flow.params.oauth as unknown as AuthorizationRequest;
    await ctx.end(res, flow, 'cancel');
    ctx.respond(res, request, errorParams(new OAuthError('access_denied', 'the user cancelled the sign-in')));
  };
}
