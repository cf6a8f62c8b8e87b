import {
  CONTINUE_ROUTE,
  defineRoute,
  OAuthError,
  verificationError,
  z,
  type ErrorRef,
  type MediaType,
  type RouteSpec,
} from '@gatehouse-auth/core';

/**
 * The operations of the cidaas-style calls (decision 26): the handlers validate with them, and
 * they appear in /openapi.json. As in the core's verification API, the schemas refuse only what
 * no order of checks could accept; the rest is the core's to refuse with its stable codes.
 */

/** A field the way forms and JSON send it; numbers and booleans are read as text. */
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** A body of named single-value fields; others pass on. */
function fields(named: Record<string, string>) {
  return z
    .object(Object.fromEntries(Object.entries(named).map(([k, d]) => [k, scalar.optional().meta({ description: d })])))
    .catchall(z.unknown());
}

// One error shape for every verification route: details.fields names what is wrong.
const invalid = (message: string, names: string[]) => verificationError('INVALID_FIELD', message, { fields: names });

/** A credential's label: its own message. */
const labelInvalid = (field: string) => (message: string, names: string[]) =>
  names[0] === field
    ? verificationError('INVALID_FIELD', `${field} must be 1 to 64 characters`, { fields: [field] })
    : invalid(message, names);

const FORMS: readonly MediaType[] = ['application/json', 'application/x-www-form-urlencoded'];
const SETUP_ACCESS: readonly ErrorRef[] = [
  'UNAUTHORIZED',
  'INSUFFICIENT_SCOPE',
  'REAUTHENTICATION_REQUIRED',
  'FIELD_MISSING',
  'USER_NOT_FOUND',
  {
    code: 'TOO_MANY_ATTEMPTS',
    status: 429,
    description: 'too many refused bearer tokens from this address; retry after Retry-After seconds',
  },
];
const FLOW: readonly ErrorRef[] = ['REQUEST_NOT_FOUND', 'REQUEST_EXPIRED', 'REQUEST_COMPLETED'];
const EXCHANGE: readonly ErrorRef[] = [
  'EXCHANGE_INVALID',
  { code: 'EXCHANGE_INVALID', status: 404, description: 'no such exchange_id' },
  'EXCHANGE_USED',
  'EXCHANGE_EXPIRED',
  'WRONG_FLOW_STAGE',
];

const method = z
  .string()
  .meta({ description: 'a verification method id (`verification_methods_supported` of the discovery document)' });
const methodParam = z.object({ method });
const json = z.record(z.string(), z.unknown());

const IDENTIFIERS = {
  identifier: 'who signs in: a username, email address or phone number',
  email: 'cidaas-style spelling of identifier',
  mobile_number: 'cidaas-style spelling of identifier',
  mobile: 'cidaas-style spelling of identifier',
  username: 'cidaas-style spelling of identifier',
};

/** Each parameter one value, as in a query string; numbers are read as text. */
const parameter = z.union([z.string(), z.number()]);

export const CIDAAS_API = {
  configuredList: defineRoute({
    id: 'configuredMethods',
    method: 'post',
    path: '/verification-srv/public/graph/user/setup',
    tag: 'verification',
    summary: 'The methods of the current stage the user has set up (for an app’s own login UI)',
    body: fields({ request_id: 'the login flow', sub: 'the user, once known', ...IDENTIFIERS }),
    bodyTypes: FORMS,
    invalid,
    response: { description: 'the list', schema: z.object({ configured_list: z.array(json) }) },
    errors: ['FIELD_MISSING', 'INVALID_FIELD', ...FLOW],
  }),
  configuredCheck: defineRoute({
    id: 'configuredCheck',
    method: 'post',
    path: '/verification-srv/v2/setup/public/configured/check/:method',
    tag: 'verification',
    summary: 'Whether the user has set up one method',
    params: methodParam,
    body: fields({ request_id: 'the login flow', sub: 'the user, once known', ...IDENTIFIERS }),
    bodyTypes: FORMS,
    invalid,
    response: { description: 'yes or no', schema: z.object({ type: z.string(), configured: z.boolean() }) },
    errors: ['FIELD_MISSING', 'INVALID_FIELD', 'METHOD_NOT_FOUND', ...FLOW],
  }),
  passwordLogin: defineRoute({
    id: 'passwordFormLogin',
    method: 'post',
    path: '/login-srv/login',
    tag: 'login',
    summary: 'A password stage completed by an app’s own login UI with a plain form (cidaas-style)',
    description:
      'Answers with a redirect: to the next stage or back to the app; a failure goes back to the app’s login UI with error and error_description when the flow names one, else as JSON.',
    body: fields({ requestId: 'the login flow', username: 'who signs in', password: 'their password' }),
    bodyTypes: ['application/x-www-form-urlencoded', 'application/json'],
    invalid,
    response: { status: 303, description: 'to the next stage, or back to the app' },
    errors: [
      'INVALID_FIELD',
      'FLOW_NOT_BOUND',
      'ORIGIN_NOT_ALLOWED',
      ...FLOW,
      ...EXCHANGE,
      'FIELD_MISSING',
      'METHOD_NOT_ENABLED',
      'VERIFICATION_FAILED',
      'TOO_MANY_ATTEMPTS',
      'FDS_BLOCKED',
      'TEMPORARILY_UNAVAILABLE',
    ],
  }),
  continueLogin: defineRoute({
    ...CONTINUE_ROUTE,
    id: 'continueLogin',
    path: '/login-srv/verification/login',
    summary: 'Continue the login with an AUTHENTICATED status_id, from an app’s own login UI (cidaas-style)',
    description:
      'JSON when the request accepts JSON (Accept: application/json); a 303 to the next page otherwise. A failure goes back to the app’s login UI with error and error_description when the flow names one.',
  }),
  accountInitiation: defineRoute({
    id: 'accountVerificationInitiation',
    method: 'post',
    path: '/verification-actions-srv/account/initiation',
    tag: 'setup',
    summary: 'Send a code to prove the user’s email address or phone number',
    security: ['adminToken', 'accessToken'],
    body: fields({
      sub: 'the user (admin token only)',
      verification_medium: 'email or sms',
      medium: 'same as verification_medium',
    }),
    bodyTypes: FORMS,
    invalid,
    response: { description: 'the exchange to confirm with the code', schema: json },
    errors: [...SETUP_ACCESS, 'INVALID_FIELD', 'METHOD_NOT_ENABLED'],
  }),
  accountConfirm: defineRoute({
    id: 'accountVerificationConfirm',
    method: 'post',
    path: '/verification-actions-srv/account',
    tag: 'setup',
    summary: 'Confirm the email address or phone number with the code sent',
    body: fields({ exchange_id: 'from the initiation', code: 'the code sent', pass_code: 'same as code' }),
    bodyTypes: FORMS,
    invalid,
    response: { description: 'verified', schema: json },
    errors: ['EXCHANGE_INVALID', 'EXCHANGE_USED', 'VERIFICATION_FAILED', 'TOO_MANY_ATTEMPTS', 'INVALID_FIELD'],
  }),
  loginSetup: defineRoute({
    id: 'setupDuringLogin',
    method: 'post',
    path: '/verification-actions-srv/setup/:method/initiation/:trackId',
    tag: 'setup',
    summary: 'Set a method up during a login (cidaas-style): the track id came to the login UI',
    description:
      'The track id alone is not enough: the call comes from the browser doing the login (its flow cookie, credentials: include), or from the app’s back end with its client authentication (Basic, client_secret, client_assertion).',
    security: ['none', 'clientBasic', 'clientPost'],
    params: methodParam.extend({ trackId: z.string() }),
    body: fields({
      client_id: 'the app, when its back end calls',
      client_secret: 'the app’s secret (client_secret_post), when its back end calls',
      client_assertion: 'private_key_jwt / client_secret_jwt, when its back end calls',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    }),
    bodyTypes: FORMS,
    invalid,
    response: { description: 'what the method answers for its setup initiation', schema: json },
    errors: [
      ...FLOW,
      'FLOW_NOT_BOUND',
      'UNAUTHORIZED',
      'TOO_MANY_ATTEMPTS',
      'METHOD_NOT_ENABLED',
      'SETUP_NOT_ALLOWED',
      'METHOD_NOT_FOUND',
      'ENROLLMENT_NOT_SUPPORTED',
      'INVALID_FIELD',
    ],
  }),
  accountConfig: defineRoute({
    id: 'accountMethodsOverview',
    method: 'get',
    path: '/verification-actions-srv/config',
    tag: 'setup',
    summary: 'The app’s methods and this user’s state of each (for an account page)',
    security: ['adminToken', 'accessToken'],
    query: z.object({
      sub: z.string().optional().meta({ description: 'the user (admin token only)' }),
      client_id: z
        .string()
        .optional()
        .meta({ description: 'the app (admin token only; a user’s token names its app)' }),
    }),
    invalid,
    response: { description: 'the overview', schema: json },
    errors: [...SETUP_ACCESS, 'INVALID_FIELD'],
  }),
  friendlyName: defineRoute({
    id: 'nameCredential',
    method: 'put',
    path: '/verification-actions-srv/setup/users/friendlyname/:method/:trackId',
    tag: 'setup',
    summary: 'Name a credential just set up (cidaas-style; the track id is the credential id)',
    security: ['adminToken', 'accessToken'],
    params: methodParam.extend({ trackId: z.string() }),
    body: z.object({
      sub: scalar.optional().meta({ description: 'the user (admin token only)' }),
      friendly_name: z.string().trim().min(1).max(64),
    }),
    bodyTypes: FORMS,
    invalid: labelInvalid('friendly_name'),
    response: { description: 'renamed', schema: z.object({ id: z.string(), friendly_name: z.string() }) },
    errors: [...SETUP_ACCESS, 'INVALID_FIELD', 'METHOD_NOT_FOUND', 'CREDENTIAL_NOT_FOUND'],
  }),
  requestInfo: defineRoute({
    id: 'loginRequestInfo',
    method: 'get',
    path: '/public-srv/public/:requestId',
    tag: 'login',
    summary: 'What an app’s own login UI shows for a login request',
    params: z.object({ requestId: z.string() }),
    response: {
      description: 'the request',
      schema: z.object({
        requestId: z.string(),
        client_id: z.string(),
        client_name: z.string(),
        allowed_methods: z.array(z.string()),
        stage: z.number().int(),
        stages: z.number().int(),
        ui_locales: z.string().nullable(),
        login_hint: z.string().nullable(),
      }),
    },
    errors: ['REQUEST_NOT_FOUND'],
  }),
  generate: defineRoute({
    id: 'generateLoginRequest',
    method: 'post',
    path: '/authz-srv/authrequest/authz/generate',
    tag: 'login',
    summary: 'Start a login for an app’s own login UI (cidaas-style): the request id, without a redirect',
    description:
      'The parameters of an authorization request, validated as /authorize validates them; the first continuation from the app’s login page claims the flow for its browser (decision 20).',
    body: z
      .object(
        Object.fromEntries(
          [
            'client_id',
            'response_type',
            'redirect_uri',
            'scope',
            'state',
            'nonce',
            'code_challenge',
            'code_challenge_method',
          ].map((name) => [name, parameter.optional()]),
        ),
      )
      .catchall(parameter),
    bodyTypes: ['application/json', 'application/x-www-form-urlencoded'],
    errorStyle: 'oauth',
    invalid: (_message, names) => new OAuthError('invalid_request', `${names[0]} must be a string`),
    response: { description: 'the login request', schema: z.object({ requestId: z.string() }) },
    errors: [
      'invalid_request',
      { code: 'invalid_client', status: 400, description: 'the app (client_id) is not registered' },
      'unsupported_response_type',
      'invalid_scope',
      { code: 'request_not_supported', status: 400, description: 'request objects are not supported' },
      { code: 'request_uri_not_supported', status: 400, description: 'request_uri is not supported' },
      {
        code: 'invalid_request_uri',
        status: 400,
        description: 'the request_uri is unknown, expired, used or another app’s (with a plugin that resolves it)',
      },
      'unauthorized_client',
      'login_required',
      { code: 'server_error', status: 500, description: 'the app has no login stages configured' },
      { code: 'temporarily_unavailable', status: 429, description: 'too many sign-in requests from this address' },
      'INVALID_REQUEST_BODY',
      'PAYLOAD_TOO_LARGE',
      'UNSUPPORTED_MEDIA_TYPE',
    ],
  }),
} satisfies Record<string, RouteSpec>;
