import type { Request, RequestHandler, Response } from 'express';
import { ok } from '../../http/envelope.js';
import type { JsonObject } from '../../plugins/extensions.js';
import { stagesFor } from '../acr.js';
import { OAuthError } from '../errors.js';
import type { AuthorizeContext } from './context.js';
import { ErrorPage, RedirectError, validate } from './request.js';

export const GENERATE_PATH = '/authz-srv/authrequest/authz/generate';

/**
 * POST /authz-srv/authrequest/authz/generate (cidaas-style): an app's own login UI asks for a
 * request id by XHR with the parameters of an authorization request, as JSON or a form. The flow
 * is the one /authorize would start, validated the same way, but no browser is bound to it yet:
 * the first successful continuation claims it for its browser (decision 20). Such an XHR carries
 * no Gatehouse cookie, so there is no single sign-on here, and `prompt=none` cannot be answered.
 */
export function generateAuthorization(ctx: AuthorizeContext): RequestHandler {
  const { clients, flows, config } = ctx.deps;
  return async (req: Request, res: Response) => {
    const wait = await ctx.flowStartWait(req);
    if (wait) {
      res.set('Retry-After', String(wait));
      throw new OAuthError('temporarily_unavailable', 'too many sign-in requests from this address', 429);
    }
    const body = (req.body ?? {}) as Record<string, unknown>;
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(body)) {
      if (typeof value === 'string' || typeof value === 'number') query.set(name, String(value));
      else throw new OAuthError('invalid_request', `${name} must be a string`);
    }
    let request;
    try {
      request = validate(`?${query.toString()}`, clients);
    } catch (err) {
      // No redirect: the caller is a script that reads the answer.
      if (err instanceof ErrorPage) throw new OAuthError(err.code, err.message, err.status);
      if (err instanceof RedirectError) throw new OAuthError(err.code, err.message);
      throw err;
    }
    const client = clients.get(request.client_id)!;
    if (!client.loginPageUrl) {
      throw new OAuthError('unauthorized_client', 'the app has no login_page_url; send the browser to /authorize');
    }
    if (!client.loginStages.length) throw new OAuthError('server_error', 'the app has no login stages configured', 500);
    if (request.prompt.includes('none')) {
      throw new OAuthError('login_required', 'a generated request cannot see a browser session; use /authorize');
    }
    const flow = await flows.create({
      clientId: client.clientId,
      stages: stagesFor(client, request),
      ttlSeconds: config.verification.flow_ttl,
      params: { oauth: request as unknown as JsonObject, unclaimed: true },
    });
    ok(res, { requestId: flow.id });
  };
}
