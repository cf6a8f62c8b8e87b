/**
 * @gatehouse-auth/channel-webhook — delivers messages (SMS, voice/IVR, push, email) by POSTing signed
 * JSON to provider endpoints. One channel is registered per configured endpoint.
 */
import { definePlugin } from '@gatehouse-auth/core';
import { webhookOptions, type WebhookOptions } from './options.js';
import { webhookChannel } from './webhook-channel.js';
import { reachable } from './reachable.js';

export { verifySignature, signPayload, SIGNATURE_HEADER, TIMESTAMP_HEADER, IDEMPOTENCY_HEADER } from './signature.js';
export { webhookOptions, endpointOptions, type WebhookOptions, type EndpointOptions } from './options.js';
export { webhookChannel, type WebhookPayload, type WebhookDeps } from './webhook-channel.js';
export { retryDelayMs, parseRetryAfter, isRetryableStatus, MAX_RETRY_AFTER_MS } from './retry.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export default definePlugin<WebhookOptions>({
  name: '@gatehouse-auth/channel-webhook',
  apiVersion: '^1.1',
  options: webhookOptions,
  register(api, options) {
    for (const endpoint of options.endpoints) {
      const url = new URL(endpoint.url);
      if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
        api.logger.warn(
          { channel: endpoint.id, host: url.host },
          'webhook endpoint uses plain http: codes travel unencrypted',
        );
      }
      api.channels.add(webhookChannel(endpoint, api.services, api.logger));
      api.dependency(`webhook:${endpoint.id}`, () => reachable(url, endpoint.timeout_ms));
    }
  },
});
