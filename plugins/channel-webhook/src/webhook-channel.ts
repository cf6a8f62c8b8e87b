import { setTimeout as sleep } from 'node:timers/promises';
import type { DeliveryChannel, JsonObject, OutboundMessage, PluginApi, Services } from '@gatehouse-auth/core';
import type { EndpointOptions } from './options.js';
import { IDEMPOTENCY_HEADER, SIGNATURE_HEADER, signPayload, TIMESTAMP_HEADER } from './signature.js';
import { isRetryableStatus, parseRetryAfter, retryDelayMs } from './retry.js';

/** The JSON body POSTed to the provider. */
export interface WebhookPayload extends JsonObject {
  id: string;
  kind: OutboundMessage['kind'];
  to: string;
  text: string;
}

/** What one attempt came to. */
type Attempt =
  | { outcome: 'accepted' }
  | { outcome: 'refused'; status: number }
  | { outcome: 'retryable'; description: string; retryAfterMs: number | null };

/** Seams for tests; production uses the defaults. */
export interface WebhookDeps {
  sleep(ms: number): Promise<void>;
  random(): number;
}

const defaultDeps: WebhookDeps = { sleep: (ms) => sleep(ms), random: Math.random };

function payloadOf(id: string, message: OutboundMessage): WebhookPayload {
  return {
    id,
    kind: message.kind,
    to: message.to,
    ...(message.subject !== undefined ? { subject: message.subject } : {}),
    text: message.text,
    ...(message.data !== undefined ? { data: message.data } : {}),
  };
}

function describeFault(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && err.name === 'TimeoutError') return `timeout after ${timeoutMs} ms`;
  const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string' ? `network error ${cause.code}` : 'network error';
}

/**
 * A channel that POSTs each message as signed JSON to one provider endpoint, retrying network
 * errors, timeouts, 429 and 5xx with exponential back-off. The body holds the code, so neither it
 * nor the secret is ever logged or put in an error.
 */
export function webhookChannel(
  endpoint: EndpointOptions,
  services: Services,
  logger: PluginApi['logger'],
  deps: WebhookDeps = defaultDeps,
): DeliveryChannel {
  async function attempt(body: string, idempotencyKey: string): Promise<Attempt> {
    // Signed per attempt, so a retry after a long wait still carries a fresh timestamp.
    const timestamp = String(Math.floor(services.clock.now().getTime() / 1000));
    let response: Response;
    try {
      response = await fetch(endpoint.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'Gatehouse-Webhook',
          [TIMESTAMP_HEADER]: timestamp,
          [SIGNATURE_HEADER]: signPayload(endpoint.secret, timestamp, body),
          [IDEMPOTENCY_HEADER]: idempotencyKey,
        },
        body,
        // A redirect would carry the signed message somewhere else: treat it as a refusal.
        redirect: 'manual',
        signal: AbortSignal.timeout(endpoint.timeout_ms),
      });
    } catch (err) {
      return { outcome: 'retryable', description: describeFault(err, endpoint.timeout_ms), retryAfterMs: null };
    }
    // The response body is not used; release the connection.
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { outcome: 'accepted' };
    if (!isRetryableStatus(response.status)) return { outcome: 'refused', status: response.status };
    return {
      outcome: 'retryable',
      description: `status ${response.status}`,
      retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), services.clock.now()),
    };
  }

  return {
    id: endpoint.id,
    kinds: [...endpoint.kinds],
    async send(message) {
      if (!endpoint.kinds.includes(message.kind)) {
        throw new Error(`webhook channel "${endpoint.id}" does not send ${message.kind}`);
      }
      const id = services.crypto.randomToken(16);
      const body = JSON.stringify(payloadOf(id, message));
      const attempts = 1 + endpoint.max_retries;
      for (let n = 1; ; n++) {
        const result = await attempt(body, id);
        if (result.outcome === 'accepted') return;
        if (result.outcome === 'refused') {
          throw new Error(`webhook channel "${endpoint.id}" was refused: status ${result.status} (not retried)`);
        }
        if (n >= attempts) {
          throw new Error(
            `webhook channel "${endpoint.id}" failed after ${attempts} attempts: last ${result.description}`,
          );
        }
        const delay = retryDelayMs({
          retry: n - 1,
          backoffMs: endpoint.backoff_ms,
          retryAfterMs: result.retryAfterMs,
          random: deps.random(),
        });
        logger.warn({ channel: endpoint.id, attempt: n, failure: result.description, delayMs: delay }, 'webhook retry');
        await deps.sleep(delay);
      }
    },
  };
}
