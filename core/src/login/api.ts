import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../http/api-spec.js';
import { verificationError } from '../verification/errors.js';
import { OFFER_PATH } from './offer.js';

/**
 * The JSON endpoints an app's own login UI and the hosted pages' scripts call (decision 26):
 * what a login request shows, and setting a method up after a login. Starting a login without
 * a redirect is declared with its handler (GENERATE_ROUTE).
 */

const json = z.record(z.string(), z.unknown());

export const LOGIN_API = {
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
  offerSetup: defineRoute({
    id: 'offeredSetupStep',
    method: 'post',
    path: `${OFFER_PATH}/setup/:step`,
    tag: 'login',
    summary: 'Set up the method the hosted page offered after a login (its script calls this)',
    params: z.object({ step: z.string().meta({ description: 'initiation or verification' }) }),
    body: z.object({ request_id: z.unknown().optional() }).catchall(z.unknown()),
    invalid: (message, names) => verificationError('INVALID_FIELD', message, { fields: names }),
    response: { description: 'what the method answers for this step', schema: json },
    errors: [
      'INVALID_FIELD',
      'FLOW_NOT_BOUND',
      'ENROLLMENT_NOT_SUPPORTED',
      'METHOD_NOT_FOUND',
      'VERIFICATION_FAILED',
      'TOO_MANY_ATTEMPTS',
    ],
  }),
} satisfies Record<string, RouteSpec>;
