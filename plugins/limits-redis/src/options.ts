import { z } from '@gatehouse-auth/core';

/**
 * Options of `@gatehouse-auth/limits-redis`: the core's former `limits.redis_url` and
 * `limits.redis_timeout_ms`, with the same rules and default.
 */
export const limitsRedisOptions = z.strictObject({
  /** Where the counters are: `redis://host:6379/0` (or `rediss://` for TLS). */
  url: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL'),
  /** How long a Redis command may take before the limit lets the request through. */
  timeout_ms: z.number().int().positive().default(300),
});

export type LimitsRedisOptions = z.output<typeof limitsRedisOptions>;
