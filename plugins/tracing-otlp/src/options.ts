import { absoluteUrl, z } from '@gatehouse-auth/core';

/** Options of `@gatehouse-auth/tracing-otlp`: the keys of the core's former `tracing:` section. */
export const tracingOptions = z.strictObject({
  /** OTLP/HTTP (JSON) traces URL, e.g. http://otel-collector:4318/v1/traces. */
  otlp_endpoint: absoluteUrl(),
  /** Headers sent with every export (a vendor's API key from ${ENV}). */
  headers: z.record(z.string(), z.string()).default({}),
  service_name: z.string().min(1).default('gatehouse'),
  /** The share of requests traced (their spans all kept or all dropped). */
  sample_ratio: z.number().min(0).max(1).default(1),
  /**
   * Continue a trace an incoming W3C `traceparent` header names. Off by default: on a public
   * port anyone could choose trace ids and force sampling; turn it on behind a trusted proxy.
   */
  accept_traceparent: z.boolean().default(false),
});

export type TracingOptions = z.output<typeof tracingOptions>;
