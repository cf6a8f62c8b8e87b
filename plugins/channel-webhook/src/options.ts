import { z } from '@gatehouse-auth/core';

const MESSAGE_KINDS = ['sms', 'email', 'voice', 'push'] as const;

const httpUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}, 'must be an absolute http(s) URL');

/** One provider endpoint; each becomes a delivery channel with its `id`. */
export const endpointOptions = z.strictObject({
  id: z.string().min(1),
  kinds: z.array(z.enum(MESSAGE_KINDS)).min(1),
  url: httpUrl,
  /** HMAC key shared with the provider; at least 32 characters. */
  secret: z.string().min(32, 'must be at least 32 characters'),
  /** Per attempt, including the wait for the response headers. */
  timeout_ms: z.number().int().positive().default(5000),
  /** Further attempts after the first one fails with a network error, a timeout, 429 or 5xx. */
  max_retries: z.number().int().min(0).max(10).default(3),
  /** Wait before the first retry; doubles for each further one (plus up to 20% jitter). */
  backoff_ms: z.number().int().min(0).default(200),
});

/** Options of `@gatehouse-auth/channel-webhook`. */
export const webhookOptions = z
  .strictObject({ endpoints: z.array(endpointOptions).min(1) })
  .superRefine((options, ctx) => {
    const seen = new Set<string>();
    options.endpoints.forEach((endpoint, index) => {
      if (seen.has(endpoint.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['endpoints', index, 'id'],
          message: `duplicate endpoint id "${endpoint.id}"`,
        });
      }
      seen.add(endpoint.id);
    });
  });

export type EndpointOptions = z.output<typeof endpointOptions>;
export type WebhookOptions = z.output<typeof webhookOptions>;
