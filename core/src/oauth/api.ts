import { defineRoute, type ErrorRef, type GrantHandler, type RouteSpec } from '@gatehouse-auth/plugin-api';
import { z, type ZodType } from 'zod';
import { OAuthError } from './errors.js';

/**
 * The OAuth 2.0 / OIDC JSON endpoints (decision 26). Token, introspection and revocation take
 * strict form bodies (RFC 6749 §3.2: a repeated parameter is refused, an empty one is absent,
 * an unknown one ignored); readForm enforces that, the schemas here what each endpoint requires.
 */

const FORM = ['application/x-www-form-urlencoded'] as const;
const CLIENT_AUTH = ['clientBasic', 'clientPost'] as const;

/** Every value of a form is text; a failure can only be a required parameter that is absent. */
const missing = (_message: string, names: string[]) => new OAuthError('invalid_request', `${names[0]} is required`);

const optional = (description: string) => z.string().optional().meta({ description });

/** An endpoint of this document: answered at its first path and the others, in OAuth's error style. */
const oauthRoute = <P extends z.ZodObject, Q extends z.ZodObject, B extends ZodType>(
  paths: readonly string[],
  spec: Omit<RouteSpec<P, Q, B>, 'path' | 'also' | 'tag' | 'errorStyle' | 'invalid'>,
) =>
  defineRoute<P, Q, B>({
    ...spec,
    path: paths[0]!,
    also: paths.slice(1),
    tag: 'oauth',
    errorStyle: 'oauth',
    invalid: missing,
  });

/**
 * The parameters a client authenticates with in the body (client_secret_post, JWT assertions,
 * public clients). Exported (as CLIENT_AUTH_FIELDS) for endpoint plugins' route declarations.
 */
export const CLIENT_FIELDS = {
  client_id: optional('the client; required for public clients and with client_secret_post'),
  client_secret: optional('client_secret_post'),
  client_assertion: optional('private_key_jwt or client_secret_jwt: the signed JWT'),
  client_assertion_type: optional('urn:ietf:params:oauth:client-assertion-type:jwt-bearer'),
};

/** What introspection (RFC 7662 §2.1) and revocation (RFC 7009 §2.1) take: a token, and the client's credentials. */
const TOKEN_BODY = z
  .object({
    token: z.string().meta({ description: 'the access or refresh token' }),
    token_type_hint: optional('access_token or refresh_token (ignored: every kind is searched)'),
    ...CLIENT_FIELDS,
  })
  .catchall(z.string());

/** The errors of client authentication (`web.authenticateClient`), for route declarations too. */
export const CLIENT_ERRORS: readonly ErrorRef[] = [
  'invalid_request',
  'invalid_client',
  { code: 'invalid_client', status: 429, description: 'too many failed client authentications; retry later' },
];
/** The form endpoints read at most 64 KiB (core/src/oauth/form.ts). */
const BODY_TOO_LARGE: ErrorRef = {
  code: 'invalid_request',
  status: 413,
  description: 'the body is larger than 64 KiB',
};

const tokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal('bearer'),
    expires_in: z.number().int(),
    issued_token_type: z.string().optional(),
    scope: z.string(),
    refresh_token: z.string().optional(),
    id_token: z.string().optional(),
    restricted_to: z.array(z.object({ object: z.record(z.string(), z.unknown()), scope: z.string() })).optional(),
  })
  .loose();

const introspection = z
  .object({
    active: z.boolean(),
    scope: z.string().optional(),
    client_id: z.string().optional(),
    username: z.string().optional(),
    token_type: z.string().optional(),
    exp: z.number().int().optional(),
    iat: z.number().int().optional(),
    nbf: z.number().int().optional(),
    sub: z.string().optional(),
    aud: z.union([z.string(), z.array(z.string())]).optional(),
    iss: z.string().optional(),
    jti: z.string().optional(),
  })
  .loose()
  .meta({ description: 'only `active` when the token is unknown, expired or not visible to the caller' });

export const TOKEN_PATHS = ['/oauth/token', '/oauth2/token', '/oauth2/token/', '/'] as const;
export const INTROSPECT_PATHS = ['/token/introspect', '/token_info'] as const;
export const REVOKE_PATHS = ['/oauth2/revoke', '/oauth2/revoke/', '/token/revoke'] as const;
/** What a token binding (DPoP, RFC 9449) adds to the token endpoint's and protected resources' answers. */
export const dpopErrors = (status: number): ErrorRef[] => [
  { code: 'invalid_dpop_proof', status, description: 'a DPoP proof is missing or invalid (with a token binding)' },
  { code: 'use_dpop_nonce', status, description: 'the proof must carry the DPoP-Nonce this answer names' },
];

/** The operations, with the registered grants' parameters in the token request. */
export function oauthApi(grants: readonly GrantHandler[], dpop = false) {
  const grantParameters: Record<string, z.ZodOptional<z.ZodString>> = {};
  for (const g of grants) {
    for (const p of g.parameters) {
      const users = grants.filter((h) => h.parameters.includes(p)).map((h) => h.grantType);
      grantParameters[p] ??= optional(`with grant_type ${users.join(', ')}`);
    }
  }
  return {
    token: oauthRoute(TOKEN_PATHS, {
      id: 'token',
      method: 'post',
      summary: 'Token endpoint (RFC 6749 §3.2)',
      description:
        'Every other method on these paths (but `/`) answers 405 invalid_request with `Allow: POST`. A parameter sent twice is invalid_request; other parameters than the grant’s are ignored.',
      security: CLIENT_AUTH,
      body: z
        .object({
          grant_type: z.string().meta({
            description: `one of the registered grants: ${grants.map((g) => g.grantType).join(', ')}`,
          }),
          ...CLIENT_FIELDS,
          ...grantParameters,
        })
        .catchall(z.string()),
      bodyTypes: FORM,
      response: { description: 'the tokens (RFC 6749 §5.1)', schema: tokenResponse },
      errors: [
        ...CLIENT_ERRORS,
        BODY_TOO_LARGE,
        { code: 'invalid_request', status: 405, description: 'another method than POST (with Allow: POST)' },
        'invalid_grant',
        'unauthorized_client',
        'unsupported_grant_type',
        'invalid_scope',
        { code: 'invalid_scope', status: 401, description: 'a scope the subject token does not hold (token exchange)' },
        'invalid_target',
        'access_denied',
        'temporarily_unavailable',
        // What the registered grants declare they answer besides (plugin API 1.2).
        ...grants.flatMap((g) => g.errors ?? []),
        ...(dpop ? dpopErrors(400) : []),
      ],
    }),
    introspect: oauthRoute(INTROSPECT_PATHS, {
      id: 'introspect',
      method: 'post',
      summary: 'Token introspection (RFC 7662)',
      description: 'A client with its credentials, or a bearer access token with the `introspection` scope.',
      security: [...CLIENT_AUTH, 'accessToken'],
      body: TOKEN_BODY,
      bodyTypes: FORM,
      response: { description: 'the token’s state', schema: introspection },
      errors: [...CLIENT_ERRORS, BODY_TOO_LARGE, 'invalid_token'],
    }),
    revoke: oauthRoute(REVOKE_PATHS, {
      id: 'revoke',
      method: 'post',
      summary: 'Token revocation (RFC 7009)',
      description: 'A refresh token takes its whole grant with it. An unknown token is not an error.',
      security: CLIENT_AUTH,
      body: TOKEN_BODY,
      bodyTypes: FORM,
      response: { description: 'revoked, or the token was unknown; empty body' },
      errors: [...CLIENT_ERRORS, BODY_TOO_LARGE, 'unauthorized_client'],
    }),
    jwks: oauthRoute(['/.well-known/jwks.json'], {
      id: 'jwks',
      method: 'get',
      summary: 'The public keys that sign ID tokens and JWT access tokens',
      response: {
        description: 'the JWK set',
        schema: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }),
        cache: 'public, max-age=300',
      },
      errors: [],
    }),
    metadata: oauthRoute(['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'], {
      id: 'openidConfiguration',
      method: 'get',
      summary: 'Authorization server metadata (RFC 8414, OIDC Discovery)',
      description: 'Generated from what is registered: grant plugins, clients, methods.',
      response: {
        description: 'the metadata',
        schema: z
          .object({
            issuer: z.string(),
            authorization_endpoint: z.string(),
            token_endpoint: z.string(),
            jwks_uri: z.string(),
            response_types_supported: z.array(z.string()),
            grant_types_supported: z.array(z.string()),
            verification_methods_supported: z.array(z.string()),
          })
          .loose(),
        cache: 'public, max-age=300',
      },
      errors: [],
    }),
  } satisfies Record<string, RouteSpec>;
}
