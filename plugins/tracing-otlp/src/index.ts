/**
 * @gatehouse-auth/tracing-otlp — exports the core's spans (requests, grants, verifications, FDS
 * rules, delivery, SQL) over OTLP/HTTP (JSON) by providing the `tracing` service (decision 37).
 * The core chooses every span name and attribute; this plugin only exports them.
 */
import { CORE_VERSION, definePlugin } from '@gatehouse-auth/core';
import { tracingOptions, type TracingOptions } from './options.js';
import { OtlpTracing } from './otlp-tracing.js';

export { tracingOptions, type TracingOptions } from './options.js';
export { OtlpTracing } from './otlp-tracing.js';

export default definePlugin<TracingOptions>({
  name: '@gatehouse-auth/tracing-otlp',
  apiVersion: '^1.2',
  provides: ['tracing'],
  options: tracingOptions,
  register(api, options) {
    // The server's version, as before the move: the traces describe the server, not this plugin.
    api.provide('tracing', new OtlpTracing(options, CORE_VERSION, api.logger));
  },
});
