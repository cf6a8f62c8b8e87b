import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import {
  ApiError,
  defineRoute,
  routeInput,
  z,
  type LoginFlowView,
  type RouteSpec,
  answerSuccess,
} from '@gatehouse-auth/core';
import { type RouteGroupInput } from './http.js';

/**
 * What this file needs of `@gatehouse-auth/registration`'s service (`services.resolve('registration')`),
 * by shape: a plugin imports only the core.
 */
interface Registration {
  form(
    req: IncomingMessage,
    flow: LoginFlowView,
    locale: string | null,
  ): { locale: string; fields: { name: string; required: boolean; label: string }[]; terms: string | null } | null;
  flowFor(req: IncomingMessage, requestId: unknown, opts?: { admitted?: boolean }): Promise<{ flow: LoginFlowView }>;
  admit(req: IncomingMessage, res: Response, requestId: string): Promise<void>;
  start(
    req: IncomingMessage,
    flow: LoginFlowView,
    input: { fields: Record<string, string>; password: string; passwordRepeat: string | null; termsAccepted: boolean },
  ): Promise<
    | { id: string; medium: 'email' | 'sms'; masked: string; minutes: number }
    | { user: { id: string }; continuation: { location: string; completed: boolean } }
  >;
  exists(req: IncomingMessage, flow: LoginFlowView, identifiers: string[]): Promise<boolean | null>;
}

/** The refusals of the registration service, as it names them (its `RegistrationError`). */
interface Refusal {
  status: number;
  code: string;
  message: string;
  field: string | null;
  retryAfter: number | null;
}

const DISABLED = { code: 'REGISTRATION_DISABLED', status: 404, description: 'the app offers no registration' } as const;
const TOO_MANY = {
  code: 'TOO_MANY_REQUESTS',
  status: 429,
  description: 'too many registrations from the address',
} as const;

const REGISTRATION_ERRORS = [
  'FIELD_MISSING',
  'INVALID_FIELD',
  'FLOW_NOT_BOUND',
  'ORIGIN_NOT_ALLOWED',
  'REQUEST_NOT_FOUND',
  'REQUEST_EXPIRED',
  'REQUEST_COMPLETED',
  'WRONG_FLOW_STAGE',
  DISABLED,
  { code: 'PASSWORD_MISMATCH', status: 400, description: 'password and password_echo differ' },
  { code: 'PASSWORD_TOO_SHORT', status: 400, description: 'the password policy refuses it' },
  { code: 'PASSWORD_TOO_LONG', status: 400, description: 'the password policy refuses it' },
  { code: 'PASSWORD_TOO_COMMON', status: 400, description: 'a common or breached password' },
  { code: 'PASSWORD_REFUSED', status: 400, description: 'the password method refuses it' },
  { code: 'TERMS_NOT_ACCEPTED', status: 400, description: 'terms_version is not the app’s' },
  { code: 'USERNAME_TAKEN', status: 409, description: 'the chosen username is taken' },
  { code: 'REGISTRATION_REFUSED', status: 403, description: 'an FDS rule of the registration phase refused it' },
  { code: 'REGISTRATION_FAILED', status: 409, description: 'verify none: the account could not be made' },
  TOO_MANY,
] as const;

const text = (description: string) => z.string().max(512).optional().meta({ description });

export const REGISTRATION_ROUTES = {
  fields: defineRoute({
    id: 'cidaasRegistrationFields',
    method: 'get',
    path: '/registration-setup-srv/public/list',
    tag: 'registration',
    summary: 'The fields of the app’s registration form (cidaas field list)',
    query: z.object({
      requestId: z.string().min(1).max(200).meta({ description: 'the login flow' }),
      acceptlanguage: z.string().max(100).optional().meta({ description: 'the labels’ language' }),
    }),
    response: { description: 'the fields in order', schema: z.array(z.record(z.string(), z.unknown())) },
    errors: ['INVALID_FIELD', 'REQUEST_NOT_FOUND', 'REQUEST_EXPIRED', 'REQUEST_COMPLETED', DISABLED],
  }),
  register: defineRoute({
    id: 'cidaasRegister',
    method: 'post',
    path: '/users-srv/register',
    tag: 'registration',
    summary: 'Registers a user for the login flow the requestId header names (cidaas SDK register)',
    description:
      'Starts the registration: a code goes to the address (answered with verification_url, the hosted code page), or with verify none the account is made at once. A taken address gets the same answer as a new one.',
    body: z.object({
      requestId: text('the login flow (or the header)'),
      username: text('a username of the registrant’s choosing'),
      email: text('email address'),
      mobile_number: text('phone number (E.164)'),
      phone_number: text('phone number (E.164)'),
      given_name: text('OIDC given_name'),
      family_name: text('OIDC family_name'),
      middle_name: text('OIDC middle_name'),
      nickname: text('OIDC nickname'),
      birthdate: text('YYYY-MM-DD'),
      gender: text('OIDC gender'),
      locale: text('BCP 47 tag'),
      zoneinfo: text('IANA time zone'),
      website: text('URL'),
      picture: text('URL'),
      password: text('the new password'),
      password_echo: text('the password again'),
      terms_version: text('the terms version accepted (Gatehouse)'),
    }),
    response: { description: 'pending or made', schema: z.record(z.string(), z.unknown()) },
    errors: [...REGISTRATION_ERRORS],
  }),
  existence: defineRoute({
    id: 'cidaasUserExistence',
    method: 'post',
    path: '/useractions-srv/userexistence/:requestId',
    tag: 'registration',
    summary: 'Whether an account has this identifier: only for apps that allow it, else a constant answer',
    params: z.object({ requestId: z.string().min(1).max(200) }),
    body: z.object({ email: text('email'), username: text('username'), mobile: text('phone number') }),
    response: {
      description: 'exist, or null when the app keeps it hidden',
      schema: z.object({ exist: z.boolean().nullable() }),
    },
    errors: ['INVALID_FIELD', 'REQUEST_NOT_FOUND', 'REQUEST_EXPIRED', 'REQUEST_COMPLETED', TOO_MANY],
  }),
};

/** cidaas's data types of the fields. */
const DATA_TYPES: Record<string, string> = {
  email: 'EMAIL',
  phone: 'MOBILE',
  birthdate: 'DATE',
  website: 'URL',
  picture: 'URL',
  password: 'PASSWORD',
  password_echo: 'PASSWORD',
};
/** cidaas's keys of the fields the registration names otherwise. */
const CIDAAS_KEYS: Record<string, string> = { phone: 'mobile_number' };

/**
 * The cidaas SDK's registration calls (issue 27) on `@gatehouse-auth/registration`: the form's
 * fields, register, and user existence (enumeration-safe unless the app allows the answer).
 * Without the registration plugin they answer 404 REGISTRATION_DISABLED.
 */
export function registrationRoutes({ api, router }: RouteGroupInput): RouteSpec[] {
  const { services, web } = api;
  const json = services.http.json();
  // The SDK calls them by XHR from the app's login UI (apps[i].allowed_origins).
  api.cors(['/users-srv/register', '/registration-setup-srv/', '/useractions-srv/userexistence/']);
  const registration = (): Registration => {
    try {
      return services.resolve<Registration>('registration');
    } catch {
      throw new ApiError(404, 'REGISTRATION_DISABLED', 'no registration plugin is loaded');
    }
  };
  /** A refusal of the service in the envelope (with Retry-After where it has one). */
  const refusal = (err: unknown): never => {
    const r = err as Partial<Refusal>;
    if (
      err instanceof Error &&
      typeof r.status === 'number' &&
      typeof r.code === 'string' &&
      !(err instanceof ApiError)
    ) {
      const wrapped = new ApiError(r.status, r.code, err.message, r.field ? { fields: [r.field] } : undefined);
      if (r.retryAfter) wrapped.headers = () => ({ 'Retry-After': String(r.retryAfter) });
      throw wrapped;
    }
    throw err;
  };

  router.get(REGISTRATION_ROUTES.fields.path, async (req: Request, res: Response) => {
    const { query } = routeInput(REGISTRATION_ROUTES.fields, req);
    const flow = await web.loginFlows.open(query.requestId);
    const form = registration().form(req, flow, query.acceptlanguage ?? null);
    if (!form) throw new ApiError(404, 'REGISTRATION_DISABLED', 'the app offers no registration');
    answerSuccess(
      res,
      form.fields.map((f, i) => ({
        fieldKey: CIDAAS_KEYS[f.name] ?? f.name,
        fieldType: 'SYSTEM',
        dataType: DATA_TYPES[f.name] ?? 'TEXT',
        fieldGroup: 'DEFAULT',
        isGroup: false,
        order: i + 1,
        readOnly: false,
        required: f.required,
        enabled: true,
        localeText: { locale: form.locale, language: form.locale.split('-')[0], name: f.label },
      })),
    );
  });

  router.post(REGISTRATION_ROUTES.register.path, json, async (req: Request, res: Response) => {
    const { body } = routeInput(REGISTRATION_ROUTES.register, req);
    const header = req.headers.requestid;
    const requestId = (typeof header === 'string' ? header : undefined) ?? body.requestId;
    if (!requestId) throw new ApiError(400, 'FIELD_MISSING', 'missing: requestId', { fields: ['requestId'] });
    const service = registration();
    // The app's login UI posts from its own origin: admitted as a continuation (Origin, first claim).
    await service.admit(req, res, requestId);
    try {
      const { flow } = await service.flowFor(req, requestId, { admitted: true });
      const fields: Record<string, string> = {};
      for (const key of ['username', 'email', 'given_name', 'family_name', 'middle_name', 'nickname'] as const) {
        if (body[key]) fields[key] = body[key];
      }
      for (const key of ['birthdate', 'gender', 'locale', 'zoneinfo', 'website', 'picture'] as const) {
        if (body[key]) fields[key] = body[key];
      }
      const phone = body.mobile_number ?? body.phone_number;
      if (phone) fields.phone = phone;
      const terms = registration().form(req, flow, null)?.terms ?? null;
      const started = await service.start(req, flow, {
        fields,
        password: body.password ?? '',
        passwordRepeat: body.password_echo ?? null,
        termsAccepted: terms !== null && body.terms_version === terms,
      });
      if ('continuation' in started) {
        return answerSuccess(res, {
          sub: started.user.id,
          userStatus: 'CREATED',
          email_verified: false,
          next: started.continuation.location,
        });
      }
      answerSuccess(res, {
        userStatus: 'VERIFICATION_PENDING',
        verification_medium: started.medium,
        medium_text: started.masked,
        expires_in: started.minutes * 60,
        verification_url: web.url(
          `/register/code?request_id=${encodeURIComponent(flow.id)}&registration=${encodeURIComponent(started.id)}`,
        ),
      });
    } catch (err) {
      refusal(err);
    }
  });

  router.post(REGISTRATION_ROUTES.existence.path, json, async (req: Request, res: Response) => {
    const { params, body } = routeInput(REGISTRATION_ROUTES.existence, req);
    const flow = await web.loginFlows.open(params.requestId);
    try {
      const exist = await registration().exists(req, flow, [body.email ?? '', body.username ?? '', body.mobile ?? '']);
      answerSuccess(res, { exist });
    } catch (err) {
      refusal(err);
    }
  });

  return [REGISTRATION_ROUTES.fields, REGISTRATION_ROUTES.register, REGISTRATION_ROUTES.existence];
}
