import { z } from '@gatehouse-auth/core';

/**
 * Options of `@gatehouse-auth/metrics-prometheus`: the keys of the core's former `metrics:`
 * section but `enabled` (listing the plugin turns metrics on). On a listener of their own, on
 * loopback by default, never on the public port unless asked to be (`expose: admin`), and there
 * only behind the admin token (decision 25).
 */
export const metricsOptions = z.strictObject({
  /** `listener`: GET /metrics on `host`:`port`; `admin`: GET /metrics on the main port, admin token required. */
  expose: z.enum(['listener', 'admin']).default('listener'),
  host: z.string().min(1).default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(9464),
  /** The Node process's own metrics (CPU, memory, event loop lag, GC, handles). */
  default_metrics: z.boolean().default(true),
});

export type MetricsOptions = z.output<typeof metricsOptions>;
