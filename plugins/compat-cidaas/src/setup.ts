import {
  isProtocolError,
  routeInput,
  verificationError,
  type ApiError,
  type OAuthClient,
  type RouteSpec,
  answerSuccess,
  type MethodSetup,
} from '@gatehouse-auth/core';
import type { Request } from 'express';
import { CIDAAS_API } from './api.js';
import { type RouteGroupInput } from './http.js';

/**
 * The cidaas-style setup calls beside the core's setup API: setting a method up during a login
 * (the track id), the account page's overview, and naming a credential.
 */
export function setupRoutes({ api, router }: RouteGroupInput): RouteSpec[] {
  const { services, web } = api;
  const json = services.http.json();
  const form = services.http.form();

  /**
   * The confidential app whose back end authenticated this call (RFC 6749 §2.3: Basic, a body
   * secret, a client assertion), or null when it sends no client credentials. A public client
   * has no secret to prove it is the app's back end, so it never counts.
   */
  const appBackEnd = async (req: Request, fields: Record<string, unknown>): Promise<OAuthClient | null> => {
    const params = Object.fromEntries(
      Object.entries(fields).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
    if (!req.headers.authorization && !params.client_secret && !params.client_assertion) return null;
    let client: OAuthClient;
    try {
      client = await web.authenticateClient(req, params);
    } catch (err) {
      // A refusal in the verification API's words; anything else is a fault, not a wrong secret.
      if (!isProtocolError(err)) throw err;
      const throttled = (err as ApiError).status === 429;
      throw verificationError(throttled ? 'TOO_MANY_ATTEMPTS' : 'UNAUTHORIZED', 'client authentication failed');
    }
    if (client.isPublic) throw verificationError('UNAUTHORIZED', 'a public client cannot call for its back end');
    return client;
  };

  // Setting a method up during a login (decision 34): the track id came to the UI with `sub`.
  // It travels in a URL, so it needs a second thing only the login's own parties hold: the
  // browser's flow cookie (a same-site UI's XHR with credentials: 'include'), or the app's own
  // client authentication (its back end calls for a UI on another site, where the cookie is a
  // third-party cookie that browsers may drop).
  router.post(CIDAAS_API.loginSetup.path, json, form, async (req, res) => {
    const method = String(req.params.method);
    const { params, body: input } = routeInput(CIDAAS_API.loginSetup, req);
    const { sub: _sub, client_id, client_secret, client_assertion, client_assertion_type, ...body } = input;
    const backEnd = await appBackEnd(req, { client_id, client_secret, client_assertion, client_assertion_type });
    const flow = await web.loginFlows.byTrackId(params.trackId);
    const party = backEnd ? backEnd.clientId === flow.clientId : web.loginFlows.isBound(req, flow);
    if (!party) {
      throw verificationError(
        'FLOW_NOT_BOUND',
        'set a method up from the browser doing this login: send its cookies (credentials: include)',
      );
    }
    const user = await web.setup.duringLogin(flow, method, req);
    answerSuccess(res, await services.resolve<MethodSetup>('methodSetup').step('initiation', method, user, body, req));
  });

  // What an app shows on its account page: the app's methods and this user's state of each.
  router.get(CIDAAS_API.accountConfig.path, async (req, res) => {
    const { user, clientId } = await web.setup.access(req, res, req.query.sub);
    const { query } = routeInput(CIDAAS_API.accountConfig, req);
    answerSuccess(res, await web.setup.overview(user, clientId ?? query.client_id, req));
  });

  // cidaas's way to name a credential just set up; the track id is the credential's id.
  router.put(CIDAAS_API.friendlyName.path, json, form, async (req, res) => {
    const { user } = await web.setup.access(req, res, (req.body as Record<string, unknown> | undefined)?.sub);
    const label = routeInput(CIDAAS_API.friendlyName, req).body.friendly_name;
    const credentialId = String(req.params.trackId);
    await services.resolve<MethodSetup>('methodSetup').rename(user, String(req.params.method), credentialId, label);
    answerSuccess(res, { id: credentialId, friendly_name: label });
  });

  return [CIDAAS_API.loginSetup, CIDAAS_API.accountConfig, CIDAAS_API.friendlyName];
}
