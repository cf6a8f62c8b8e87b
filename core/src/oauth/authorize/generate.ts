import type { Request, RequestHandler, Response } from 'express';
import { ok } from '../../http/envelope.js';
import { z } from 'zod';
import { defineRoute, routeInput } from '../../http/api-spec.js';
import type { JsonObject } from '../../plugins/extensions.js';
import { stagesFor } from '../acr.js';
import { OAuthError } from '../errors.js';
import type { AuthorizeContext } from './context.js';
import { ErrorPage, RedirectError, validate } from './request.js';

export const GENERATE_PATH = '/authz-srv/authrequest/authz/generate';

/** Each parameter one value, as in a query string; numbers are read as text. */
const parameter = z.union([z.string(), z.number()]);

export const GENERATE_ROUTE = defineRoute({
  id: 'generateLoginRequest',
  method: 'post',
  path: GENERATE_PATH,
  tag: 'login',
  summary: 'Start a login for an app’s own login UI (cidaas-style): the request id, without a redirect',
  description:
    'The parameters of an authorization request, validated as /authorize validates them; the first continuation that succeeds binds the flow to its browser (decision 20).',
  body: z
    .object(
      Object.fromEntries(
        [
          'client_id',
          'response_type',
          'redirect_uri',
          'scope',
          'state',
          'nonce',
          'code_challenge',
          'code_challenge_method',
        ].map((name) => [name, parameter.optional()]),
      ),
    )
    .catchall(parameter),
  bodyTypes: ['application/json', 'application/x-www-form-urlencoded'],
  errorStyle: 'oauth',
  invalid: (_message, names) => new OAuthError('invalid_request', `${names[0]} must be a string`),
  response: { description: 'the login request', schema: z.object({ requestId: z.string() }) },
  errors: [
    'invalid_request',
    { code: 'invalid_client', status: 400, description: 'the app (client_id) is not registered' },
    'unsupported_response_type',
    'invalid_scope',
    { code: 'request_not_supported', status: 400, description: 'request objects are not supported' },
    { code: 'request_uri_not_supported', status: 400, description: 'request_uri is not supported' },
    {
      code: 'invalid_request_uri',
      status: 400,
      description: 'the request_uri is unknown, expired, used or another app’s (with a plugin that resolves it)',
    },
    'unauthorized_client',
    'login_required',
    { code: 'server_error', status: 500, description: 'the app has no login stages configured' },
    { code: 'temporarily_unavailable', status: 429, description: 'too many sign-in requests from this address' },
    'INVALID_REQUEST_BODY',
    'PAYLOAD_TOO_LARGE',
    'UNSUPPORTED_MEDIA_TYPE',
  ],
});

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
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(routeInput(GENERATE_ROUTE, req).body)) {
      if (value !== undefined) query.set(name, String(value));
    }
    let request;
    try {
      request = validate(await ctx.requestQuery(`?${query.toString()}`), clients);
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
