import {
  ADMIN_THROTTLED,
  ApiError,
  defineRoute,
  E164_PATTERN,
  EMAIL_PATTERN,
  profilePatchSchema,
  REQUIRED_ACTIONS,
  USERNAME_PATTERN,
  z,
  type RouteSpec,
} from '@gatehouse-auth/core';

// ── the admin API's operations (decision 26: the handlers validate with what the document shows) ──
// Their paths are under the plugin's mount path, `/admin`.

const ADMIN = {
  tag: 'admin',
  security: ['adminToken'],
  // The users directory names the one field it refuses (details.field).
  invalid: (message: string, fields: string[]) => new ApiError(400, 'INVALID_FIELD', message, { field: fields[0] }),
} as const;
const GUARD_ERRORS = ['UNAUTHORIZED', 'ADMIN_API_DISABLED', ADMIN_THROTTLED] as const;

const userId = z.object({ id: z.string().meta({ description: 'the user id (a UUID)' }) });
const userSchema = z.object({
  id: z.string(),
  username: z.string(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  status: z.enum(['active', 'disabled', 'locked']),
});
/** Empty and absent are the same: no email or phone. */
const optionalMatching = (re: RegExp, what: string) =>
  z.union([z.literal(''), z.null(), z.string().trim().regex(re, what)]).optional();
const profileSchemaOut = z.record(z.string(), z.unknown()).meta({
  description: 'the OIDC standard claims set for this user (name, given_name, address, ...) and updated_at',
});
const sessionSchema = z.object({
  sid: z.string(),
  created_at: z.string().meta({ format: 'date-time' }),
  expires_at: z.string().meta({ format: 'date-time' }),
  auth_time: z.number().int(),
  amr: z.array(z.string()),
  methods: z.array(z.object({ method: z.string(), at: z.number().int() })),
  clients: z.array(z.string()),
});

const requiredActionsSchema = z.strictObject({
  actions: z.array(z.enum(REQUIRED_ACTIONS)).max(REQUIRED_ACTIONS.length),
});
const clientId = z.object({ client_id: z.string().meta({ description: "the app's client_id" }) });
const appEntry = z.record(z.string(), z.unknown()).meta({
  description:
    "an app as the config's apps[] entry has it (client_id, name, redirect_uris, scopes, grant_types, plugin keys...), checked as start-up checks the config's; no client_secret",
});
const appSchemaOut = z.object({
  client_id: z.string(),
  source: z.enum(['config', 'database']).meta({ description: 'config apps are read-only here' }),
  name: z.string(),
  token_endpoint_auth_method: z.string(),
  app: z.record(z.string(), z.unknown()).meta({ description: 'the entry, without any secret' }),
  has_secret: z.boolean(),
  previous_secret_expires_at: z
    .string()
    .nullable()
    .meta({ description: 'after a rotation: until when the previous secret works' }),
  created_at: z.string().nullable(),
  updated_at: z.string().nullable(),
});
const withSecret = z.object({
  app: appSchemaOut,
  client_secret: z
    .string()
    .nullable()
    .meta({ description: 'the new secret, shown this once (null for apps without one)' }),
});
const APP_ERRORS = [...GUARD_ERRORS, 'INVALID_APP'] as const;

export const ADMIN_API = {
  createUser: defineRoute({
    ...ADMIN,
    id: 'createUser',
    method: 'post',
    path: '/users',
    summary: 'Create a user',
    body: z.object({
      username: z.string().trim().regex(USERNAME_PATTERN, 'must be 1-255 letters, digits or ._@+-'),
      email: optionalMatching(EMAIL_PATTERN, 'must be an email address'),
      phone: optionalMatching(E164_PATTERN, 'must be an E.164 number such as +15551234567'),
    }),
    response: { status: 201, description: 'the new user', schema: userSchema },
    errors: [...GUARD_ERRORS, 'INVALID_FIELD', 'USER_EXISTS'],
  }),
  listUsers: defineRoute({
    ...ADMIN,
    id: 'listUsers',
    method: 'get',
    path: '/users',
    summary: 'List users, oldest first',
    query: z.object({
      limit: z.coerce.number().int().default(100).meta({ description: 'at most 1000 (clamped)' }),
      offset: z.coerce.number().int().default(0),
    }),
    invalid: () => new ApiError(400, 'INVALID_FIELD', 'limit and offset must be integers'),
    response: { description: 'a page of users', schema: z.array(userSchema) },
    errors: [...GUARD_ERRORS, 'INVALID_FIELD'],
  }),
  getUser: defineRoute({
    ...ADMIN,
    id: 'getUser',
    method: 'get',
    path: '/users/:id',
    summary: 'Get a user',
    params: userId,
    response: { description: 'the user', schema: userSchema },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND'],
  }),
  getProfile: defineRoute({
    ...ADMIN,
    id: 'getUserProfile',
    method: 'get',
    path: '/users/:id/profile',
    summary: "A user's OIDC profile claims",
    params: userId,
    response: { description: 'the claims', schema: profileSchemaOut },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND'],
  }),
  patchProfile: defineRoute({
    ...ADMIN,
    id: 'patchUserProfile',
    method: 'patch',
    path: '/users/:id/profile',
    summary: "Change a user's profile claims (JSON merge patch: null removes a claim)",
    description: 'A bad value refuses the whole patch and changes nothing.',
    params: userId,
    body: profilePatchSchema,
    response: { description: 'the profile after the patch', schema: profileSchemaOut },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND', 'INVALID_FIELD'],
  }),
  listSessions: defineRoute({
    ...ADMIN,
    id: 'listUserSessions',
    method: 'get',
    path: '/users/:id/sessions',
    summary: "A user's live browser sessions: when, how, and which apps they reached",
    params: userId,
    response: { description: 'the sessions', schema: z.array(sessionSchema) },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND'],
  }),
  endSession: defineRoute({
    ...ADMIN,
    id: 'endUserSession',
    method: 'delete',
    path: '/users/:id/sessions/:sid',
    summary: 'End one session: its tokens are revoked, its apps get back-channel logout notices',
    params: userId.extend({ sid: z.string() }),
    response: { description: 'ended', schema: z.object({ ended: z.literal(1) }) },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND', 'SESSION_NOT_FOUND'],
  }),
  endSessions: defineRoute({
    ...ADMIN,
    id: 'endUserSessions',
    method: 'delete',
    path: '/users/:id/sessions',
    summary: 'End every session of a user ("sign out everywhere")',
    params: userId,
    response: { description: 'how many ended', schema: z.object({ ended: z.number().int() }) },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND'],
  }),
  unlockFactor: defineRoute({
    ...ADMIN,
    id: 'unlockFactor',
    method: 'post',
    path: '/users/:id/factors/:method/unlock',
    summary: 'Lift the lockout of one factor once the operator has checked the account',
    params: userId.extend({ method: z.string().meta({ description: 'a method id, e.g. one of the login methods' }) }),
    response: {
      description: 'unlocked',
      schema: z.object({ user_id: z.string(), method: z.string(), unlocked: z.literal(true) }),
    },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND'],
  }),
  getRequiredActions: defineRoute({
    ...ADMIN,
    id: 'getRequiredActions',
    method: 'get',
    path: '/users/:id/required-actions',
    summary: 'What the user must do at their next sign-in',
    params: userId,
    response: { description: 'the actions', schema: requiredActionsSchema },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND'],
  }),
  setRequiredActions: defineRoute({
    ...ADMIN,
    id: 'setRequiredActions',
    method: 'put',
    path: '/users/:id/required-actions',
    summary: 'Set what the user must do at their next sign-in (an empty list clears it)',
    description:
      'change_password: the hosted login page asks for a new password (the PASSWORD policy) before the app gets its answer; second_factor: it asks them to set up a second factor unless they have one.',
    params: userId,
    body: requiredActionsSchema,
    response: { description: 'the actions now', schema: requiredActionsSchema },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND', 'INVALID_FIELD'],
  }),
  listApps: defineRoute({
    ...ADMIN,
    id: 'listApps',
    method: 'get',
    path: '/apps',
    summary: "Every app: the config's (read-only) and those in the database",
    response: { description: 'the apps, without secrets', schema: z.array(appSchemaOut) },
    errors: [...GUARD_ERRORS],
  }),
  createApp: defineRoute({
    ...ADMIN,
    id: 'createApp',
    method: 'post',
    path: '/apps',
    summary: 'Create an app in the database (every node sees it at once)',
    description:
      'Without client_id one is made. Without token_endpoint_auth_method an app with jwks or jwks_uri uses private_key_jwt and any other gets a generated secret (none: a public app). client_secret_sha256 imports a digest; client_secret and client_secret_jwt are refused.',
    invalid: (message: string) => new ApiError(400, 'INVALID_APP', message),
    body: appEntry,
    response: { status: 201, description: 'the app and its secret, shown this once', schema: withSecret },
    errors: [...APP_ERRORS, 'APP_EXISTS'],
  }),
  getApp: defineRoute({
    ...ADMIN,
    id: 'getApp',
    method: 'get',
    path: '/apps/:client_id',
    summary: 'Get an app',
    params: clientId,
    response: { description: 'the app, without its secret', schema: appSchemaOut },
    errors: [...GUARD_ERRORS, 'APP_NOT_FOUND'],
  }),
  replaceApp: defineRoute({
    ...ADMIN,
    id: 'replaceApp',
    method: 'put',
    path: '/apps/:client_id',
    summary: "Replace a database app's entry; its secret and tokens stay",
    params: clientId,
    invalid: (message: string) => new ApiError(400, 'INVALID_APP', message),
    body: appEntry,
    response: { description: 'the app', schema: appSchemaOut },
    errors: [...APP_ERRORS, 'APP_NOT_FOUND', 'APP_READ_ONLY'],
  }),
  patchApp: defineRoute({
    ...ADMIN,
    id: 'patchApp',
    method: 'patch',
    path: '/apps/:client_id',
    summary: "Change keys of a database app's entry (JSON merge patch: null removes a key)",
    params: clientId,
    invalid: (message: string) => new ApiError(400, 'INVALID_APP', message),
    body: appEntry,
    response: { description: 'the app', schema: appSchemaOut },
    errors: [...APP_ERRORS, 'APP_NOT_FOUND', 'APP_READ_ONLY'],
  }),
  deleteApp: defineRoute({
    ...ADMIN,
    id: 'deleteApp',
    method: 'delete',
    path: '/apps/:client_id',
    summary: 'Delete a database app: its grants and tokens are revoked',
    params: clientId,
    response: {
      description: 'deleted',
      schema: z.object({ revoked_grants: z.number().int(), revoked_tokens: z.number().int() }),
    },
    errors: [...GUARD_ERRORS, 'APP_NOT_FOUND', 'APP_READ_ONLY'],
  }),
  rotateAppSecret: defineRoute({
    ...ADMIN,
    id: 'rotateAppSecret',
    method: 'post',
    path: '/apps/:client_id/secret',
    summary: "Rotate a database app's secret; the previous one works for an overlap",
    description:
      'overlap_seconds: how long the previous secret keeps working (default 86400, 0 ends it at once, at most 30 days). A secret rotated earlier and still in its overlap ends now.',
    params: clientId,
    body: z.object({
      overlap_seconds: z
        .number()
        .int()
        .min(0)
        .max(30 * 24 * 3600)
        .optional(),
    }),
    invalid: () =>
      new ApiError(400, 'INVALID_FIELD', 'overlap_seconds must be an integer from 0 to 2592000', {
        field: 'overlap_seconds',
      }),
    response: { description: 'the app and its new secret, shown this once', schema: withSecret },
    errors: [...GUARD_ERRORS, 'INVALID_FIELD', 'APP_NOT_FOUND', 'APP_READ_ONLY', 'APP_HAS_NO_SECRET', 'APP_CHANGED'],
  }),
} satisfies Record<string, RouteSpec>;
