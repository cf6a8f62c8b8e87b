import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import type { JsonObject, RecordStore } from '../plugins/extensions.js';
import type { Clock } from '../services.js';
import { randomToken, safeEqual, sha256 } from '../util/crypto.js';
import type { LoginFlow, LoginFlowStore } from '../verification/flows.js';
import type { ClientRegistry, OAuthClient } from './clients.js';
import { isProtocolError } from '../errors.js';
import { OAuthError } from './errors.js';
import { parseStrictQuery } from './form.js';
import { WindowLimiter } from '../http/rate-limit.js';
import { formBody } from '../http/parsers.js';
import { readCookie } from '../http/cookies.js';
import type { DeviceCookie } from '../http/device.js';
import { clientIp, requestFacts } from '../verification/context.js';
import { consentPage, errorPage, formPostPage } from './pages.js';
import { resolveScope } from './services.js';
import type { LogoutService } from './logout.js';
import type { Session, SessionStore } from './sessions.js';
import type { SingleSignOn } from './sso.js';
import type { TokenService } from './tokens.js';

export const RESUME_PATH = '/api/oauth2/authorize/resume';
const CONSENT_PATH = '/login/consent';
const CANCEL_PATH = '/login/cancel';
const PKCE_CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** The validated authorization request, kept on the login flow until the client gets its answer. */
export interface AuthorizationRequest {
  client_id: string;
  redirect_uri: string;
  /** False when the request left redirect_uri out (one registered); the token request may too. */
  redirect_uri_sent: boolean;
  response_type: 'code' | 'token';
  response_mode: 'query' | 'fragment' | 'form_post';
  scope: string[];
  state: string | null;
  nonce: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
  prompt: string[];
  max_age: number | null;
}

/** The browser session (SSO) cookie: `__Host-` and Secure on https. */
export function sessionCookieName(issuer: string): string {
  return browserBinding(issuer).cookieName('gh_session');
}

/**
 * The cookie that binds a login flow to the browser that started it at /authorize. Every step
 * that moves the flow on checks it: otherwise a victim could be sent an attacker's login link
 * and sign in for the attacker's browser (login-flow hijack).
 */
export function browserBinding(issuer: string) {
  const secure = issuer.startsWith('https://');
  const cookieName = (base: string) => (secure ? `__Host-${base}` : base);
  const flowCookie = (requestId: string) => cookieName(`gh_flow_${sha256(requestId).slice(0, 16)}`);
  return {
    secure,
    cookieName,
    flowCookie,
    /** True when the flow has no binding (an API caller's flow) or this browser holds it. */
    isBound(req: Request, flow: LoginFlow): boolean {
      const expected = flow.params.binding;
      if (typeof expected !== 'string') return !flow.params.oauth;
      const presented = readCookie(req, flowCookie(flow.id));
      return presented !== undefined && safeEqual(sha256(presented), expected);
    },
  };
}

/** A failure before the redirect URI is trusted: shown as a page, never redirected (RFC 6749 §4.1.2.1). */
class ErrorPage extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface AuthorizeDeps {
  issuer: string;
  clients: ClientRegistry;
  /** Decides what an existing browser session is worth to the request's app. */
  sso: SingleSignOn;
  /** The hosted page's device cookie, for the facts the session-phase FDS rules see. */
  device?: DeviceCookie;
  tokens: TokenService;
  sessions: SessionStore;
  logout: LogoutService;
  flows: LoginFlowStore;
  consents: RecordStore;
  clock: Clock;
  flowTtlSeconds: number;
  sessionTtlSeconds: number;
  /** Authorization requests per client IP and minute on this node (0 or absent: no limit). */
  perIpPerMinute?: number;
}

/**
 * The authorization endpoint (RFC 6749 §4.1/§4.2, OIDC Core §3.1.2): validates the request,
 * answers from an existing session or starts a login flow on the hosted login page, and
 * returns the code or token to the client's registered redirect URI.
 */
export function authorizeRoutes(deps: AuthorizeDeps): Router {
  const router = express.Router();
  const page = { base: new URL(deps.issuer).pathname.replace(/\/+$/, '') };
  const binding = browserBinding(deps.issuer);
  const { secure, flowCookie } = binding;
  const SESSION_COOKIE = sessionCookieName(deps.issuer);
  const cookieOptions = (maxAgeSeconds: number) => ({
    httpOnly: true,
    secure,
    sameSite: 'lax' as const,
    path: '/',
    maxAge: maxAgeSeconds * 1000,
  });

  // Every authorization request writes a flow row: one address may not start them without bound.
  const limiter = deps.perIpPerMinute
    ? new WindowLimiter(deps.perIpPerMinute, 60_000, () => deps.clock.now().getTime())
    : null;

  const authorize = async (req: Request, res: Response) => {
    const wait = limiter?.hit(clientIp(req));
    if (wait) {
      res.set('Retry-After', String(wait));
      return errorPage(
        res,
        page,
        429,
        'temporarily_unavailable',
        'Too many sign-in requests from this address; try again shortly.',
      );
    }
    let request: AuthorizationRequest;
    try {
      request = validate(req.originalUrl, deps.clients);
    } catch (err) {
      if (err instanceof ErrorPage) return errorPage(res, page, err.status, err.code, err.message);
      if (err instanceof RedirectError) return respond(res, err.request, errorParams(err, err.request));
      throw err;
    }
    const client = deps.clients.get(request.client_id)!;
    try {
      if (!client.loginStages.length)
        throw new OAuthError('server_error', 'the app has no login stages configured', 500);
      const sso = await deps.sso.decide(await deps.sessions.get(readCookie(req, SESSION_COOKIE)), {
        clientId: client.clientId,
        loginStages: client.loginStages,
        prompt: request.prompt,
        maxAge: request.max_age,
        request: requestFacts(req, undefined, deps.device),
        logger: req.log,
      });
      if (request.prompt.includes('none')) {
        if (sso.kind === 'none' || (sso.kind === 'login' && sso.stale))
          throw new OAuthError('login_required', 'the user must sign in (again)');
        // Signed in, but not with what this app asks for (a second factor, a step-up).
        if (sso.kind === 'login')
          throw new OAuthError('interaction_required', 'the app needs the user to complete another sign-in step');
        if (await needsConsent(client, sso.userId, request)) {
          throw new OAuthError('consent_required', 'the user has not consented');
        }
      }
      const bindingValue = randomToken(24);
      const flow = await deps.flows.create({
        clientId: client.clientId,
        ...(sso.kind === 'none'
          ? { stages: client.loginStages }
          : { stages: sso.stages, userId: sso.userId, carried: sso.carried }),
        ttlSeconds: deps.flowTtlSeconds,
        params: { oauth: request as unknown as JsonObject, binding: sha256(bindingValue) },
      });
      // Abandoned sign-ins leave their cookies until the flow expires: past a cap, the oldest go
      // (their flows can no longer continue), so a busy browser never reaches the header limit.
      const stale = flowCookieNames(req, binding.cookieName('gh_flow_')).slice(0, -(MAX_FLOW_COOKIES - 1));
      // Bounded per answer, so a request stuffed with cookies cannot blow up the response headers.
      for (const name of stale.slice(0, MAX_FLOW_COOKIES)) dropCookie(res, name);
      res.cookie(flowCookie(flow.id), bindingValue, cookieOptions(deps.flowTtlSeconds));
      // Single sign-on: the session already satisfies this app; else its first stage left to do.
      if (flow.status === 'completed') {
        return res.redirect(303, `${page.base}${RESUME_PATH}?request_id=${encodeURIComponent(flow.id)}`);
      }
      res.redirect(303, `${page.base}/login?request_id=${encodeURIComponent(flow.id)}`);
    } catch (err) {
      if (isProtocolError(err) && err instanceof Error)
        return respond(res, request, errorParams(err as OAuthError, request));
      throw err;
    }
  };
  router.get(['/api/oauth2/authorize', '/api/oauth2/authorize/'], authorize);

  /** The flow of this browser: known, bound to its cookie, in the expected state. */
  const boundFlow = async (req: Request, requestId: unknown, status: LoginFlow['status']) => {
    const flow = typeof requestId === 'string' ? await deps.flows.get(requestId) : null;
    if (!flow || typeof flow.params.binding !== 'string' || !binding.isBound(req, flow)) {
      throw new ErrorPage(400, 'invalid_request', 'This sign-in is unknown or was started in another browser.');
    }
    if (flow.status !== status || flow.expiresAt.getTime() <= deps.clock.now().getTime()) {
      throw new ErrorPage(
        400,
        'invalid_request',
        'This sign-in has expired or is already finished. Start again from the app.',
      );
    }
    return { flow, request: flow.params.oauth as unknown as AuthorizationRequest };
  };

  // After the last stage: bind a new session, ask for consent where needed, answer the client.
  router.get(RESUME_PATH, async (req, res) => {
    let bound: Awaited<ReturnType<typeof boundFlow>>;
    try {
      bound = await boundFlow(req, req.query.request_id, 'completed');
    } catch (err) {
      if (err instanceof ErrorPage) return errorPage(res, page, err.status, err.code, err.message);
      throw err;
    }
    const { flow, request } = bound;
    const client = deps.clients.get(request.client_id);
    if (!client) return errorPage(res, page, 400, 'invalid_client', 'The app is no longer registered.');
    const created = await deps.sessions.create({
      userId: flow.userId!,
      authTime: authTimeOf(flow),
      methods: flow.completions,
      ttlSeconds: deps.sessionTtlSeconds,
      replaces: readCookie(req, SESSION_COOKIE) ?? null,
    });
    // Another user signed in in this browser: the previous user's session ends everywhere.
    if (created.ended) await deps.logout.endSession(created.ended.sid, 'replaced');
    res.cookie(SESSION_COOKIE, created.cookie, cookieOptions(deps.sessionTtlSeconds));
    const session = await deps.sessions.get(created.cookie);
    if (request.prompt.includes('consent') || (await needsConsent(client, flow.userId!, request))) {
      return res.redirect(303, `${page.base}${CONSENT_PATH}?request_id=${encodeURIComponent(flow.id)}`);
    }
    await finish(res, flow, client, request, session, req.log);
  });

  router.get(CONSENT_PATH, async (req, res) => {
    try {
      const { flow, request } = await boundFlow(req, req.query.request_id, 'completed');
      const client = deps.clients.get(request.client_id)!;
      consentPage(res, page, {
        clientName: client.name,
        redirectUris: client.redirectUris,
        scopes: request.scope,
        requestId: flow.id,
        csrf: csrfToken(readCookie(req, flowCookie(flow.id))!),
      });
    } catch (err) {
      if (err instanceof ErrorPage) return errorPage(res, page, err.status, err.code, err.message);
      throw err;
    }
  });

  router.post(CONSENT_PATH, formBody('8kb', 20), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    let bound: Awaited<ReturnType<typeof boundFlow>>;
    try {
      bound = await boundFlow(req, body.request_id, 'completed');
      // The form must echo a token derived from this browser's flow cookie (CSRF).
      const expected = csrfToken(readCookie(req, flowCookie(bound.flow.id))!);
      if (typeof body.csrf !== 'string' || !safeEqual(body.csrf, expected)) {
        throw new ErrorPage(403, 'invalid_request', 'The form has expired. Start again from the app.');
      }
    } catch (err) {
      if (err instanceof ErrorPage) return errorPage(res, page, err.status, err.code, err.message);
      throw err;
    }
    const { flow, request } = bound;
    const client = deps.clients.get(request.client_id)!;
    if (body.decision !== 'allow') {
      if (!(await deps.flows.finish(flow.id)))
        return errorPage(res, page, 400, 'invalid_request', 'This sign-in is already finished.');
      forgetFlow(res, flow);
      return respond(
        res,
        request,
        errorParams(new OAuthError('access_denied', 'the user denied the request'), request),
      );
    }
    await deps.consents.put(`${flow.userId}:${client.clientId}`, { scopes: request.scope });
    const session = await deps.sessions.get(readCookie(req, SESSION_COOKIE));
    await finish(res, flow, client, request, session?.userId === flow.userId ? session : null, req.log);
  });

  // The hosted page's way back to the app: the app hears access_denied, with its state.
  router.post(CANCEL_PATH, formBody('8kb', 20), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const flow = typeof body.request_id === 'string' ? await deps.flows.get(body.request_id) : null;
    const token = flow ? flowFormToken(deps.issuer, req, flow) : null;
    if (!flow || !token || typeof body.csrf !== 'string' || !safeEqual(body.csrf, token)) {
      return errorPage(res, page, 403, 'invalid_request', 'The form has expired. Go back to the app and start again.');
    }
    const request = flow.params.oauth as unknown as AuthorizationRequest;
    if (!(await deps.flows.cancel(flow.id))) {
      return errorPage(res, page, 400, 'invalid_request', 'This sign-in is already finished.');
    }
    forgetFlow(res, flow);
    return respond(
      res,
      request,
      errorParams(new OAuthError('access_denied', 'the user cancelled the sign-in'), request),
    );
  });

  /** When the user of a completed flow authenticated, in seconds (now if the flow lacks it). */
  function authTimeOf(flow: LoginFlow): number {
    return Math.floor((flow.authTime ?? deps.clock.now()).getTime() / 1000);
  }

  /** The flow is over: drop its cookie, or a busy browser piles them up past the header limit. */
  function forgetFlow(res: Response, flow: LoginFlow): void {
    dropCookie(res, flowCookie(flow.id));
  }

  function dropCookie(res: Response, name: string): void {
    res.clearCookie(name, { path: '/', secure, sameSite: 'lax', httpOnly: true });
  }

  async function needsConsent(client: OAuthClient, userId: string, request: AuthorizationRequest): Promise<boolean> {
    if (!client.consentRequired) return false;
    const given = await deps.consents.get(`${userId}:${client.clientId}`);
    const scopes = (given?.data.scopes as string[] | undefined) ?? [];
    return !request.scope.every((s) => scopes.includes(s));
  }

  /**
   * Issues the code (or the implicit token) once per flow and sends the browser back. The
   * session it came from is named in the grant (`sid`), and the app is recorded on it, so that
   * logging out reaches both.
   */
  async function finish(
    res: Response,
    flow: LoginFlow,
    client: OAuthClient,
    request: AuthorizationRequest,
    session: Session | null,
    log: Logger,
  ) {
    if (!(await deps.flows.finish(flow.id)))
      return errorPage(res, page, 400, 'invalid_request', 'This sign-in is already finished.');
    forgetFlow(res, flow);
    if (session) await deps.sessions.addClient(session, client.clientId);
    const sid = session?.sid ?? null;
    const authTime = authTimeOf(flow);
    if (request.response_type === 'code') {
      const code = await deps.tokens.createCode({
        clientId: client.clientId,
        subject: flow.userId!,
        redirectUri: request.redirect_uri,
        redirectUriSent: request.redirect_uri_sent !== false,
        scope: request.scope,
        codeChallenge: request.code_challenge,
        codeChallengeMethod: request.code_challenge_method,
        nonce: request.nonce,
        authTime,
        amr: flow.amr,
        sid,
        ttlSeconds: client.codeTtl,
        grantTtlSeconds: client.refreshTokenTtl,
      });
      log.info({ client: client.clientId }, 'authorization code issued');
      return respond(res, request, { code });
    }
    const tokens = await deps.tokens.issue({
      client,
      subject: flow.userId!,
      scope: request.scope,
      grantType: 'implicit',
      refreshToken: false,
      idToken: { nonce: request.nonce, authTime, amr: flow.amr },
      grantData: { auth_time: authTime, amr: flow.amr, ...(sid ? { sid } : {}) },
    });
    log.info({ client: client.clientId }, 'implicit access token issued');
    return respond(res, request, {
      access_token: tokens.access_token,
      token_type: tokens.token_type,
      expires_in: String(tokens.expires_in),
      scope: tokens.scope,
      ...(tokens.id_token ? { id_token: tokens.id_token } : {}),
    });
  }

  /** Sends the response to the redirect URI with `state` and `iss` (RFC 9207), in the response mode. */
  async function respond(res: Response, request: AuthorizationRequest, params: Record<string, string>) {
    const all: Record<string, string> = {
      ...params,
      ...(request.state ? { state: request.state } : {}),
      iss: deps.issuer,
    };
    res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
    if (request.response_mode === 'form_post') return formPostPage(res, page, request.redirect_uri, all);
    const url = new URL(request.redirect_uri);
    if (request.response_mode === 'fragment') {
      url.hash = new URLSearchParams(all).toString();
    } else {
      for (const [k, v] of Object.entries(all)) url.searchParams.append(k, v);
    }
    res.redirect(303, url.toString());
  }

  return router;
}

function errorParams(err: OAuthError, _request: AuthorizationRequest): Record<string, string> {
  return { error: err.code, error_description: err.message };
}

/** The CSRF token of a form: an HMAC-like digest of the flow's cookie binding. */
function csrfToken(binding: string): string {
  return sha256(`csrf:${binding}`);
}

/** The token a flow's forms (consent, cancel) must echo, for this browser; null if it is not bound. */
export function flowFormToken(issuer: string, req: Request, flow: LoginFlow): string | null {
  const binding = browserBinding(issuer);
  if (typeof flow.params.binding !== 'string' || !binding.isBound(req, flow)) return null;
  return csrfToken(readCookie(req, binding.flowCookie(flow.id))!);
}

/** Flow cookies a browser may hold at once; a new sign-in beyond that drops the oldest. */
export const MAX_FLOW_COOKIES = 10;

/** A cookie name (RFC 6265 §4.1.1: an RFC 7230 token); anything else is ignored, never echoed back. */
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The names of the flow cookies a request carries, oldest first (RFC 6265 §5.4 orders by creation). */
function flowCookieNames(req: Request, prefix: string): string[] {
  return (req.headers.cookie ?? '')
    .split(';')
    .map((part) => part.slice(0, Math.max(part.indexOf('='), 0)).trim())
    .filter((name) => name.startsWith(prefix) && COOKIE_NAME.test(name));
}

/** RFC 8252 §7.3: for a loopback IP redirect URI any port is accepted; otherwise byte-identical. */
function redirectMatches(registered: string, presented: string): boolean {
  if (registered === presented) return true;
  // Byte for byte once the port is taken out: no normalisation can make two URIs match.
  const loopback = /^(http:\/\/(?:127\.0\.0\.1|\[::1\]))(?::([1-9]\d{0,4}))?(?=[/?]|$)/;
  const port = loopback.exec(presented)?.[2];
  // A port past 65535 is no port: new URL() would throw when the answer is sent.
  if (!loopback.test(registered) || !loopback.test(presented) || Number(port ?? 80) > 65535) return false;
  const withoutPort = (uri: string) => uri.replace(loopback, '$1');
  return withoutPort(registered) === withoutPort(presented) && !presented.includes('#');
}

/**
 * Checks the request in the order that decides where errors go: client and redirect URI
 * problems become an error page; everything after is redirected to the client with `state`.
 * Accepts the spec's list A (response_type, space-separated scope) and list B
 * (resource_type=Code, comma-separated scope, redirect_uri optional with one registered).
 */
export function validate(url: string, clients: ClientRegistry): AuthorizationRequest {
  let q: Record<string, string>;
  try {
    q = parseStrictQuery(url);
  } catch (err) {
    // A repeated client_id or redirect_uri cannot be trusted for a redirect.
    const raw = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
    if (raw.getAll('client_id').length > 1 || raw.getAll('redirect_uri').length > 1 || raw.getAll('state').length > 1) {
      throw new ErrorPage(400, 'invalid_request', 'A parameter appears more than once.');
    }
    q = Object.fromEntries([...raw.entries()].filter(([, v]) => v !== ''));
    const partial = validate(`?${new URLSearchParams({ ...q }).toString()}`, clients);
    throw Object.assign(new RedirectError('invalid_request', (err as Error).message), { request: partial });
  }
  const client = q.client_id ? clients.get(q.client_id) : undefined;
  if (!client) throw new ErrorPage(400, 'invalid_client', 'The app (client_id) is not registered.');
  let redirectUri: string;
  if (q.redirect_uri !== undefined) {
    const match = client.redirectUris.find((r) => redirectMatches(r, q.redirect_uri!));
    if (!match) throw new ErrorPage(400, 'invalid_request', 'The redirect_uri is not registered for this app.');
    redirectUri = q.redirect_uri;
  } else if (client.redirectUris.length === 1) {
    redirectUri = client.redirectUris[0]!;
  } else {
    throw new ErrorPage(400, 'invalid_request', 'The redirect_uri is required when the app has several.');
  }
  const listB = q.response_type === undefined && q.resource_type !== undefined;
  const responseType = listB ? (q.resource_type === 'Code' ? 'code' : q.resource_type) : q.response_type;
  const responseMode = q.response_mode ?? (responseType === 'token' ? 'fragment' : 'query');
  const base: AuthorizationRequest = {
    client_id: client.clientId,
    redirect_uri: redirectUri,
    redirect_uri_sent: q.redirect_uri !== undefined,
    response_type: 'code',
    response_mode: ['query', 'fragment', 'form_post'].includes(responseMode)
      ? (responseMode as AuthorizationRequest['response_mode'])
      : 'query',
    scope: [],
    state: q.state ?? null,
    nonce: q.nonce ?? null,
    code_challenge: q.code_challenge ?? null,
    code_challenge_method: q.code_challenge ? (q.code_challenge_method ?? 'plain') : null,
    prompt: (q.prompt ?? '').split(' ').filter(Boolean),
    max_age: null,
  };
  const fail = (code: string, description: string) =>
    Object.assign(new RedirectError(code, description), { request: base });

  if (!responseType) throw fail('invalid_request', 'response_type is required');
  if (responseType !== 'code' && responseType !== 'token') {
    throw fail('unsupported_response_type', `response_type ${responseType} is not supported`);
  }
  if (!client.responseTypes.includes(responseType)) {
    throw fail('unsupported_response_type', `this app may not use response_type ${responseType}`);
  }
  base.response_type = responseType;
  if (!['query', 'fragment', 'form_post'].includes(responseMode))
    throw fail('invalid_request', 'unsupported response_mode');
  if (responseType === 'token' && responseMode === 'query') {
    throw fail('invalid_request', 'tokens are never returned in the query');
  }
  try {
    const requested =
      listB && q.scope !== undefined
        ? q.scope
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
            .join(' ')
        : q.scope;
    base.scope = resolveScope(requested, client.scopes, client.scopes);
  } catch (err) {
    throw fail('invalid_scope', (err as Error).message);
  }
  if (base.prompt.includes('none') && base.prompt.length > 1)
    throw fail('invalid_request', 'prompt=none cannot be combined');
  if (base.prompt.some((p) => !['none', 'login', 'consent', 'select_account'].includes(p))) {
    throw fail('invalid_request', 'unsupported prompt value');
  }
  if (q.max_age !== undefined) {
    if (!/^\d{1,9}$/.test(q.max_age)) throw fail('invalid_request', 'max_age must be a non-negative integer');
    base.max_age = Number(q.max_age);
  }
  if (responseType === 'code') {
    if (q.code_challenge_method !== undefined && q.code_challenge === undefined) {
      throw fail('invalid_request', 'code_challenge_method without code_challenge');
    }
    if (q.code_challenge !== undefined) {
      if (base.code_challenge_method !== 'S256') throw fail('invalid_request', 'code_challenge_method must be S256');
      if (!PKCE_CHALLENGE.test(q.code_challenge)) throw fail('invalid_request', 'malformed code_challenge');
    } else if (client.isPublic) {
      throw fail('invalid_request', 'PKCE (code_challenge with S256) is required for public clients');
    }
  }
  if (responseType === 'token' && base.scope.includes('openid') && !base.nonce) {
    throw fail('invalid_request', 'nonce is required for tokens issued from the authorization endpoint');
  }
  return base;
}

/**
 * The authorization endpoint's URL for a stored request, to start it again (after "Not you?"):
 * the parameters as validated, `prompt=none` left out since the user is now at the page.
 */
export function authorizeUrlOf(request: AuthorizationRequest): string {
  const q = new URLSearchParams({ client_id: request.client_id, response_type: request.response_type });
  if (request.redirect_uri_sent !== false) q.set('redirect_uri', request.redirect_uri);
  q.set('response_mode', request.response_mode);
  q.set('scope', request.scope.join(' '));
  const optional: [string, string | number | null][] = [
    ['state', request.state],
    ['nonce', request.nonce],
    ['code_challenge', request.code_challenge],
    ['code_challenge_method', request.code_challenge ? request.code_challenge_method : null],
    ['max_age', request.max_age],
  ];
  for (const [k, v] of optional) if (v !== null) q.set(k, String(v));
  const prompt = request.prompt.filter((p) => p !== 'none');
  if (prompt.length) q.set('prompt', prompt.join(' '));
  return `/api/oauth2/authorize/?${q.toString()}`;
}

/** A failure that goes back to the (already validated) redirect URI. */
class RedirectError extends OAuthError {
  request!: AuthorizationRequest;
  constructor(code: string, description: string) {
    super(code, description);
  }
}

export { RedirectError };
