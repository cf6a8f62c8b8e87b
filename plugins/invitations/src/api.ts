import { ADMIN_THROTTLED, ApiError, defineRoute, z, type RouteSpec } from '@gatehouse-auth/core';

// The admin API's invitation operations, under the plugin's mount path `/admin/invitations`.

const ADMIN = {
  tag: 'admin',
  security: ['adminToken'],
  invalid: (message: string, fields: string[]) => new ApiError(400, 'INVALID_FIELD', message, { field: fields[0] }),
} as const;
const GUARD_ERRORS = ['UNAUTHORIZED', 'ADMIN_API_DISABLED', ADMIN_THROTTLED] as const;
/** This plugin's own codes, with their status and meaning for the API document. */
export const NOT_FOUND = { code: 'INVITATION_NOT_FOUND', status: 404, description: 'no such invitation' };
const ALREADY_SET_UP = {
  code: 'ALREADY_SET_UP',
  status: 409,
  description: 'the user has a password already: an invitation sets a first one (use password recovery)',
};
const USER_NOT_ACTIVE = { code: 'USER_NOT_ACTIVE', status: 409, description: 'the user is disabled or locked' };

export const invitationSchema = z.object({
  invite_id: z.string(),
  user_id: z.string(),
  email: z.string(),
  client_id: z.string().nullable(),
  sign_in_url: z.string().nullable(),
  status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
  created_at: z.string().meta({ format: 'date-time' }),
  expires_at: z.string().meta({ format: 'date-time' }),
  accepted_at: z.string().nullable(),
});
const inviteId = z.object({ id: z.string().meta({ description: 'the invitation id (invite_id)' }) });
const optional = (max: number) => z.string().trim().min(1).max(max).optional();

export const INVITATIONS_API = {
  invite: defineRoute({
    ...ADMIN,
    id: 'createInvitation',
    method: 'post',
    path: '/',
    summary: 'Invite a user by email: a single-use link to choose a first password',
    description:
      'Creates the user when no one has the address. A user who has a password already is refused (ALREADY_SET_UP). A new invitation revokes the pending ones of the same user.',
    body: z.strictObject({
      email: z.string().max(320),
      username: optional(255),
      client_id: optional(255),
      sign_in_url: optional(2048).meta({
        description: "where the done page sends the user: on the origin of one of the app's (client_id) redirect URIs",
      }),
      locale: z
        .string()
        .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/)
        .optional(),
    }),
    response: { status: 201, description: 'the invitation (never its link)', schema: invitationSchema },
    errors: [...GUARD_ERRORS, 'INVALID_FIELD', 'USER_EXISTS', USER_NOT_ACTIVE, ALREADY_SET_UP],
  }),
  get: defineRoute({
    ...ADMIN,
    id: 'getInvitation',
    method: 'get',
    path: '/:id',
    summary: 'An invitation and its status',
    params: inviteId,
    response: { description: 'the invitation', schema: invitationSchema },
    errors: [...GUARD_ERRORS, NOT_FOUND],
  }),
  ofUser: defineRoute({
    ...ADMIN,
    id: 'listInvitations',
    method: 'get',
    path: '/',
    summary: "A user's invitations, newest first",
    query: z.object({ user_id: z.string().min(1).max(100) }),
    response: { description: 'the invitations', schema: z.array(invitationSchema) },
    errors: [...GUARD_ERRORS, 'INVALID_FIELD'],
  }),
  revoke: defineRoute({
    ...ADMIN,
    id: 'revokeInvitation',
    method: 'delete',
    path: '/:id',
    summary: 'Revoke an invitation: its link stops working',
    params: inviteId,
    response: { description: 'the invitation now', schema: invitationSchema },
    errors: [...GUARD_ERRORS, NOT_FOUND],
  }),
} satisfies Record<string, RouteSpec>;
