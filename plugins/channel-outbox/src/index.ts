/**
 * @gatehouse-auth/channel-outbox — a delivery channel that keeps messages in the database instead of
 * sending them, for development and tests. Optionally exposes GET /dev/outbox/latest?to=...
 */
import { definePlugin } from '@gatehouse-auth/core';
import { outboxChannel } from './outbox-channel.js';
import { outboxOptions, type OutboxOptions } from './options.js';
import { LATEST_MESSAGE, outboxRouter } from './outbox-route.js';

export { outboxChannel, outboxPrefix, latestMessage, type StoredMessage } from './outbox-channel.js';
export { outboxOptions, type OutboxOptions } from './options.js';

/** Where the development route is mounted. */
export const OUTBOX_ROUTE_PATH = '/dev/outbox';

export default definePlugin<OutboxOptions>({
  name: '@gatehouse-auth/channel-outbox',
  apiVersion: '^1',
  options: outboxOptions,
  register(api, options) {
    api.channels.add(
      outboxChannel({
        id: options.id,
        kinds: options.kinds,
        ttlSeconds: options.ttl_seconds,
        records: api.records,
        services: api.services,
      }),
    );
    if (options.expose_route && process.env.NODE_ENV === 'production') {
      throw new Error('expose_route shows one-time codes to anyone; it is refused when NODE_ENV=production');
    }
    if (options.expose_route) {
      api.logger.warn(
        { path: `${OUTBOX_ROUTE_PATH}/latest` },
        'outbox route exposed: anyone who can reach it reads one-time codes; never enable it in production',
      );
      api.routes.add({
        path: OUTBOX_ROUTE_PATH,
        router: outboxRouter(api.services, api.records),
        operations: [LATEST_MESSAGE],
      });
    }
  },
});
