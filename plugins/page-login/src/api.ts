import { defineRoute, verificationError, z, type RouteSpec } from '@gatehouse-auth/core';

/** The page after a login that offers a method to set up (under the plugin's `/login`). */
export const OFFER_PATH = '/offer';

/**
 * Where the page's form ends a stage (under `/login`): the core's continuation, then the offer
 * page instead of the app when the login completed and the core has a method to offer.
 */
export const FINISH_PATH = '/finish';

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
  enrollSetup: defineRoute({
    id: 'loginEnrollSetupStep',
    method: 'post',
    path: '/enroll/setup/:step',
    tag: 'login',
    summary:
      'Set a method up during a login by its browser ceremony (a passkey): enroll_on_login, or a second factor an admin required (the page script calls this)',
    params: z.object({ step: z.string().meta({ description: 'initiation or verification' }) }),
    body: z
      .object({
        request_id: z.unknown().optional(),
        method: z.unknown().optional(),
        mode: z.unknown().optional().meta({ description: 'stage (default) or required' }),
      })
      .catchall(z.unknown()),
    invalid: (message, names) => verificationError('INVALID_FIELD', message, { fields: names }),
    response: {
      description: 'what the method answers for this step, and `location`: where the browser goes once it is done',
      schema: z.object({ success: z.literal(true), status: z.number(), data: json, location: z.string() }),
    },
    errors: [
      'INVALID_FIELD',
      'FLOW_NOT_BOUND',
      'SETUP_NOT_ALLOWED',
      'METHOD_NOT_ENABLED',
      'ENROLLMENT_NOT_SUPPORTED',
      { code: 'ENROLLMENT_NOT_STARTED', status: 400, description: 'the setup was not started by this login' },
      'WRONG_FLOW_STAGE',
      'METHOD_NOT_FOUND',
      'VERIFICATION_FAILED',
      'TOO_MANY_ATTEMPTS',
    ],
  }),
} satisfies Record<string, RouteSpec>;
