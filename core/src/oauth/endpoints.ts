import {
  boundKey,
  type Clock,
  type Confirmation,
  confirmationOf,
  type OAuthClient,
  routeInput,
  type TokenBinding,
  type TokenInfo,
} from '@gatehouse-auth/plugin-api';
import { BootError } from '../errors.js';
import type { IncomingMessage } from 'node:http';
import type { GatehouseConfig } from '../config/schema.js';
import express, { type Request, type Response, type Router } from 'express';
import { sendReply, type Endpoint, type FastRoute, type Reply } from '../http/fast-routes.js';
import { lazyLogger } from '../http/logging.js';
import type { Locales } from '../i18n/locales.js';
import type { Metrics } from '../observability/metrics.js';
import type { Tracing } from '../observability/tracing.js';
import { isProtocolError } from '../errors.js';
import type { UserService } from '../users/users.js';
import { clientIp, requestFacts } from '../verification/context.js';
import type { VerificationService } from '../verification/service.js';
import type { AssertionReplayStore } from './assertions.js';
import { CLIENT_AUTH_SIGNING_ALGS, type ClientAuthenticator } from './client-auth.js';
import type { ClientRegistry } from './clients.js';
import { INTROSPECT_PATHS, oauthApi, REVOKE_PATHS, TOKEN_PATHS } from './api.js';
import { OAuthError } from './errors.js';
import { ACCOUNT_PATH, CONSENT_PATH } from './authorize/context.js';
import { readForm } from './form.js';
import type { KeyStore } from './keys.js';
import { USER_CLAIMS } from './claims.js';
import { oauthServicesFactory } from './services.js';
import type { TokenService } from './tokens.js';
import { bindingRequest } from './binding-request.js';
import type { Extensions } from '../plugins/loader.js';

/** Every path the spec gives for each endpoint. */
export const PATHS = {
  authorize: ['/api/oauth2/authorize', '/api/oauth2/authorize/'],
  token: [...TOKEN_PATHS],
  introspect: [...INTROSPECT_PATHS],
  revoke: [...REVOKE_PATHS],
  jwks: ['/.well-known/jwks.json'],
};

/** What the token, introspection, revocation and metadata endpoints use (the cradle provides it). */
export interface OAuthDeps {
  config: GatehouseConfig;
  clock: Clock;
  clients: ClientRegistry;
  clientAuth: ClientAuthenticator;
  tokens: TokenService;
  keys: KeyStore;
  replay: AssertionReplayStore;
  verification: VerificationService;
  extensions: Extensions;
  /** The hosted pages' languages, for `ui_locales_supported`. */
  locales: Locales;
  users: UserService;
  metrics: Metrics;
  tracing: Tracing;
}

export function endpointUrls(issuer: string) {
  const base = issuer.replace(/\/$/, '');
  return {
    authorization_endpoint: `${base}/api/oauth2/authorize/`,
    token_endpoint: `${base}/oauth/token`,
    introspection_endpoint: `${base}/token/introspect`,
    revocation_endpoint: `${base}/oauth2/revoke/`,
    jwks_uri: `${base}/.well-known/jwks.json`,
  };
}

/** Audiences a client or bearer assertion may name: the issuer and every token endpoint URL. */
export function assertionAudiences(issuer: string): string[] {
  const base = issuer.replace(/\/$/, '');
  return [
    base,
    `${base}/`,
    ...PATHS.token.filter((p) => p !== '/').map((p) => base + p),
    ...PATHS.introspect.map((p) => base + p),
    ...PATHS.revoke.map((p) => base + p),
  ];
}

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
/** A request no token binding is loaded to read: its tokens are bound to nothing. */
const NO_PROOF: Awaited<ReturnType<typeof proofOf>> = Object.freeze({ confirmation: null });
const json = (body: unknown): Reply => ({ status: 200, headers: NO_STORE, body });

/** The parameters every grant receives, whatever it declares. */
const COMMON_PARAMETERS = ['grant_type', 'client_id'];

function pick(params: Record<string, string>, declared: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const names of [COMMON_PARAMETERS, declared])
    for (const name of names) if (params[name] !== undefined) out[name] = params[name];
  return out;
}

/** The token, introspection and revocation endpoints, free of any framework (see withFastRoutes). */
export type OAuthEndpoints = ReturnType<typeof oauthEndpoints>;

export function oauthEndpoints(deps: OAuthDeps) {
  const urls = endpointUrls(deps.config.issuer);
  const api = oauthApi(deps.extensions.grants.values());
  const audiences = assertionAudiences(deps.config.issuer);
  const bindings = deps.extensions.tokenBinding.values();
  const oauthFor = oauthServicesFactory({
    issuer: deps.config.issuer,
    tokenEndpoint: urls.token_endpoint,
    assertionAudiences: audiences,
    tokens: deps.tokens,
    replay: deps.replay,
    verification: deps.verification,
    users: deps.users,
    keys: deps.keys,
    clock: deps.clock,
  });

  const authenticate = (req: IncomingMessage, params: Record<string, string>, ip: string): Promise<OAuthClient> =>
    deps.clientAuth.authenticate({ params, authorization: req.headers.authorization, request: req }, ip);

  // ── token endpoint (RFC 6749 §3.2) ──
  const token: Endpoint = async (req, ip) => {
    let grantType = 'none';
    try {
      return await tokenRequest(req, ip, (known) => (grantType = known));
    } catch (err) {
      // A refusal counts under a registered grant type only: the parameter is the caller's to choose.
      deps.metrics.tokenRefused(grantType, isProtocolError(err) ? err.code : 'server_error');
      throw err;
    }
  };

  const tokenRequest = async (req: IncomingMessage, ip: string, grantKnown: (grantType: string) => void) => {
    const params = await readForm(req);
    const grantType = routeInput(api.token, { body: params }).body.grant_type;
    const handler = deps.extensions.grants.get(grantType);
    grantKnown(handler ? grantType : 'unsupported');
    const client = await authenticate(req, params, ip);
    if (!handler) throw new OAuthError('unsupported_grant_type', `grant_type ${grantType} is not supported`);
    if (!client.grantTypes.includes(grantType)) {
      throw new OAuthError('unauthorized_client', `this client may not use ${grantType}`);
    }
    // Proof of possession (DPoP, a client certificate), checked before the grant runs: the tokens it issues are bound to it.
    const proof = bindings.length
      ? await proofOf(bindings, { ...bindingRequest(deps.config.issuer, req), client })
      : NO_PROOF;
    // The client policies that hold the app (decision 80): refused before the grant spends a code.
    // A copy of what the tokens are bound to: a policy reads it, never changes it.
    const refusal = deps.clients.refusal(client, (policy) =>
      policy.tokenRequest?.(client, { grantType, confirmation: proof.confirmation && { ...proof.confirmation } }),
    );
    if (refusal) throw new OAuthError('invalid_request', refusal);
    const request = requestFacts(req, ip);
    // The request's child logger is made only if the grant logs (making one costs more than a grant).
    const logger = lazyLogger(() => req.log);
    const ctx = {
      client,
      // Only what the grant declares (RFC 6749 §3.2: other parameters are ignored), so no
      // grant acts on a parameter its documentation and the metadata do not name.
      params: pick(params, handler.parameters),
      request,
      logger,
      oauth: oauthFor(request, logger, proof.confirmation),
    };
    // Untraced, no span's attributes and closure to make.
    const result = await (deps.tracing.enabled
      ? deps.tracing.span('oauth.grant', { 'oauth.grant_type': params.grant_type }, () => handler.handle(ctx))
      : handler.handle(ctx));
    return proof.headers ? { ...json(result), headers: { ...NO_STORE, ...proof.headers } } : json(result);
  };

  // ── introspection (RFC 7662) ──
  const introspect: Endpoint = async (req, ip) => {
    const params = await readForm(req);
    const caller = await introspectionCaller(req, params, ip);
    const { token } = routeInput(api.introspect, { body: params }).body;
    const info = await deps.tokens.inspect(token);
    if (!info.active || !info.token || !visibleTo(info, caller)) return json({ active: false });
    return json(await describe(info));
  };

  /** A client with its credentials, or a bearer access token with the `introspection` scope. */
  const introspectionCaller = async (
    req: IncomingMessage,
    params: Record<string, string>,
    ip: string,
  ): Promise<OAuthClient | 'bearer'> => {
    const header = req.headers.authorization ?? '';
    if (/^Bearer /i.test(header)) {
      const info = await deps.tokens.inspect(header.slice(7).trim());
      // A bound token (DPoP, mutual TLS) is no bearer token.
      const t = info.token;
      if (!info.active || t?.kind !== 'access' || !t.scope.includes('introspection') || confirmationOf(t)) {
        throw new OAuthError('invalid_token', 'the bearer token is invalid or lacks the introspection scope');
      }
      return 'bearer';
    }
    const client = await authenticate(req, params, ip);
    if (client.isPublic) throw new OAuthError('invalid_client', 'public clients may not introspect', 401);
    return client;
  };

  const describe = async (info: TokenInfo) => {
    const t = info.token!;
    const user = t.subject ? await deps.users.findById(t.subject) : null;
    const aud = (t.data.aud as string[] | undefined) ?? [t.clientId];
    return {
      active: true,
      scope: t.scope.join(' '),
      client_id: t.clientId,
      ...(user ? { username: user.username } : {}),
      // The token endpoint's spelling (spec: "Always bearer"); RFC 6749 §5.1 says case-insensitive.
      token_type: t.kind === 'access' ? (boundKey(t) ? 'DPoP' : 'bearer') : 'refresh_token',
      ...(t.data.cnf ? { cnf: t.data.cnf } : {}),
      exp: Math.floor(t.expiresAt.getTime() / 1000),
      iat: Math.floor(t.createdAt.getTime() / 1000),
      nbf: Math.floor(t.createdAt.getTime() / 1000),
      sub: t.subject ?? t.clientId,
      aud: aud.length === 1 ? aud[0] : aud,
      iss: deps.config.issuer,
      ...(typeof t.data.jti === 'string' ? { jti: t.data.jti } : {}),
      // What grants add about their own tokens (client credentials: on whose behalf).
      ...Object.assign({}, ...deps.extensions.grants.values().map((g) => g.introspectionClaims?.(t) ?? {})),
    };
  };

  // ── revocation (RFC 7009) ──
  const revoke: Endpoint = async (req, ip) => {
    const params = await readForm(req);
    const client = await authenticate(req, params, ip);
    const { token } = routeInput(api.revoke, { body: params }).body;
    const info = await deps.tokens.inspect(token);
    if (info.token) {
      if (info.token.clientId !== client.clientId) {
        throw new OAuthError('unauthorized_client', 'the token was not issued to this client');
      }
      // A refresh token takes its whole grant with it (its access tokens too).
      if (info.token.kind === 'refresh') await deps.tokens.revokeGrant(info.token.grantId, 'revoked');
      else await deps.tokens.revokeToken(info.token);
      req.log.info({ client: client.clientId, kind: info.token.kind }, 'token revoked');
    }
    return { status: 200, headers: NO_STORE };
  };

  // GET and friends on a token path.
  const tokenMethodNotAllowed: Endpoint = async () => {
    throw new OAuthError('invalid_request', 'the token endpoint accepts POST only', 405, { Allow: 'POST' });
  };

  return { token, introspect, revoke, tokenMethodNotAllowed };
}

/** The hot endpoints at their exact paths, for withFastRoutes. */
export function oauthFastRoutes(endpoints: OAuthEndpoints): FastRoute[] {
  return [
    ...PATHS.token.map((path) => ({ method: 'POST', path, endpoint: endpoints.token })),
    ...PATHS.token
      .filter((p) => p !== '/')
      .map((path) => ({ method: '*', path, endpoint: endpoints.tokenMethodNotAllowed })),
    ...PATHS.introspect.map((path) => ({ method: 'POST', path, endpoint: endpoints.introspect })),
    ...PATHS.revoke.map((path) => ({ method: 'POST', path, endpoint: endpoints.revoke })),
  ].map((route) => ({ ...route, errorStyle: 'oauth' as const }));
}

/** An endpoint as an express handler: other spellings of the paths (case, trailing slash) land here. */
const mount =
  (endpoint: Endpoint) =>
  async (req: Request, res: Response): Promise<void> => {
    res.locals.errorStyle = 'oauth';
    sendReply(res, await endpoint(req, clientIp(req), {}));
  };

export function oauthRoutes(deps: OAuthDeps, endpoints: OAuthEndpoints): Router {
  const router = express.Router();
  for (const route of oauthFastRoutes(endpoints)) {
    router[route.method === 'POST' ? 'post' : 'all'](route.path, mount(route.endpoint));
  }

  // ── JWKS and metadata (RFC 8414, OIDC Discovery) ──
  router.get(PATHS.jwks, async (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(await deps.keys.jwks());
  });
  const metadata = (_req: Request, res: Response) => {
    res.set('Cache-Control', 'public, max-age=300').json(buildMetadata(deps));
  };
  router.get('/.well-known/oauth-authorization-server', metadata);
  router.get('/.well-known/openid-configuration', metadata);
  return router;
}

/**
 * What a token request proves, by every token binding (DPoP, a client certificate): the `cnf`
 * its tokens get (null: bearer tokens) and the headers to answer with (a fresh `DPoP-Nonce`).
 */
async function proofOf(
  bindings: readonly TokenBinding[],
  req: Parameters<TokenBinding['tokenRequest']>[0],
): Promise<{ confirmation: Confirmation | null; headers?: Record<string, string> }> {
  let confirmation: Confirmation | null = null;
  let headers: Record<string, string> | undefined;
  for (const binding of bindings) {
    const proof = await binding.tokenRequest(req);
    if (!proof) continue;
    confirmation = { ...(confirmation ?? {}), [binding.confirmation ?? 'jkt']: proof.value };
    if (proof.headers) headers = { ...headers, ...proof.headers };
  }
  return { confirmation, ...(headers ? { headers } : {}) };
}

/** Who may see a token: the client it was issued to or names in its audience; a bearer caller sees all. */
function visibleTo(info: TokenInfo, caller: OAuthClient | 'bearer'): boolean {
  if (caller === 'bearer') return true;
  const aud = (info.token!.data.aud as string[] | undefined) ?? [];
  return info.token!.clientId === caller.clientId || aud.includes(caller.clientId);
}

/** Generated from what is registered: grant plugins, clients, methods, plugins' members. Never hand-written. */
export function buildMetadata(
  deps: Pick<OAuthDeps, 'config' | 'clients' | 'extensions' | 'locales'>,
): Record<string, unknown> {
  const contributed = deps.extensions.metadata.values().map((m) => [m.name, m.value] as const);
  return { ...coreMetadata(deps), ...Object.fromEntries(contributed) };
}

/** The members the core itself sets. */
function coreMetadata(deps: Pick<OAuthDeps, 'config' | 'clients' | 'extensions' | 'locales'>): Record<string, unknown> {
  const clients = deps.clients.all();
  const registeredGrants = deps.extensions.grants.ids();
  const usedGrants = new Set(clients.flatMap((c) => c.grantTypes));
  const grantTypes = registeredGrants.filter((g) => usedGrants.has(g));
  const implicit = clients.some((c) => c.responseTypes.includes('token'));
  const responseTypes = [...new Set(clients.flatMap((c) => c.responseTypes))].filter(
    (r) => r === 'code' || (r === 'token' && implicit),
  );
  // A client whose config does not pin its method may also send its secret in the body.
  const lenient = clients.some(
    (c) => c.authMethod === 'client_secret_basic' && !deps.clients.secretsOf(c.clientId)?.methodPinned,
  );
  const authMethods = [
    ...new Set([...clients.map((c) => c.authMethod), ...(lenient ? ['client_secret_post' as const] : [])]),
  ];
  const endpointAuth = authMethods.filter((m) => m !== 'none');
  const usesJwtAuth = authMethods.some((m) => m === 'private_key_jwt' || m === 'client_secret_jwt');
  const algs = usesJwtAuth ? { signing: CLIENT_AUTH_SIGNING_ALGS } : null;
  const acrValues = [...new Set(clients.flatMap((c) => c.acrValues.map((a) => a.acr)))];
  const verifier = deps.extensions.requestObjects.values()[0];
  return {
    issuer: deps.config.issuer,
    ...endpointUrls(deps.config.issuer),
    scopes_supported: [...new Set(clients.flatMap((c) => c.scopes))],
    response_types_supported: responseTypes.length ? responseTypes : ['code'],
    response_modes_supported: ['query', 'fragment', 'form_post'],
    grant_types_supported: [...grantTypes, ...(implicit ? ['implicit'] : [])],
    token_endpoint_auth_methods_supported: authMethods.length ? authMethods : ['client_secret_basic'],
    ...(algs ? { token_endpoint_auth_signing_alg_values_supported: algs.signing } : {}),
    revocation_endpoint_auth_methods_supported: authMethods.length ? authMethods : ['client_secret_basic'],
    ...(algs ? { revocation_endpoint_auth_signing_alg_values_supported: algs.signing } : {}),
    introspection_endpoint_auth_methods_supported: endpointAuth.length ? endpointAuth : ['client_secret_basic'],
    ...(algs ? { introspection_endpoint_auth_signing_alg_values_supported: algs.signing } : {}),
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    subject_types_supported: ['public'],
    ui_locales_supported: deps.locales.supported,
    id_token_signing_alg_values_supported: deps.config.oauth.signing_algs,
    claims_supported: [
      ...['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'amr', 'sid', 'azp', 'at_hash', 'c_hash'],
      ...(acrValues.length ? ['acr'] : []),
      ...USER_CLAIMS,
    ],
    claims_parameter_supported: true,
    // Request objects (RFC 9101) by value when a plugin verifies them; `request_uri` means pushed
    // requests only (RFC 9126), never one fetched from the client, so its member stays false.
    request_parameter_supported: verifier !== undefined,
    ...(verifier ? { request_object_signing_alg_values_supported: verifier.algorithms } : {}),
    request_uri_parameter_supported: false,
    ...(acrValues.length ? { acr_values_supported: acrValues } : {}),
    // `consent` and `select_account` work where a plugin shows their pages (decision 75).
    prompt_values_supported: [
      'none',
      'login',
      ...(deps.extensions.routes.has(CONSENT_PATH) ? ['consent'] : []),
      ...(deps.extensions.routes.has(ACCOUNT_PATH) ? ['select_account'] : []),
      ...deps.extensions.prompts.ids(),
    ],
    verification_methods_supported: deps.extensions.methods.ids(),
  };
}

/** Members the core sets only for some configurations: a plugin may not take those either. */
const CONDITIONAL_MEMBERS = [
  'token_endpoint_auth_signing_alg_values_supported',
  'revocation_endpoint_auth_signing_alg_values_supported',
  'introspection_endpoint_auth_signing_alg_values_supported',
  'acr_values_supported',
  'request_object_signing_alg_values_supported',
];

/** A discovery member a plugin adds must not be one the core sets: that stops start-up. */
export function checkMetadataMembers(deps: Pick<OAuthDeps, 'config' | 'clients' | 'extensions' | 'locales'>): void {
  const contributed = new Set(deps.extensions.metadata.ids());
  for (const name of [...Object.keys(coreMetadata(deps)), ...CONDITIONAL_MEMBERS]) {
    if (contributed.has(name)) {
      throw new BootError(
        'PLUGIN_DUPLICATE_ID',
        `plugin ${deps.extensions.metadata.ownerOf(name)}: discovery member "${name}" is the core's`,
      );
    }
  }
}
