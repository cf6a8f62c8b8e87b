import { ApiError, defineRoute, routeInput, z, type RecordStore, type Services } from '@gatehouse-auth/core';
import { latestMessage } from './outbox-channel.js';

/** GET /latest?to=<address>, declared for /openapi.json; the handler validates with it. */
export const LATEST_MESSAGE = defineRoute({
  id: 'outboxLatestMessage',
  method: 'get',
  path: '/latest',
  tag: 'outbox (development)',
  summary: 'The newest message the outbox channel stored for one address (development and tests only)',
  query: z.object({ to: z.string().min(1).meta({ description: 'the email address or phone number' }) }),
  invalid: () => new ApiError(400, 'FIELD_MISSING', 'the "to" query parameter is required'),
  response: {
    description: 'the message, with its one-time code',
    schema: z.record(z.string(), z.unknown()),
    cache: 'no-store',
  },
  errors: ['FIELD_MISSING', { code: 'NO_MESSAGE', status: 404, description: 'no message stored for this address' }],
});

/** GET /latest?to=<address>: the newest stored message for one address, in the API envelope. */
export function outboxRouter(services: Services, records: RecordStore): ReturnType<Services['http']['createRouter']> {
  const router = services.http.createRouter();
  router.get('/latest', async (req, res, next) => {
    // The answer holds a one-time code: never cache it.
    res.set('Cache-Control', 'no-store');
    try {
      const { to } = routeInput(LATEST_MESSAGE, req).query;
      const message = await latestMessage(records, to);
      if (!message) throw new ApiError(404, 'NO_MESSAGE', 'no message stored for this address');
      res.status(200).json({ success: true, status: 200, data: message });
    } catch (err) {
      next(err);
    }
  });
  return router;
}
