import {
  CONTINUE_ROUTE,
  defineRoute,
  VERIFICATION_ROUTE_PARTS,
  z,
  type AuthMethod,
  type RouteSpec,
} from '@gatehouse-auth/core';

const {
  fields,
  invalid,
  forms: FORMS,
  flowErrors: FLOW,
  exchangeErrors: EXCHANGE,
  methodParam,
  json,
  identifierFields: IDENTIFIERS,
  methodParts,
} = VERIFICATION_ROUTE_PARTS;

/**
 * The operations of the verification service and the login continuation (decision 26; in the core
 * until decision 78). The handlers validate with them; the method-specific checks, in their spec's
 * order (exchange_id first, then the method's fields), are the core's (`web.verification`), so the
 * schemas refuse only what no order could accept: a body that is not an object, a field that is
 * not a single value.
 */

/** The operations' paths (the spec's, verification-srv.md): the routes answer there, the declarations say so. */
export const VERIFICATION_PATHS = {
  initiate: '/verification-srv/authentication/:method/initiation',
  verify: '/verification-srv/authentication/:method/verification',
  cancel: '/verification-srv/authentication/:method/cancel',
  status: '/verification-srv/verificationstatus/:statusId',
  notificationStatus: '/verification-srv/v2/notification/status/:statusId',
} as const;

/** The verification fields every method's step takes, and each registered method's own. */
function methodFields(methods: readonly AuthMethod[]): Record<string, string> {
  const out: Record<string, string> = {
    exchange_id: 'from the initiation',
    single_factor_auth: 'true or false: complete the login with this method alone (single-factor methods only)',
  };
  for (const m of methods) {
    for (const f of m.verifyFields) out[f] = out[f] ? `${out[f]}, ${m.id}` : `field of ${m.id}`;
  }
  return out;
}

/** Every operation, for the methods registered (their fields are part of the body schemas). */
export function verificationApi(methods: readonly AuthMethod[]) {
  const verifyFields = methodFields(methods);
  const { errors: methodErrors, bodyTypes } = methodParts(methods);
  const byMethod = methods
    .map((m) => `${m.id}: ${[...m.verifyFields, ...(m.files ?? []).map((f) => `${f.name} (file)`)].join(', ')}`)
    .join('; ');
  return {
    initiate: defineRoute({
      id: 'initiateVerification',
      method: 'post',
      path: VERIFICATION_PATHS.initiate,
      tag: 'verification',
      summary: 'Start a verification method in a login flow',
      description:
        'Returns the exchange_id the verification step needs. At the first stage an unknown identifier answers as a known one would (decision 7).',
      params: methodParam,
      body: fields({
        request_id: 'the login flow',
        usage_type: 'INITIAL_AUTHENTICATION, PASSWORDLESS_AUTHENTICATION or MULTIFACTOR_AUTHENTICATION',
        ...IDENTIFIERS,
        single_factor_auth: 'true or false (single-factor device methods)',
        processingType: 'CODE or LINK (code methods)',
        medium_id: 'which of the user’s addresses or devices',
      }),
      bodyTypes: FORMS,
      invalid,
      response: {
        description: 'the exchange, and the status to poll',
        schema: z
          .object({
            exchange_id: z.object({ exchange_id: z.string(), expires_at: z.string().meta({ format: 'date-time' }) }),
            status_id: z.string(),
            link_number: z.number().int().optional().meta({
              description:
                'processingType LINK: the two-digit number the page opened from the link shows; the waiting screen shows it too, to compare',
            }),
            resend_after: z.number().int().optional().meta({
              description:
                'a method that sends (SMS, EMAIL, IVR) with verification.resend_interval_seconds set: seconds before it may send again in this stage (sooner: 429 RESEND_TOO_SOON)',
            }),
          })
          .loose(),
      },
      errors: [
        'METHOD_NOT_FOUND',
        'METHOD_NOT_ENABLED',
        'FIELD_MISSING',
        'INVALID_FIELD',
        ...FLOW,
        'TOO_MANY_INITIATIONS',
        'RESEND_TOO_SOON',
        'SINGLE_FACTOR_NOT_ALLOWED',
        'FDS_BLOCKED',
        'USER_DISABLED',
        'DEVICE_NOT_FOUND',
        'TEMPORARILY_UNAVAILABLE',
        ...methodErrors,
      ],
    }),
    verify: defineRoute({
      id: 'performVerification',
      method: 'post',
      path: VERIFICATION_PATHS.verify,
      tag: 'verification',
      summary: 'Perform the authentication method',
      description: `Checks, in order: the exchange_id, single_factor_auth, the method's fields, the method, FDS. Fields by method: ${byMethod}. Device methods sign the call with the Device-Proof header.`,
      security: ['none', 'deviceProof'],
      params: methodParam,
      body: fields(verifyFields),
      bodyTypes,
      invalid,
      response: {
        description: 'the AUTHENTICATED status to continue the login with',
        schema: z.object({ status_id: z.string(), sub: z.string() }),
      },
      errors: [
        ...EXCHANGE,
        'SINGLE_FACTOR_NOT_ALLOWED',
        'FIELD_MISSING',
        'INVALID_FIELD',
        'FIELDS_MIXED',
        'METHOD_NOT_FOUND',
        'METHOD_NOT_ENABLED',
        'USER_DISABLED',
        'VERIFICATION_FAILED',
        'TOO_MANY_ATTEMPTS',
        'FDS_BLOCKED',
        'DEVICE_PROOF_INVALID',
        ...FLOW,
        'TEMPORARILY_UNAVAILABLE',
        ...methodErrors,
      ],
    }),
    cancel: defineRoute({
      id: 'cancelVerification',
      method: 'post',
      path: VERIFICATION_PATHS.cancel,
      tag: 'verification',
      summary: 'Cancel a verification in progress',
      params: methodParam,
      body: fields({ exchange_id: 'the exchange to cancel', reason: 'why (kept in the event, 64 characters)' }),
      bodyTypes: FORMS,
      invalid,
      response: {
        description: 'cancelled',
        schema: z.object({ exchange_id: z.string(), status: z.literal('CANCELLED') }),
      },
      errors: [...EXCHANGE, 'METHOD_NOT_FOUND', 'INVALID_FIELD'],
    }),
    status: defineRoute({
      id: 'verificationStatus',
      method: 'get',
      path: VERIFICATION_PATHS.status,
      tag: 'verification',
      summary: 'The state of a verification (long poll with wait and state)',
      params: z.object({ statusId: z.string() }),
      query: z.object({
        wait: z
          .string()
          .optional()
          .meta({ description: 'seconds to hold the answer while the state is `state` (at most 30)' }),
        state: z.string().optional().meta({ description: 'the state the caller knows' }),
      }),
      invalid,
      response: {
        description: 'the state',
        schema: z.object({
          status_id: z.string(),
          status: z
            .string()
            .meta({ description: 'INITIATED, AUTHENTICATED, FAILED, CANCELLED, EXPIRED, CONSUMED, ...' }),
          method: z.string(),
          expires_at: z.string().meta({ format: 'date-time' }),
        }),
      },
      errors: ['STATUS_NOT_FOUND'],
    }),
    notificationStatus: defineRoute({
      id: 'notificationStatus',
      method: 'post',
      path: VERIFICATION_PATHS.notificationStatus,
      tag: 'verification',
      summary: 'The state of a verification, as cidaas’s notification-status call asks for it',
      params: z.object({ statusId: z.string() }),
      body: fields({}),
      bodyTypes: FORMS,
      invalid,
      response: { description: 'the state', schema: json },
      errors: ['STATUS_NOT_FOUND', 'INVALID_FIELD'],
    }),
    continueLogin: CONTINUE_ROUTE,
  } satisfies Record<string, RouteSpec>;
}
