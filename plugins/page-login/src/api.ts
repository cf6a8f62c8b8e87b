import { defineRoute, verificationError, z, type RouteSpec } from '@gatehouse-auth/core';

/** The page after a login that offers a method to set up (under the plugin's `/login`). */
export const OFFER_PATH = '/offer';

/** The JSON endpoint the hosted pages' scripts call (decision 26): setting a method up after a login. */

const json = z.record(z.string(), z.unknown());

export const LOGIN_API = {
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
