import type { RequestHandler } from 'express';
import { readCookie } from '../../http/cookies.js';
import { safeEqual } from '../../util/crypto.js';
import { OAuthError } from '../errors.js';
import { consentPage } from '../pages.js';
import { csrfToken } from './browser.js';
import type { AuthorizeContext } from './context.js';
import { finish } from './finish.js';
import { alreadyFinished, ErrorPage, errorParams } from './request.js';

/** GET /login/consent: what the app asks for, with Allow and Deny (a form bound to the flow cookie). */
export function showConsent(ctx: AuthorizeContext): RequestHandler {
  return async (req, res) => {
    const { flow, request } = await ctx.boundFlow(req, req.query.request_id, 'completed');
    const client = ctx.deps.clients.get(request.client_id)!;
    consentPage(res, ctx.pageFor(req, request), {
      clientName: client.name,
      redirectUris: client.redirectUris,
      scopes: request.scope,
      requestId: flow.id,
      csrf: csrfToken(readCookie(req, ctx.deps.binding.flowCookie(flow.id))!),
    });
  };
}

/** POST /login/consent: Deny answers access_denied; Allow is remembered, then the client is answered. */
export function decideConsent(ctx: AuthorizeContext): RequestHandler {
  const { clients, consents, flows, sessions, binding } = ctx.deps;
  return async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const { flow, request } = await ctx.boundFlow(req, body.request_id, 'completed');
    // The form must echo a token derived from this browser's flow cookie (CSRF).
    const expected = csrfToken(readCookie(req, binding.flowCookie(flow.id))!);
    if (typeof body.csrf !== 'string' || !safeEqual(body.csrf, expected)) {
      throw new ErrorPage(403, 'invalid_request', 'The form has expired. Start again from the app.');
    }
    const client = clients.get(request.client_id)!;
    if (body.decision !== 'allow') {
      if (!(await flows.finish(flow.id))) throw alreadyFinished();
      ctx.forgetFlow(res, flow);
      return ctx.respond(res, request, errorParams(new OAuthError('access_denied', 'the user denied the request')));
    }
    await consents.put(`${flow.userId}:${client.clientId}`, { scopes: request.scope });
    const session = await sessions.get(readCookie(req, ctx.sessionCookie));
    await finish(
      ctx,
      res,
      { flow, client, request, session: session?.userId === flow.userId ? session : null },
      req.log,
    );
  };
}
