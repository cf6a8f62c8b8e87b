import { defineRoute, VERIFICATION_ROUTE_PARTS, z, type AuthMethod, type RouteSpec } from '@gatehouse-auth/core';

const { fields, invalid, labelInvalid, setupAccessErrors: SETUP_ACCESS, methodParam, json } = VERIFICATION_ROUTE_PARTS;

/** Where the plugin mounts its routes; the declarations' paths are relative to it. */
export const SETUP_MOUNT = '/verification-actions-srv/setup';

export type SetupStep = 'initiation' | 'scan' | 'verification';

/**
 * The setup API's operations (decision 26), for the methods registered: a step's body takes
 * multipart when a method takes files, and its errors name the codes the methods' outcomes carry.
 */
export function setupApi(methods: readonly AuthMethod[]) {
  const { errors: methodErrors, bodyTypes } = VERIFICATION_ROUTE_PARTS.methodParts(methods);
  const method = methodParam.shape.method;
  const step = (name: SetupStep) =>
    defineRoute({
      id: `setup${name[0]!.toUpperCase()}${name.slice(1)}`,
      method: 'post',
      path: `/:method/${name}`,
      tag: 'setup',
      summary: `Set a method up for a user: ${name}`,
      description:
        'With the admin token, `sub` names the user; with the user’s own access token (a recent login, scope to manage methods), the token does.' +
        (name === 'verification'
          ? ' Without a bearer, the `exchange_id` of the setup in progress names the user and the method.'
          : ''),
      security: name === 'verification' ? ['adminToken', 'accessToken', 'none'] : ['adminToken', 'accessToken'],
      params: methodParam,
      body: fields({ sub: 'the user (admin token only)', exchange_id: 'the setup in progress' }),
      bodyTypes,
      invalid,
      response: { description: 'what the method answers for this step (a QR code, a challenge, done)', schema: json },
      errors: [
        ...SETUP_ACCESS,
        'METHOD_NOT_FOUND',
        'ENROLLMENT_NOT_SUPPORTED',
        'INVALID_FIELD',
        'VERIFICATION_FAILED',
        'TOO_MANY_ATTEMPTS',
        'EXCHANGE_INVALID',
        'TEMPORARILY_UNAVAILABLE',
        ...methodErrors,
      ],
    });

  return {
    initiation: step('initiation'),
    scan: step('scan'),
    verification: step('verification'),
    list: defineRoute({
      id: 'listUserMethods',
      method: 'get',
      path: '/users/:sub/methods',
      tag: 'setup',
      summary: 'The user’s sign-in methods and credentials',
      security: ['adminToken', 'accessToken'],
      params: z.object({ sub: z.string() }),
      response: { description: 'the methods', schema: z.array(json).or(json) },
      // INVALID_FIELD: a multipart body (no method of this call takes files).
      errors: [...SETUP_ACCESS, 'INVALID_FIELD'],
    }),
    rename: defineRoute({
      id: 'renameCredential',
      method: 'patch',
      path: '/users/:sub/methods/:method/:credentialId',
      tag: 'setup',
      summary: 'Rename one credential (a passkey, a phone)',
      security: ['adminToken', 'accessToken'],
      params: z.object({ sub: z.string(), method, credentialId: z.string() }),
      body: z.object({ name: z.string().trim().min(1).max(64) }),
      invalid: labelInvalid('name'),
      response: { description: 'renamed', schema: z.object({ id: z.string(), name: z.string() }) },
      errors: [...SETUP_ACCESS, 'INVALID_FIELD', 'METHOD_NOT_FOUND', 'CREDENTIAL_NOT_FOUND'],
    }),
    remove: defineRoute({
      id: 'removeMethod',
      method: 'delete',
      path: '/users/:sub/methods/:method{/:credentialId}',
      tag: 'setup',
      summary: 'Remove a method, or one credential of it; the user’s sessions and tokens end',
      security: ['adminToken', 'accessToken'],
      params: z.object({ sub: z.string(), method, credentialId: z.string().optional() }),
      response: { description: 'what was removed', schema: z.object({ removed: z.unknown() }) },
      // INVALID_FIELD: a multipart body for a method that takes no files.
      errors: [...SETUP_ACCESS, 'INVALID_FIELD', 'METHOD_NOT_FOUND', 'CREDENTIAL_NOT_FOUND'],
    }),
  } satisfies Record<string, RouteSpec>;
}
