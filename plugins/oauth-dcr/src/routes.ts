import { ADMIN_THROTTLED, defineRoute, z } from '@gatehouse-auth/core';

// ── the plugin's operations, as /openapi.json shows them (paths under their mount paths) ──

const metadata = z.record(z.string(), z.unknown()).meta({
  description:
    'RFC 7591 §2 client metadata: redirect_uris, client_name, token_endpoint_auth_method (none, client_secret_basic, client_secret_post, private_key_jwt), grant_types, response_types, scope, jwks (or jwks_uri where allowed), post_logout_redirect_uris, id_token_signed_response_alg, contacts, logo_uri, client_uri, policy_uri, tos_uri; anything else is ignored',
});
const information = z
  .object({
    client_id: z.string(),
    client_secret: z.string().optional().meta({ description: 'at registration only, for a confidential client' }),
    client_secret_expires_at: z.number().int().optional().meta({ description: '0: the secret does not expire' }),
    client_id_issued_at: z.number().int(),
    registration_access_token: z.string(),
    registration_client_uri: z.string(),
  })
  .catchall(z.unknown())
  .meta({
    description: 'RFC 7591 §3.2.1 client information: the id, the registered metadata, the RFC 7592 token and URI',
  });
const clientId = z.object({ client_id: z.string().meta({ description: 'the registered client’s id' }) });

const BAD_METADATA = [
  {
    code: 'invalid_redirect_uri',
    status: 400,
    description: 'a redirect URI refused (none, not https outside loopback, a fragment)',
  },
  {
    code: 'invalid_client_metadata',
    status: 400,
    description:
      'metadata refused: a grant type or scope not allowed, an unsupported method, a body that is no JSON object…',
  },
];
const TOKEN_REFUSED = {
  code: 'invalid_token',
  status: 401,
  description: 'no token, a wrong one, or a client this plugin did not register',
};
const THROTTLED = { code: 'temporarily_unavailable', status: 429, description: 'too many calls from this address' };
const OAUTH = { tag: 'oauth', errorStyle: 'oauth', security: ['accessToken'] } as const;

export const DCR_ROUTES = {
  register: defineRoute({
    ...OAUTH,
    id: 'registerClient',
    method: 'post',
    path: '',
    also: ['/'],
    summary: 'Dynamic client registration (RFC 7591 §3)',
    description:
      'With an initial access token as bearer token unless open_registration. Registered apps get only the allowed scopes and grant types, the configured login stages, and always ask the user’s consent.',
    body: metadata,
    response: { status: 201, description: 'the client information', schema: information, raw: true },
    errors: [
      ...BAD_METADATA,
      { code: 'unapproved_software_statement', status: 400, description: 'software statements are not supported' },
      { ...TOKEN_REFUSED, description: 'no initial access token, or an unknown, expired or used one' },
      THROTTLED,
    ],
  }),
  read: defineRoute({
    ...OAUTH,
    id: 'readClientRegistration',
    method: 'get',
    path: '/:client_id',
    summary: 'Read a registration (RFC 7592 §2.1)',
    params: clientId,
    response: { description: 'the client information, without the secret', schema: information, raw: true },
    errors: [TOKEN_REFUSED, THROTTLED],
  }),
  update: defineRoute({
    ...OAUTH,
    id: 'updateClientRegistration',
    method: 'put',
    path: '/:client_id',
    summary: 'Replace a registration’s metadata (RFC 7592 §2.2); the id, secret and token stay',
    params: clientId,
    body: metadata,
    response: { description: 'the client information, without the secret', schema: information, raw: true },
    errors: [...BAD_METADATA, TOKEN_REFUSED, THROTTLED],
  }),
  remove: defineRoute({
    ...OAUTH,
    id: 'deleteClientRegistration',
    method: 'delete',
    path: '/:client_id',
    summary: 'Delete a registration (RFC 7592 §2.3): the app goes, its tokens are revoked',
    params: clientId,
    response: { status: 204, description: 'deleted' },
    errors: [TOKEN_REFUSED, THROTTLED],
  }),
  mintToken: defineRoute({
    id: 'mintInitialAccessToken',
    tag: 'admin',
    security: ['adminToken'],
    method: 'post',
    path: '',
    also: ['/'],
    summary: 'Mint an initial access token for dynamic client registration',
    description:
      'uses: single (the first registration consumes it, the default) or multi (until it expires); ttl_seconds: 60 to 30 days, default 86400. The token is shown once.',
    body: z.object({
      uses: z.enum(['single', 'multi']).optional(),
      ttl_seconds: z
        .number()
        .int()
        .min(60)
        .max(30 * 24 * 3600)
        .optional(),
    }),
    response: {
      status: 201,
      description: 'the token, once',
      schema: z.object({ initial_access_token: z.string(), uses: z.string(), expires_at: z.string() }),
    },
    errors: ['UNAUTHORIZED', 'ADMIN_API_DISABLED', ADMIN_THROTTLED, 'INVALID_FIELD'],
  }),
};
