import {
  type AuthMethod,
  defineRoute,
  type ErrorRef,
  type MediaType,
  type RouteSpec,
} from '@gatehouse-auth/plugin-api';
import { z } from 'zod';
import { ADMIN_THROTTLED } from '../http/admin-guard.js';
import { verificationError } from './errors.js';

/**
 * The operations of the verification service and the login continuation (decision 26; the setup
 * API's are @gatehouse-auth/setup-api's, decision 70). The handlers in routes.ts validate with
 * them; the method-specific checks, in their spec's order (exchange_id first, then the method's
 * fields), stay in the pipeline, so the schemas here refuse only what no order could accept: a
 * body that is not an object, a field that is not a single value.
 */

/** A field the way forms and JSON send it; numbers and booleans are read as text. */
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/**
 * Fields the pipeline reads whatever their value: any `single_factor_auth`, null or an object
 * included, asks for single-factor, which only single-factor methods accept (their own error).
 */
const ANY_VALUE = new Set(['single_factor_auth']);

/** A body of named single-value fields; others pass to the pipeline, which names them if they do not belong. */
function fields(named: Record<string, string>) {
  const field = (name: string, description: string) =>
    (ANY_VALUE.has(name) ? z.unknown().optional() : scalar.optional()).meta({ description });
  return z.object(Object.fromEntries(Object.entries(named).map(([k, d]) => [k, field(k, d)]))).catchall(z.unknown());
}

// One error shape for every verification route: details.fields names what is wrong.
const invalid = (message: string, names: string[]) => verificationError('INVALID_FIELD', message, { fields: names });

/** A credential's label: its own message, as before the schemas. */
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
  ADMIN_THROTTLED,
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

/**
 * The continuation of a login with an AUTHENTICATED status_id: the hosted page's form at
 * /login/continue; a plugin that answers it at another path (compat-cidaas's
 * /login-srv/verification/login) declares it with its own id and path (exported, plugin API 1.3).
 */
export const CONTINUE_ROUTE = defineRoute({
  id: 'continueHostedLogin',
  method: 'post',
  path: '/login/continue',
  tag: 'login',
  summary: 'Continue the login with an AUTHENTICATED status_id (the hosted page’s form)',
  description: 'JSON when the request accepts JSON (Accept: application/json); a 303 to the next page otherwise.',
  body: fields({
    requestId: 'the login flow',
    status_id: 'from the verification',
    verificationType: 'the method of the status (checked when given)',
    sub: 'the user of the status (checked when given)',
  }),
  bodyTypes: FORMS,
  invalid,
  response: {
    description: 'where the login goes next',
    schema: z.object({
      request_id: z.string(),
      completed: z.boolean(),
      stage: z.number().int(),
      next_methods: z.array(z.string()),
      redirect_to: z.string(),
    }),
  },
  others: [{ status: 303, description: 'for a browser: to the next stage, or back to the app' }],
  errors: [
    'INVALID_FIELD',
    'FIELD_MISSING',
    'STATUS_NOT_FOUND',
    'STATUS_MISMATCH',
    'STATUS_USED',
    'STATUS_NOT_AUTHENTICATED',
    'STATUS_EXPIRED',
    'FLOW_NOT_BOUND',
    'ORIGIN_NOT_ALLOWED',
    ...FLOW,
  ],
});

/**
 * What the registered methods add to the steps that run them: the codes their own outcomes carry,
 * and multipart bodies when one takes files.
 */
function methodParts(methods: readonly AuthMethod[]): { errors: ErrorRef[]; bodyTypes: MediaType[] } {
  const errors = methods.flatMap((m) =>
    Object.entries(m.errors ?? {}).map(([code, [status, meaning]]) => ({
      code,
      status,
      description: `${meaning} (${m.id})`,
    })),
  );
  const files = methods.some((m) => m.files?.length);
  return { errors, bodyTypes: [...FORMS, ...(files ? (['multipart/form-data'] as const) : [])] };
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
      path: '/verification-srv/authentication/:method/initiation',
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
      path: '/verification-srv/authentication/:method/verification',
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
      path: '/verification-srv/authentication/:method/cancel',
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
      path: '/verification-srv/verificationstatus/:statusId',
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
      path: '/verification-srv/v2/notification/status/:statusId',
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

/**
 * Since plugin API 1.3: the pieces the verification routes are declared with, for plugin routes
 * of the same family (the cidaas calls), so that their declarations say the same without a copy.
 */
export const VERIFICATION_ROUTE_PARTS = {
  scalar,
  fields,
  invalid,
  labelInvalid,
  forms: FORMS,
  setupAccessErrors: SETUP_ACCESS,
  flowErrors: FLOW,
  exchangeErrors: EXCHANGE,
  methodParam,
  json,
  identifierFields: IDENTIFIERS,
  /** Since 1.3: the methods' error codes and body types, for the steps that run them (the setup API's). */
  methodParts,
} as const;
