import type { AuthorizationRequestResolver } from '../../plugins/extensions.js';
import type { ClientRegistry, OAuthClient } from '../clients.js';
import { OAuthError } from '../errors.js';
import { ErrorPage, RedirectError, validate } from './request.js';

/**
 * The query an authorization request is validated with, once a plugin's resolver (plugin API
 * 1.3, e.g. pushed authorization requests, RFC 9126 §4) had its say:
 *
 * - with `request_uri`: the parameters it stands for, which are the request (the query's
 *   others are ignored, as for a request object, RFC 9101 §6.3); the query's `client_id` is
 *   required and must be the resolved one. A refusal is an error page: no redirect URI is
 *   trusted yet.
 * - without: the query as it is, unless the resolver requires resolved requests of the app
 *   (`invalid_request`, on a page: the request's redirect URI is the unpushed request's).
 *
 * Without a resolver the query is left alone: validate() refuses `request_uri` as before.
 */
export async function resolveRequestUri(
  query: string,
  clients: Pick<ClientRegistry, 'get'>,
  resolver: AuthorizationRequestResolver | undefined,
): Promise<string> {
  if (!resolver) return query;
  const q = new URLSearchParams(query.includes('?') ? query.slice(query.indexOf('?') + 1) : query);
  const requestUri = q.getAll('request_uri').filter(Boolean);
  const clientIds = q.getAll('client_id').filter(Boolean);
  if (requestUri.length === 0) {
    // A repeated or unknown client_id is validate()'s to refuse.
    const client = clientIds.length === 1 ? clients.get(clientIds[0]!) : undefined;
    if (client && resolver.required?.(client)) {
      throw new ErrorPage(400, 'invalid_request', 'This app must push its authorization requests (request_uri).');
    }
    return query;
  }
  if (requestUri.length > 1 || clientIds.length > 1) {
    throw new ErrorPage(400, 'invalid_request', 'A parameter appears more than once.');
  }
  if (clientIds.length === 0)
    throw new ErrorPage(400, 'invalid_request', 'The client_id is required with request_uri.');
  const client = clients.get(clientIds[0]!);
  if (!client) throw new ErrorPage(400, 'invalid_client', 'The app (client_id) is not registered.');
  if (q.get('request')) throw new ErrorPage(400, 'invalid_request', 'request and request_uri cannot be used together.');
  let params: Record<string, string>;
  try {
    params = await resolver.resolve({ client, requestUri: requestUri[0]! });
  } catch (err) {
    if (err instanceof OAuthError) throw new ErrorPage(400, err.code, err.message);
    throw err;
  }
  // The resolver's word is checked, not trusted: another app's request, or one that points on.
  if (params.client_id !== client.clientId || params.request_uri !== undefined || params.request !== undefined) {
    throw new ErrorPage(400, 'invalid_request_uri', 'The request_uri is not a request of this app.');
  }
  return `?${new URLSearchParams(params).toString()}`;
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
