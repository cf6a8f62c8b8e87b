import {
  envelopeOf,
  openApiPaths,
  operationErrors,
  z,
  type ErrorStyle,
  type ResolvedError,
  type RouteSpec,
} from '@gatehouse-auth/core';

/**
 * The OpenAPI 3.1 document of the server's route declarations (`api.web.routeSpecs()`): the
 * schemas the handlers validate with, the error codes of the core's catalogues (decision 26).
 */

type Json = Record<string, unknown>;
type ZodType = z.ZodType;
type AnyObject = z.ZodObject;

/** The Gatehouse API's error envelope (errors.ts apiErrorBody), once, in components. */
const API_ERROR = z.object({
  success: z.literal(false),
  status: z.number().int(),
  error: z.object({
    code: z.string().meta({ description: 'stable: what programs compare' }),
    error: z.string().meta({ description: 'what went wrong, in English' }),
    type: z.string().meta({ description: 'the status as a word, e.g. BadRequest' }),
    status: z.number().int(),
    referenceNumber: z.string().meta({ description: 'the request id, as in the server log' }),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** RFC 6749 §5.2's error body. */
const OAUTH_ERROR = z.object({
  error: z.string(),
  error_description: z.string().optional(),
});

/** One status's errors: the shared schema, narrowed to this status and these codes. */
function errorSchema(style: ErrorStyle, status: number, codes: string[]): Record<string, unknown> {
  const narrowed =
    style === 'api'
      ? z.looseObject({
          status: z.literal(status),
          error: z.looseObject({ code: z.enum(codes), status: z.literal(status) }),
        })
      : z.looseObject({ error: z.enum(codes) });
  // Loose: the narrowing only adds constraints to the shared schema's members.
  const ref = { $ref: `#/components/schemas/${style === 'api' ? 'ApiError' : 'OAuthError'}` };
  return { allOf: [ref, jsonSchema(narrowed, 'output')] };
}

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) of a zod schema; input side for requests. */
export function jsonSchema(schema: ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return rest;
}

function parameters(route: RouteSpec, openApiPath: string): Json[] {
  const out: Json[] = [];
  const add = (schema: AnyObject | undefined, where: 'path' | 'query') => {
    if (!schema) return;
    const json = jsonSchema(schema, 'input') as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      if (where === 'path' && !openApiPath.includes(`{${name}}`)) continue;
      const { description, ...rest } = property;
      out.push({
        name,
        in: where,
        required: where === 'path' || (json.required ?? []).includes(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  };
  add(route.params, 'path');
  add(route.query, 'query');
  return out;
}

function responses(route: RouteSpec): Json {
  const out: Json = {};
  const style = route.errorStyle ?? 'api';
  const status = route.response.status ?? 200;
  const successSchema = route.response.schema
    ? route.response.raw || style === 'oauth'
      ? route.response.schema
      : envelopeOf(route.response.schema, status)
    : undefined;
  out[status] = {
    description: route.response.description,
    ...(route.response.cache
      ? { headers: { 'Cache-Control': { schema: { type: 'string', const: route.response.cache } } } }
      : {}),
    ...(successSchema ? { content: { 'application/json': { schema: jsonSchema(successSchema, 'output') } } } : {}),
  };
  for (const other of route.others ?? []) {
    out[other.status] = {
      description: other.description,
      ...(other.headers
        ? {
            headers: Object.fromEntries(
              Object.entries(other.headers).map(([name, description]) => [
                name,
                { description, schema: { type: 'string' } },
              ]),
            ),
          }
        : {}),
      ...(other.schema ? { content: { 'application/json': { schema: jsonSchema(other.schema, 'output') } } } : {}),
    };
  }
  const byStatus = new Map<number, ResolvedError[]>();
  for (const e of operationErrors(route)) byStatus.set(e.status, [...(byStatus.get(e.status) ?? []), e]);
  for (const [code, errors] of [...byStatus].sort(([a], [b]) => a - b)) {
    const schemas = (['api', 'oauth'] as const)
      .map((style) => ({ style, codes: errors.filter((e) => e.style === style).map((e) => e.code) }))
      .filter(({ codes }) => codes.length > 0)
      .map(({ style, codes }) => errorSchema(style, code, codes));
    out[code] = {
      description: errors.map((e) => `${e.code}: ${e.description}`).join('; '),
      content: { 'application/json': { schema: schemas.length === 1 ? schemas[0] : { anyOf: schemas } } },
    };
  }
  return out;
}

function operation(route: RouteSpec, openApiPath: string, operationId: string): Json {
  const body = route.body
    ? {
        requestBody: {
          required: true,
          content: Object.fromEntries(
            (route.bodyTypes ?? ['application/json']).map((type) => [
              type,
              { schema: jsonSchema(route.body!, 'input') },
            ]),
          ),
        },
      }
    : {};
  const params = parameters(route, openApiPath);
  return {
    operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    // `none` among alternatives: the call may come without credentials too.
    security: (route.security ?? []).map((name) => (name === 'none' ? {} : { [name]: [] })),
    ...(params.length ? { parameters: params } : {}),
    ...body,
    responses: responses(route),
  };
}

export const SECURITY_SCHEMES = {
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'The admin API token (config `admin.token`), compared in constant time.',
  },
  accessToken: {
    type: 'http',
    scheme: 'bearer',
    description:
      'An access token issued by this server (for the setup API: a recent login with the scope to manage methods).',
  },
  clientBasic: {
    type: 'http',
    scheme: 'basic',
    description: 'client_secret_basic: the client id and secret (RFC 6749 §2.3.1).',
  },
  clientPost: {
    type: 'apiKey',
    in: 'query',
    name: 'client_id',
    description:
      'client_secret_post, private_key_jwt, client_secret_jwt or a public client: the credentials travel in the form body (client_id, client_secret or client_assertion); OpenAPI has no scheme for body credentials, so this entry stands for them.',
  },
  deviceProof: {
    type: 'apiKey',
    in: 'header',
    name: 'Device-Proof',
    description: 'A bound authenticator device signs the call (docs/devices.md).',
  },
} as const;

export interface DocumentInfo {
  issuer: string;
  version: string;
}

/**
 * The OpenAPI 3.1 document of the given routes, built on each call from the declarations
 * (the plugins' included), never from a file kept by hand.
 */
export function openApiDocument(routes: readonly RouteSpec[], info: DocumentInfo): Json {
  const paths: Record<string, Record<string, Json>> = {};
  const ids = new Set<string>();
  for (const route of routes) {
    if (ids.has(route.id)) throw new Error(`two routes declare the operation id ${route.id}`);
    ids.add(route.id);
    const variants = [route.path, ...(route.also ?? [])].flatMap(openApiPaths);
    variants.forEach((p, i) => {
      const item = (paths[p] ??= {});
      if (item[route.method]) throw new Error(`${route.method.toUpperCase()} ${p} is declared twice`);
      item[route.method] = operation(route, p, i === 0 ? route.id : `${route.id}_${i + 1}`);
    });
  }
  const tags = [...new Set(routes.map((r) => r.tag))].map((name) => ({ name }));
  return {
    openapi: '3.1.1',
    info: {
      title: 'Gatehouse API',
      version: info.version,
      description:
        'The JSON endpoints of this Gatehouse server: admin, verification and setup, devices, OAuth 2.0 / OIDC, and those plugins add. Generated from the schemas that validate the requests.',
    },
    servers: [{ url: info.issuer.replace(/\/$/, '') }],
    tags,
    paths,
    components: {
      schemas: { ApiError: jsonSchema(API_ERROR, 'output'), OAuthError: jsonSchema(OAUTH_ERROR, 'output') },
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
