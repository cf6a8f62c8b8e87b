import {
  boundKey,
  confirmationOf,
  type ErrorRef,
  type JsonObject,
  type ResourceAccess,
  type TokenInfo,
} from '@gatehouse-auth/plugin-api';
import type { IncomingMessage } from 'node:http';
import type { GatehouseConfig } from '../config/schema.js';
import { TOKEN_BINDING, type Extensions } from '../plugins/loader.js';
import { dpopErrors } from './api.js';
import { bindingRequest } from './binding-request.js';
import { namedClaims, scopeClaims, type ClaimRequest, type UserClaims } from './claims.js';
import type { ClientRegistry } from './clients.js';
import { OAuthError } from './errors.js';
import type { TokenService } from './tokens.js';

/** What checking a protected resource's token needs (the cradle provides it). */
export interface ResourceDeps {
  config: GatehouseConfig;
  tokens: TokenService;
  clients: ClientRegistry;
  extensions: Extensions;
  userClaims: UserClaims;
}

/**
 * The access token a request to a protected resource presents (`web.protectedResource`, plugin
 * API 1.3): RFC 6750's bearer token, RFC 9449's DPoP-bound token with its proof, RFC 8705's
 * certificate-bound token over a connection with that certificate, each binding the plugin's.
 */
export async function protectedResource(
  deps: ResourceDeps,
  req: IncomingMessage & { body?: unknown },
  options: { scope?: string; user?: boolean } = {},
): Promise<ResourceAccess> {
  const binding = deps.extensions.tokenBinding.get(TOKEN_BINDING);
  const header = req.headers.authorization ?? '';
  const form =
    req.method === 'POST' && FORM.test(req.headers['content-type'] ?? '') && isForm(req.body) ? req.body : {};
  const dpop = binding !== undefined && /^DPoP /i.test(header);
  const presented =
    /^Bearer /i.test(header) || dpop
      ? header.slice(dpop ? 5 : 7).trim()
      : typeof form.access_token === 'string'
        ? form.access_token
        : '';
  const info: TokenInfo = presented ? await deps.tokens.inspect(presented) : { active: false };
  // RFC 9449 §7: a token bound to a key is used with a proof of that key, never as a bearer token.
  const jkt = info.token ? boundKey(info.token) : null;
  const refuse = (why: string) => {
    const algs = binding ? `, algs="${binding.algorithms.join(' ')}"` : '';
    const challenge = `DPoP error="invalid_token", error_description="${why}"${algs}`;
    return new OAuthError('invalid_token', why, 401, dpop || jkt ? { 'WWW-Authenticate': challenge } : {});
  };
  const token = info.token;
  if (!info.active || token?.kind !== 'access' || (options.user && !token.subject)) {
    throw refuse('a valid access token is required');
  }
  if (dpop || jkt) {
    const proven = dpop
      ? await binding.resourceRequest({ ...bindingRequest(deps.config.issuer, req), accessToken: presented })
      : null;
    if (!jkt || proven !== jkt)
      throw refuse(dpop ? 'the token is not bound to the key of the proof' : 'a DPoP-bound token needs a DPoP proof');
  }
  // RFC 8705 §3: a certificate-bound token is used over a connection with that certificate.
  // Every other `cnf` member needs its binding's word (none, when its plugin is gone: refused).
  for (const [member, bound] of Object.entries(confirmationOf(token) ?? {})) {
    const other = member === 'jkt' ? null : deps.extensions.tokenBinding.get(member);
    if (other === null) continue;
    const request = { ...bindingRequest(deps.config.issuer, req), accessToken: presented };
    if (!other || (await other.resourceRequest(request)) !== bound)
      throw refuse('the token is bound to a client certificate the request does not present');
  }
  if (options.scope !== undefined && !token.scope.includes(options.scope))
    throw new OAuthError('insufficient_scope', `the token lacks the ${options.scope} scope`);
  const client = deps.clients.get(token.clientId);
  if (!client) throw new OAuthError('invalid_token', 'the app of this token is no longer registered');
  return { token, client };
}

/** What `protectedResource` may answer on this server: the DPoP refusals with a key binding. */
export const protectedResourceErrors = (extensions: Extensions): ErrorRef[] => [
  'invalid_token',
  'insufficient_scope',
  ...(extensions.tokenBinding.get(TOKEN_BINDING) ? dpopErrors(401) : []),
];

/** The claims of the token's scopes (OIDC Core §5.4) and those its `claims` parameter named for userinfo. */
export function resourceClaims(deps: Pick<ResourceDeps, 'userClaims'>, access: ResourceAccess) {
  const { token, client } = access;
  if (!token.subject) return Promise.resolve<JsonObject | null>(null);
  const requested = token.data.userinfo_claims as Record<string, ClaimRequest> | undefined;
  const names = [...scopeClaims(token.scope), ...namedClaims(client, token.scope, requested)];
  return deps.userClaims.of(token.subject, names);
}

const FORM = /^application\/x-www-form-urlencoded\b/i;
const isForm = (body: unknown): body is Record<string, unknown> => typeof body === 'object' && body !== null;
