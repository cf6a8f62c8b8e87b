import { z, type ZodType } from 'zod';
import { ApiError } from './errors.js';
import { OAUTH_ERROR_STATUS, OAuthError } from './oauth-errors.js';
import type { ErrorRef, ErrorStyle, RouteInput, RouteSpec } from './routes.js';
import { VERIFICATION_ERRORS } from './verification-errors.js';

/*
 * The declarations' machinery (decision 26), in the contract since decision 84: the plugins'
 * routes read their input with `routeInput` and name the codes of these catalogues; the core
 * reads its own routes with it and checks every declaration at start-up (`checkRouteSpecs`);
 * @gatehouse-auth/openapi writes the document from `operationErrors` and `openApiPaths`.
 */

type AnyObject = z.ZodObject;

/** The part of a request the schemas read (an express request, or the fast path's pieces). */
export interface RawInput {
  params?: unknown;
  query?: unknown;
  body?: unknown;
}

/**
 * The request's parameters, query and body checked against the route's schemas; the first
 * problem is answered with the route's error (400 INVALID_FIELD naming the field by default).
 */
export function routeInput<P extends AnyObject, Q extends AnyObject, B extends ZodType>(
  route: RouteSpec<P, Q, B>,
  raw: RawInput,
): RouteInput<P, Q, B> {
  const check = (schema: ZodType | undefined, value: unknown, where: string): unknown => {
    if (!schema) return where === 'body' ? undefined : {};
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0]!;
    const unknown = issue.code === 'unrecognized_keys' ? [issue.keys.join(', ')] : [];
    const field = [...issue.path.map(String), ...unknown].join('.') || where;
    const message = `${field}: ${issue.message}`;
    throw (route.invalid ?? defaultInvalid(route.errorStyle ?? 'api'))(message, [field]);
  };
  return {
    params: check(route.params, raw.params ?? {}, 'params'),
    query: check(route.query, raw.query ?? {}, 'query'),
    // No body (no content type express parses) reads as an empty object, as express.json does.
    body: check(route.body, raw.body ?? {}, 'body'),
  } as RouteInput<P, Q, B>;
}

function defaultInvalid(style: ErrorStyle): (message: string, fields: string[]) => Error {
  return style === 'oauth'
    ? (message) => new OAuthError('invalid_request', message)
    : (message, fields) => new ApiError(400, 'INVALID_FIELD', message, { fields });
}

/**
 * The codes of the Gatehouse API envelope outside the verification catalogue, with their status
 * and meaning. VERIFICATION_ERRORS and these are every code an API-style operation can name.
 */
export const API_ERRORS: Record<string, readonly [number, string]> = {
  ...VERIFICATION_ERRORS,
  INVALID_REQUEST_BODY: [400, 'the request body is not valid JSON (an object or an array)'],
  INVALID_REQUEST: [400, 'the request could not be read (a malformed path escape, say)'],
  PAYLOAD_TOO_LARGE: [413, 'the request body is too large'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'compressed bodies and other charsets than UTF-8 are refused'],
  ADMIN_API_DISABLED: [403, 'the admin API is disabled (admin.token is not set)'],
  USER_EXISTS: [409, 'a user with this username, email or phone already exists'],
  SESSION_NOT_FOUND: [404, 'no such live session for this user'],
  APP_NOT_FOUND: [404, 'no such app'],
  APP_EXISTS: [409, 'an app with this client_id exists (in the config or the database)'],
  APP_READ_ONLY: [409, 'the app is in the config file: change it there'],
  APP_HAS_NO_SECRET: [409, 'the app authenticates without a secret (public or private_key_jwt): nothing to rotate'],
  APP_CHANGED: [409, "the app's secret was rotated meanwhile; try again"],
  INVALID_APP: [400, 'the app entry is invalid (the message names the key), as it would be in the config'],
  TEMPORARILY_UNAVAILABLE: [503, 'the server is busy (too many password hashes waiting); retry shortly'],
  STORE_UNAVAILABLE: [503, 'the database cannot be reached or did not answer in time; retry after Retry-After'],
  NOT_FOUND: [404, 'no such endpoint'],
  INTERNAL_ERROR: [500, 'internal server error (logged with the referenceNumber)'],
};

/** How the OpenAPI document names the refusal of a blocked address, on each guarded operation. */
export const ADMIN_THROTTLED: ErrorRef = {
  code: 'TOO_MANY_ATTEMPTS',
  status: 429,
  description: 'too many refused bearer tokens from this address; retry after Retry-After seconds',
};

/** What an OAuth error code means, for the document. */
const OAUTH_MEANINGS: Record<string, string> = {
  invalid_request: 'a parameter is missing, repeated or malformed, or the body is not a form',
  invalid_client: 'client authentication failed',
  invalid_grant: 'the grant (code, refresh token, assertion) is invalid, expired or revoked',
  unauthorized_client: 'this client may not use this grant type, or the token is not its own',
  unsupported_grant_type: 'no grant of this type is registered',
  invalid_scope: 'the scope is not allowed for this client',
  invalid_target: 'the resource or audience is not allowed',
  invalid_token: 'the access token is missing, invalid or expired',
  insufficient_scope: 'the access token lacks the scope this call needs',
  access_denied: 'the user or policy denied the request',
  unsupported_response_type: 'the response type is not allowed for this client',
  unsupported_token_type: 'the token type is not supported',
  login_required: 'the user must sign in',
  consent_required: 'the user must consent',
  server_error: 'the server failed (logged under the X-Request-Id of the answer)',
  temporarily_unavailable: 'the server is busy, or its database cannot be reached; retry after Retry-After',
  slow_down: 'polling too fast',
  authorization_pending: 'the user has not answered yet; poll again after the interval (RFC 8628)',
  expired_token: 'the device code expired; start again (RFC 8628)',
};

/** Every operation of a style can answer these besides its own. */
const COMMON_ERRORS: Record<ErrorStyle, readonly ErrorRef[]> = {
  // INVALID_REQUEST: a path with a malformed %-escape, refused before any handler.
  api: ['INVALID_REQUEST', 'INTERNAL_ERROR', 'STORE_UNAVAILABLE'],
  oauth: ['INVALID_REQUEST', 'server_error', 'temporarily_unavailable'],
};
/** ...and these when it reads a JSON body through express. */
const JSON_BODY_ERRORS: readonly ErrorRef[] = ['INVALID_REQUEST_BODY', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];

export interface ResolvedError {
  code: string;
  status: number;
  style: ErrorStyle;
  description: string;
}

/** A code's status and meaning; OAuth codes are lower case, the API envelope's upper case. */
export function resolveError(ref: ErrorRef): ResolvedError {
  const code = typeof ref === 'string' ? ref : ref.code;
  const oauth = code === code.toLowerCase();
  const known = oauth ? OAUTH_ERROR_STATUS[code] : API_ERRORS[code]?.[0];
  const status = typeof ref === 'string' ? known : ref.status;
  if (status === undefined) throw new Error(`error code ${code} is in no catalogue`);
  const meaning = oauth ? OAUTH_MEANINGS[code] : API_ERRORS[code]?.[1];
  const description = (typeof ref === 'string' ? undefined : ref.description) ?? meaning ?? code;
  return { code, status, style: oauth ? 'oauth' : 'api', description };
}

/** Every error (code and status) an operation can answer with, its own and its style's. */
export function operationErrors(route: RouteSpec): ResolvedError[] {
  const style = route.errorStyle ?? 'api';
  const readsJson = route.body !== undefined && (route.bodyTypes ?? ['application/json']).includes('application/json');
  const refs = [...route.errors, ...COMMON_ERRORS[style], ...(readsJson && style === 'api' ? JSON_BODY_ERRORS : [])];
  const seen = new Map<string, ResolvedError>();
  for (const ref of refs) {
    const e = resolveError(ref);
    const key = `${e.status} ${e.code}`;
    const first = seen.get(key);
    // One code for two causes (a blocked address, too many wrong codes) documents both.
    if (!first) seen.set(key, e);
    else if (!first.description.includes(e.description)) first.description += `; or ${e.description}`;
  }
  return [...seen.values()];
}

/** The success envelope of the Gatehouse API around `data`. */
export function envelopeOf(data: ZodType, status: number): ZodType {
  return z.object({ success: z.literal(true), status: z.literal(status), data });
}

/** `/a/:id{/:x}` → the OpenAPI paths it stands for: `/a/{id}` and `/a/{id}/{x}`. */
export function openApiPaths(path: string): string[] {
  const optional = /\{\/:([A-Za-z0-9_]+)\}$/.exec(path);
  const convert = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  if (!optional) return [convert(path)];
  const base = path.slice(0, optional.index);
  return [convert(base), convert(`${base}/:${optional[1]}`)];
}

/**
 * The declarations checked together, at start-up: one operation id each, no method and path
 * declared twice, every error code in a catalogue. A mistake stops the boot (API_SPEC_INVALID),
 * whether or not a plugin publishes the document.
 */
export function checkRouteSpecs(routes: readonly RouteSpec[]): void {
  const ids = new Set<string>();
  const operations = new Set<string>();
  for (const route of routes) {
    if (ids.has(route.id)) throw new Error(`two routes declare the operation id ${route.id}`);
    ids.add(route.id);
    for (const p of [route.path, ...(route.also ?? [])].flatMap(openApiPaths)) {
      const key = `${route.method.toUpperCase()} ${p}`;
      if (operations.has(key)) throw new Error(`${key} is declared twice`);
      operations.add(key);
    }
    operationErrors(route);
  }
}
