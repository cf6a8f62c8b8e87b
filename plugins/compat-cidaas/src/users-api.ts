import { defineRoute, VERIFICATION_ROUTE_PARTS, z, type RouteSpec } from '@gatehouse-auth/core';

const { scalar, invalid, forms: FORMS, setupAccessErrors: SETUP_ACCESS, json } = VERIFICATION_ROUTE_PARTS;

const subParam = z.object({
  sub: z.string().meta({ description: 'the user (their own token, or any with the admin token)' }),
});

/** An address of the profile (OpenID Connect §5.1.1). */
const address = z
  .object({
    formatted: z.string().optional(),
    street_address: z.string().optional(),
    locality: z.string().optional(),
    region: z.string().optional(),
    postal_code: z.string().optional(),
    country: z.string().optional(),
  })
  .nullable();

/** The user record members of the cidaas SDK's profile update that Gatehouse keeps (OIDC profile claims). */
const PROFILE_MEMBERS = {
  given_name: z.string().nullable(),
  family_name: z.string().nullable(),
  middle_name: z.string().nullable(),
  nickname: z.string().nullable(),
  locale: z.string().nullable(),
  zoneinfo: z.string().nullable(),
  birthdate: z.string().nullable(),
  gender: z.string().nullable(),
  picture: z.string().nullable(),
  website: z.string().nullable(),
  address,
};

/** What a profile update may carry besides the claims: sent back unchanged by SDKs, refused when changed. */
export const FIXED_MEMBERS = ['username', 'email', 'mobile_number', 'phone_number'] as const;

/**
 * The cidaas UserService calls for a signed-in user (issue 27): change the password, update
 * the profile, schedule the account's deletion, and which addresses are verified. Each with the
 * user's access token (`gatehouse.methods` scope, a recent login, the second factor when the
 * user has one) or the admin token, as the setup API.
 */
export const CIDAAS_USER_API = {
  changePassword: defineRoute({
    id: 'cidaasChangePassword',
    method: 'post',
    path: '/users-srv/changepassword',
    tag: 'setup',
    summary: 'Change the password with the current one (cidaas UserService.changePassword)',
    description:
      'The new password obeys the PASSWORD method’s policy; every session and token of the user ends and the user is told (the password notice). Five calls (right or wrong) in 15 minutes block the call for the user (429 TOO_MANY_ATTEMPTS with Retry-After), before the password is checked.',
    security: ['adminToken', 'accessToken'],
    body: z.object({
      sub: scalar.optional().meta({ description: 'the user (required with the admin token)' }),
      old_password: z.string().optional().meta({ description: 'the current password' }),
      new_password: z.string().optional(),
      confirm_password: z.string().optional(),
      identityId: scalar.optional().meta({ description: 'ignored (cidaas identities)' }),
    }),
    bodyTypes: FORMS,
    invalid,
    response: { description: 'changed', schema: z.object({ changed: z.boolean() }) },
    errors: [
      ...SETUP_ACCESS,
      'FIELD_MISSING',
      'INVALID_FIELD',
      'VERIFICATION_FAILED',
      'TOO_MANY_ATTEMPTS',
      'METHOD_NOT_FOUND',
    ],
  }),
  updateProfile: defineRoute({
    id: 'cidaasUpdateProfile',
    method: 'put',
    path: '/users-srv/user/profile/:sub',
    tag: 'setup',
    summary: 'Update the user’s profile claims (cidaas UserService.updateProfile)',
    description:
      'The OpenID Connect profile claims of the body replace the user’s (null removes one). username, email, mobile_number and phone_number may be sent as they are; a changed one is refused (INVALID_FIELD): a new address is proven by a code on the account page.',
    security: ['adminToken', 'accessToken'],
    params: subParam,
    body: z
      .object({ ...Object.fromEntries(Object.entries(PROFILE_MEMBERS).map(([k, v]) => [k, v.optional()])) })
      .catchall(z.unknown()),
    bodyTypes: FORMS,
    invalid,
    response: { description: 'the profile now', schema: z.object({ updated: z.boolean(), profile: json }) },
    errors: [...SETUP_ACCESS, 'INVALID_FIELD'],
  }),
  scheduleDeletion: defineRoute({
    id: 'cidaasScheduleDeletion',
    method: 'post',
    path: '/users-srv/user/unregister/scheduler/schedule/:sub',
    tag: 'setup',
    summary: 'Delete the account after the grace period (cidaas UserService.initiateAccountDeletion)',
    description:
      'The account is disabled at once (every session and token ends) and deleted for good when the account page’s grace period is over, unless an admin enables it again (@gatehouse-auth/page-account, decision 47).',
    security: ['adminToken', 'accessToken'],
    params: subParam,
    response: { description: 'scheduled', schema: z.object({ scheduled: z.boolean(), deletion_at: z.string() }) },
    errors: [
      ...SETUP_ACCESS,
      {
        code: 'DELETION_NOT_CONFIGURED',
        status: 404,
        description: 'no plugin deletes accounts (add @gatehouse-auth/page-account)',
      },
    ],
  }),
  communicationStatus: defineRoute({
    id: 'cidaasCommunicationStatus',
    method: 'get',
    path: '/users-srv/user/communication/status/:sub',
    tag: 'setup',
    summary: 'Which of the user’s addresses are verified (cidaas UserService.getCommunicationStatus)',
    security: ['adminToken', 'accessToken'],
    params: subParam,
    response: {
      description: 'the addresses’ state',
      schema: z.object({
        sub: z.string(),
        EMAIL: z.boolean(),
        MOBILE: z.boolean(),
        email_verified: z.boolean(),
        mobile_number_verified: z.boolean(),
      }),
    },
    errors: [...SETUP_ACCESS],
  }),
} satisfies Record<string, RouteSpec>;
