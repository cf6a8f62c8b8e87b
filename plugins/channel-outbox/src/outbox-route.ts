import { ApiError, type RecordStore, type Services } from '@gatehouse-auth/core';
import { latestMessage } from './outbox-channel.js';

/** GET /latest?to=<address>: the newest stored message for one address, in the API envelope. */
export function outboxRouter(services: Services, records: RecordStore): ReturnType<Services['http']['createRouter']> {
  const router = services.http.createRouter();
  router.get('/latest', async (req, res, next) => {
    // The answer holds a one-time code: never cache it.
    res.set('Cache-Control', 'no-store');
    try {
      const to = typeof req.query.to === 'string' ? req.query.to : '';
      if (to === '') throw new ApiError(400, 'FIELD_MISSING', 'the "to" query parameter is required');
      const message = await latestMessage(records, to);
      if (!message) throw new ApiError(404, 'NO_MESSAGE', 'no message stored for this address');
      res.status(200).json({ success: true, status: 200, data: message });
    } catch (err) {
      next(err);
    }
  });
  return router;
}
