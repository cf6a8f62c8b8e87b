import type { z, ZodType } from 'zod';

/**
 * One JSON endpoint, declared once: the handler validates its input with these schemas
 * (`routeInput`), and the OpenAPI document (`openApiDocument`) is generated from the same
 * declaration, so the document cannot drift from what the server accepts (decision 26).
 */

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** How errors are written: the Gatehouse API envelope, or RFC 6749 §5.2 `{error, error_description}`. */
export type ErrorStyle = 'api' | 'oauth';

/** The ways a caller may authenticate; an operation lists the ones it accepts (any one suffices). */
export type SecurityName = 'adminToken' | 'accessToken' | 'clientBasic' | 'clientPost' | 'deviceProof' | 'none';

export type MediaType = 'application/json' | 'application/x-www-form-urlencoded' | 'multipart/form-data';

/** An error an operation can answer: a code of the catalogue, or a code with the status it has here. */
export type ErrorRef = string | { code: string; status: number; description?: string };

/** Another answer than the success one (a redirect, an empty 200, 503 while draining). */
export interface OtherResponse {
  status: number;
  description: string;
  schema?: ZodType;
  headers?: Record<string, string>;
}

type AnyObject = z.ZodObject;

export interface RouteSpec<
  P extends AnyObject = AnyObject,
  Q extends AnyObject = AnyObject,
  B extends ZodType = ZodType,
> {
  /** Unique, stable: the operationId. */
  id: string;
  method: HttpMethod;
  /** The express path: `:name` is a parameter, `{/:name}` an optional last segment. */
  path: string;
  /** Other paths that answer the same (the spec's aliases). */
  also?: readonly string[];
  summary: string;
  description?: string;
  tag: string;
  /**
   * Alternatives: any one of them is enough. None: public. Documentation only: the route's own
   * middleware (requireAdmin, setup access, device proofs) checks them.
   */
  security?: readonly SecurityName[];
  params?: P;
  query?: Q;
  body?: B;
  /** Media types the body is accepted in (default: JSON when there is a body). */
  bodyTypes?: readonly MediaType[];
  /** The success answer; `data` of the envelope for API-style operations (`raw` for bare JSON). */
  response: { status?: number; description: string; schema?: ZodType; raw?: boolean; cache?: string };
  others?: readonly OtherResponse[];
  /** Codes this operation can answer with besides the ones every operation of its style can. */
  errors: readonly ErrorRef[];
  errorStyle?: ErrorStyle;
  /** The error for input that fails the schemas (default: 400 INVALID_FIELD, or invalid_request). */
  invalid?: (message: string, fields: string[]) => Error;
}

/** Identity with the types kept: `export const createUser = defineRoute({...})`. */
export function defineRoute<P extends AnyObject, Q extends AnyObject, B extends ZodType>(
  route: RouteSpec<P, Q, B>,
): RouteSpec<P, Q, B> {
  return route;
}

type Out<T, Fallback> = T extends ZodType ? z.output<T> : Fallback;

export interface RouteInput<P, Q, B> {
  params: Out<P, Record<string, never>>;
  query: Out<Q, Record<string, never>>;
  body: Out<B, undefined>;
}

/**
 * Since plugin API 1.3: request fields as strings (numbers and booleans as text); empty,
 * repeated or nested ones are left out: a body as text, e.g. one a route hands on to
 * `web.loginFlows.continue`.
 */
export function textFields(body: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  if (!body || typeof body !== 'object') return fields;
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value === 'string' && value !== '') fields[key] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') fields[key] = String(value);
  }
  return fields;
}
