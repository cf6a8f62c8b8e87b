import { z } from 'zod';
import { ADMIN_THROTTLED } from './api-spec.js';
import type { AuthMethod } from './extensions.js';
import { defineRoute, type ErrorRef, type MediaType } from './routes.js';
import { verificationError } from './verification-errors.js';

/**
 * The pieces the verification service's operations are declared with (decision 26; the
 * declarations are @gatehouse-auth/verification-api's, decision 78, and the setup API's
 * @gatehouse-auth/setup-api's, decision 70; the pieces are the contract's since decision 84).
 * The method-specific checks, in their spec's order (exchange_id first, then the method's
 * fields), stay in the pipeline, so the schemas refuse only what no order could accept: a body
 * that is not an object, a field that is not a single value.
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
