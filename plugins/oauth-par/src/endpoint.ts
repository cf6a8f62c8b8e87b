import type { Request, Response } from 'express';
import {
  CLIENT_AUTH_ERRORS,
  CLIENT_AUTH_FIELDS,
  defineRoute,
  OAuthError,
  routeInput,
  z,
  type NamedLimit,
  type WebApi,
} from '@gatehouse-auth/core';
import type { PushedRequests } from './store.js';

const optional = (description: string) => z.string().optional().meta({ description });

/** Client authentication parameters (RFC 6749 §2.3, RFC 7523 §2.2): not part of the request stored. */
const CLIENT_AUTH_PARAMS = ['client_secret', 'client_assertion', 'client_assertion_type'];

/** POST {mount}, as /openapi.json shows it (the endpoint is the mount path itself). */
export const pushedAuthorizationRoute = defineRoute({
  id: 'pushedAuthorizationRequest',
  method: 'post',
  path: '',
  // Express answers the mount path with and without the slash.
  also: ['/'],
  tag: 'oauth',
  summary: 'Pushed authorization request endpoint (RFC 9126 §2)',
  description:
    'The client authenticates as at the token endpoint (a public client by its client_id) and sends the parameters of an authorization request; they are checked as /authorize checks them and kept for expires_in seconds under a single-use request_uri, which the client then sends to /authorize with its client_id.',
  security: ['clientBasic', 'clientPost'],
  body: z
    .object({
      response_type: optional('code (or token where the app may use it)'),
      redirect_uri: optional('one of the app’s registered redirect URIs (exactly)'),
      scope: optional('a subset of the app’s scopes'),
      state: optional('returned to the redirect URI'),
      code_challenge: optional('PKCE (S256); required for public clients'),
      code_challenge_method: optional('S256'),
      dpop_jkt: optional('RFC 9449 §10: the thumbprint of the key the code is bound to (or send a DPoP proof)'),
      ...CLIENT_AUTH_FIELDS,
    })
    .catchall(z.string()),
  bodyTypes: ['application/x-www-form-urlencoded'],
  errorStyle: 'oauth',
  response: {
    status: 201,
    description: 'the request_uri (RFC 9126 §2.2)',
    schema: z.object({
      request_uri: z.string().meta({ description: 'urn:ietf:params:oauth:request_uri: and 256 random bits' }),
      expires_in: z.number().int(),
    }),
  },
  errors: [
    ...CLIENT_AUTH_ERRORS,
    'unsupported_response_type',
    'invalid_scope',
    {
      code: 'request_not_supported',
      status: 400,
      description: 'request objects are not supported (no oauth-jar plugin)',
    },
    { code: 'invalid_dpop_proof', status: 400, description: 'a DPoP proof that is not valid (oauth-dpop)' },
    { code: 'use_dpop_nonce', status: 400, description: 'retry with the DPoP-Nonce answered (oauth-dpop)' },
    { code: 'invalid_request_object', status: 400, description: 'the request object is not valid (oauth-jar)' },
    { code: 'temporarily_unavailable', status: 429, description: 'too many pushed requests; retry later' },
  ],
});

export interface EndpointOptions {
  /** Seconds a request_uri lives. */
  expiresIn: number;
  /** Pushed requests per client (per client and address for a public one) and window. */
  pushes: NamedLimit;
}

/** The pushed authorization request (RFC 9126 §2.1) and its response (§2.2). */
export function pushedAuthorization(web: WebApi, requests: PushedRequests, options: EndpointOptions) {
  return async (req: Request, res: Response): Promise<void> => {
    // A repeated parameter breaks the schema: invalid_request (RFC 9126 §2.1). Empty ones are absent.
    const body = routeInput(pushedAuthorizationRoute, req).body;
    const params = Object.fromEntries(
      Object.entries(body).filter(([, v]) => typeof v === 'string' && v !== ''),
    ) as Record<string, string>;
    const client = await web.authenticateClient(req, params);
    // Anyone may name a public client: its pushes are counted by address as well.
    const wait = await options.pushes.hit(
      client.isPublic ? `${client.clientId}:${web.clientIp(req)}` : client.clientId,
    );
    if (wait) {
      throw new OAuthError('temporarily_unavailable', 'too many pushed requests; retry later', 429, {
        'Retry-After': String(wait),
      });
    }
    if (params.client_id !== undefined && params.client_id !== client.clientId) {
      throw new OAuthError('invalid_request', 'client_id is not the authenticated client');
    }
    // §2.1: a pushed request must not point at another one.
    if (params.request_uri !== undefined) throw new OAuthError('invalid_request', 'request_uri cannot be pushed');
    const sent = Object.fromEntries(Object.entries(params).filter(([k]) => !CLIENT_AUTH_PARAMS.includes(k)));
    // A signed request object (RFC 9101) stands for the whole request; an app that must sign is held to it.
    const request = await web.authorizationParameters(client, { ...sent, client_id: client.clientId });
    request.client_id = client.clientId;
    // RFC 9449 §10.1: a DPoP proof here binds the code to its key, as dpop_jkt would (both: the same key).
    const proof = await web.proofOfPossession(req, client);
    if (proof) {
      if (request.dpop_jkt !== undefined && request.dpop_jkt !== proof.jkt) {
        throw new OAuthError('invalid_request', 'dpop_jkt is not the key of the DPoP proof');
      }
      request.dpop_jkt = proof.jkt;
    }
    // §2.1: validated as /authorize would (redirect URI, response type, scope, PKCE, state…).
    web.validateAuthorizationRequest(client, request);
    const requestUri = await requests.push(client.clientId, request, options.expiresIn);
    res
      .status(201)
      .set({ 'Cache-Control': 'no-store', Pragma: 'no-cache', ...proof?.headers })
      .json({ request_uri: requestUri, expires_in: options.expiresIn });
  };
}
