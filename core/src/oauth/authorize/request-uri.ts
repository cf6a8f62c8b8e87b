import type { AuthorizationRequestResolver, OAuthClient, RequestObjectVerifier } from '@gatehouse-auth/plugin-api';
import type { ClientRegistry } from '../clients.js';
import { OAuthError } from '../errors.js';
import { ErrorPage, RedirectError, validate } from './request.js';

/** What plugins registered for authorization requests (plugin API 1.3), each at most one. */
export interface RequestSources {
  /** Resolves `request_uri` (pushed authorization requests, RFC 9126). */
  resolver?: AuthorizationRequestResolver;
  /** Verifies `request` (signed request objects, RFC 9101). */
  verifier?: RequestObjectVerifier;
}

/**
 * The query an authorization request is validated with, once the plugins had their say. A
 * refusal is an error page: no redirect URI is trusted yet.
 *
 * - with `request_uri`: the parameters the resolver says it stands for (RFC 9126 §4);
 * - with `request`: the parameters of the verified request object (RFC 9101 §6.3);
 *
 * either way they are the whole request (the query's others are ignored), and the query's
 * `client_id` is required and must be theirs.
 * - with neither: the query as it is, unless the app must push or sign its requests
 *   (`invalid_request`, on a page: the request's redirect URI is the plain request's).
 *
 * Without the plugin, validate() refuses `request_uri` or `request` as before.
 */
export async function resolveRequestUri(
  query: string,
  clients: Pick<ClientRegistry, 'get' | 'refusal'>,
  { resolver, verifier }: RequestSources,
): Promise<string> {
  const q = new URLSearchParams(query.includes('?') ? query.slice(query.indexOf('?') + 1) : query);
  const requestUri = q.getAll('request_uri').filter(Boolean);
  const request = q.getAll('request').filter(Boolean);
  const clientIds = q.getAll('client_id').filter(Boolean);
  const byReference = requestUri.length > 0 && resolver;
  const byValue = request.length > 0 && verifier;
  // The client policies that hold the app (decision 80) see how the request came, before it is resolved.
  const named = clientIds.length === 1 ? clients.get(clientIds[0]!) : undefined;
  const pushed = Boolean(byReference);
  const refusal = named && clients.refusal(named, (policy) => policy.authorizationRequest?.(named, { pushed }));
  if (refusal) throw new ErrorPage(400, 'invalid_request', refusal);
  if (!resolver && !verifier) return query;
  if (!byReference && !byValue) {
    // A repeated or unknown client_id, or a request or request_uri nobody resolves, is validate()'s to refuse.
    if (named && !requestUri.length && !request.length) refuseUnwrapped(named, { resolver, verifier });
    return query;
  }
  if (requestUri.length > 1 || request.length > 1 || clientIds.length > 1) {
    throw new ErrorPage(400, 'invalid_request', 'A parameter appears more than once.');
  }
  if (requestUri.length && request.length) {
    throw new ErrorPage(400, 'invalid_request', 'request and request_uri cannot be used together.');
  }
  if (clientIds.length === 0) {
    throw new ErrorPage(
      400,
      'invalid_request',
      `The client_id is required with ${byValue ? 'request' : 'request_uri'}.`,
    );
  }
  const client = clients.get(clientIds[0]!);
  if (!client) throw new ErrorPage(400, 'invalid_client', 'The app (client_id) is not registered.');
  let params: Record<string, string>;
  try {
    params = byValue
      ? await verifier.verify({ client, request: request[0]! })
      : await resolver!.resolve({ client, requestUri: requestUri[0]! });
  } catch (err) {
    if (err instanceof OAuthError) throw new ErrorPage(400, err.code, err.message);
    throw err;
  }
  // The plugin's word is checked, not trusted: another app's request, or one that points on.
  if (params.client_id !== client.clientId || params.request_uri !== undefined || params.request !== undefined) {
    throw byValue
      ? new ErrorPage(400, 'invalid_request_object', 'The request object is not a request of this app.')
      : new ErrorPage(400, 'invalid_request_uri', 'The request_uri is not a request of this app.');
  }
  // A pushed request was held to the signing rule when it was pushed (web.authorizationParameters).
  return `?${new URLSearchParams(params).toString()}`;
}

/** Refuses a plain request of an app that must push (RFC 9126 §5) or sign (RFC 9101 §10.5) its requests. */
function refuseUnwrapped(client: OAuthClient, { resolver, verifier }: RequestSources): void {
  if (resolver?.required?.(client)) {
    throw new ErrorPage(400, 'invalid_request', 'This app must push its authorization requests (request_uri).');
  }
  if (verifier?.required?.(client)) {
    throw new ErrorPage(400, 'invalid_request', 'This app must sign its authorization requests (request).');
  }
}

/**
 * Since plugin API 1.3 (`web.authorizationParameters`): the parameters of an authorization
 * request a client sent in a body (a pushed request, RFC 9126 §3): with `request`, the verified
 * request object's (its client_id must be the authenticated client); without, `params` as they
 * are, unless the app must sign its requests. Refusals are OAuthErrors (400).
 */
export async function authorizationParametersOf(
  verifier: RequestObjectVerifier | undefined,
  client: OAuthClient,
  params: Record<string, string>,
): Promise<Record<string, string>> {
  if (params.request === undefined) {
    if (verifier?.required?.(client)) {
      throw new OAuthError('invalid_request', 'this app must sign its authorization requests (request)');
    }
    return params;
  }
  if (!verifier) throw new OAuthError('request_not_supported', 'request objects are not supported');
  const resolved = await verifier.verify({ client, request: params.request });
  if (resolved.client_id !== client.clientId || resolved.request !== undefined || resolved.request_uri !== undefined) {
    throw new OAuthError('invalid_request_object', 'the request object is not a request of this app');
  }
  return resolved;
}

/**
 * An authorization request's parameters for `client` checked as /authorize checks them, every
 * refusal an OAuthError (400) for the caller to answer: no page, no redirect (`api.web`'s
 * validateAuthorizationRequest, e.g. for a pushed request, RFC 9126 §2.1).
 */
export function validateRequestOf(clients: ClientRegistry, client: OAuthClient, params: Record<string, string>): void {
  try {
    validate(`?${new URLSearchParams({ ...params, client_id: client.clientId }).toString()}`, clients);
  } catch (err) {
    if (err instanceof ErrorPage || err instanceof RedirectError) throw new OAuthError(err.code, err.message, 400);
    throw err;
  }
}
