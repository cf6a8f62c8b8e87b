import type { ClientRegistry } from '../clients.js';
import { parseClaimsRequest, type ClaimsRequest } from '../claims.js';
import { OAuthError } from '../errors.js';
import { parseStrictQuery } from '../form.js';
import { resolveScope } from '../services.js';

const PKCE_CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An identifier is a user name, an email address or a phone number: far shorter than this. */
const MAX_LOGIN_HINT = 256;

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
  /** OIDC Core §3.1.2.1: who the app thinks signs in; it prefills the identifier (optional in old flows). */
  login_hint?: string | null;
  /** OIDC Core §3.1.2.1: the user's preferred languages, for the login page (optional in old flows). */
  ui_locales?: string | null;
  /** OIDC Core §5.5: claims asked for one by one, for userinfo and the ID token. */
  claims?: ClaimsRequest | null;
  /** OIDC Core §3.1.2.1: authentication context classes wanted, in order of preference. */
  acr_values?: string[] | null;
  /** OIDC Core §3.1.2.1: an ID token naming the user the app expects (read at the start only). */
  id_token_hint?: string | null;
  /** RFC 9449 §10: the thumbprint of the key the code is bound to (token requests must prove it). */
  dpop_jkt?: string | null;
}

/** A failure before the redirect URI is trusted: shown as a page, never redirected (RFC 6749 §4.1.2.1). */
export class ErrorPage extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A flow's form or step came after the flow was finished (or cancelled) by another. */
export const alreadyFinished = () => new ErrorPage(400, 'invalid_request', 'This sign-in is already finished.');

/** The error parameters of a redirect to the client. */
export function errorParams(err: OAuthError): Record<string, string> {
  return { error: err.code, error_description: err.message };
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
    throw new RedirectError('invalid_request', (err as Error).message, partial);
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
    // A hint, so a bad one is dropped, not refused: printable text of a sensible length only.
    login_hint:
      q.login_hint && q.login_hint.length <= MAX_LOGIN_HINT && !/[\p{Cc}]/u.test(q.login_hint) ? q.login_hint : null,
    // Language tags only (BCP 47 letters, digits, hyphens, spaces); anything else is ignored.
    ui_locales: q.ui_locales && /^[A-Za-z0-9\- ]{1,100}$/.test(q.ui_locales) ? q.ui_locales : null,
  };
  const fail = (code: string, description: string) => new RedirectError(code, description, base);

  // Request objects (RFC 9101) are not supported: refused, never silently ignored (OIDC Core §6).
  if (q.request !== undefined) throw fail('request_not_supported', 'request objects are not supported');
  if (q.request_uri !== undefined) throw fail('request_uri_not_supported', 'request_uri is not supported');
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
  // Initiating User Registration via OpenID Connect 1.0: only where a plugin answers it for the app.
  if (base.prompt.includes('create') && !client.prompts?.includes('create')) {
    throw fail('invalid_request', 'prompt=create is not supported: this app offers no sign-up');
  }
  const known = ['none', 'login', 'consent', 'select_account', ...(client.prompts ?? [])];
  if (base.prompt.some((p) => !known.includes(p))) {
    throw fail('invalid_request', 'unsupported prompt value');
  }
  if (q.claims !== undefined) {
    try {
      base.claims = parseClaimsRequest(q.claims);
    } catch (err) {
      throw fail('invalid_request', (err as Error).message);
    }
  }
  if (q.acr_values !== undefined) {
    const values = q.acr_values.split(' ').filter(Boolean);
    if (values.length > 10 || values.some((v) => !/^[\x21-\x7e]{1,255}$/.test(v))) {
      throw fail('invalid_request', 'malformed acr_values');
    }
    base.acr_values = values;
  }
  if (q.id_token_hint !== undefined) {
    if (q.id_token_hint.length > 8192) throw fail('invalid_request', 'id_token_hint is too long');
    base.id_token_hint = q.id_token_hint;
  }
  if (q.dpop_jkt !== undefined) {
    // A SHA-256 JWK thumbprint (RFC 7638), base64url.
    if (!/^[A-Za-z0-9_-]{43}$/.test(q.dpop_jkt)) throw fail('invalid_request', 'malformed dpop_jkt');
    base.dpop_jkt = q.dpop_jkt;
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
  // CSRF protection of the redirect (RFC 6749 §10.12): `state`, or PKCE, which binds the code
  // to the browser that started the request (RFC 9700 §2.1).
  if (!base.state && (client.requireState ?? !base.code_challenge)) {
    throw fail('invalid_request', 'state is required for this app');
  }
  if (responseType === 'token' && base.scope.includes('openid') && !base.nonce) {
    throw fail('invalid_request', 'nonce is required for tokens issued from the authorization endpoint');
  }
  // The client policies that hold the app (decision 80): a page, never a redirect.
  const refusal = clients.refusal(client, (policy) => policy.authorizationParameters?.(client, { ...base }));
  if (refusal) throw new ErrorPage(400, 'invalid_request', refusal);
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
    ['login_hint', request.login_hint ?? null],
    ['max_age', request.max_age],
    ['ui_locales', request.ui_locales ?? null],
    ['claims', request.claims ? JSON.stringify(request.claims) : null],
    ['acr_values', request.acr_values?.join(' ') ?? null],
  ];
  for (const [k, v] of optional) if (v !== null) q.set(k, String(v));
  const prompt = request.prompt.filter((p) => p !== 'none');
  if (prompt.length) q.set('prompt', prompt.join(' '));
  return `/api/oauth2/authorize/?${q.toString()}`;
}

/** A failure that goes back to the (already validated) redirect URI. */
export class RedirectError extends OAuthError {
  constructor(
    code: string,
    description: string,
    readonly request: AuthorizationRequest,
  ) {
    super(code, description);
  }
}
