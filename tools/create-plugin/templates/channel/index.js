// @ts-check
/**
 * Delivery channel "__CHANNEL_ID__": POSTs each message as JSON to `url` and resolves once the
 * provider answered 2xx (anything else rejects, so the core retries and records the failure).
 */
import { definePlugin, z } from '@gatehouse-auth/core';

export default definePlugin({
  name: '__NAME__',
  apiVersion: '^1.1',
  options: z.strictObject({
    url: z.url(),
    kinds: z
      .array(z.enum(['sms', 'email', 'voice', 'push']))
      .min(1)
      .default(['sms']),
    timeout_ms: z.number().int().positive().default(5000),
  }),
  register(api, options) {
    api.channels.add({
      id: '__CHANNEL_ID__',
      kinds: options.kinds,
      async send(message) {
        const response = await fetch(options.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(message),
          signal: AbortSignal.timeout(options.timeout_ms),
        });
        await response.body?.cancel();
        if (!response.ok) throw new Error(`the provider answered ${response.status}`);
      },
    });
    // For operators (GET /health/dependencies, gatehouse_dependency_up): up when the provider
    // answers HTTP at all. Sends no message.
    api.dependency('__CHANNEL_ID__', async () => {
      const response = await fetch(options.url, { method: 'HEAD', signal: AbortSignal.timeout(options.timeout_ms) });
      await response.body?.cancel();
    });
  },
});
