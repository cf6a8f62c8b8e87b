import type { IncomingMessage, ServerResponse } from 'node:http';
import { INVALID_SPAN_CONTEXT, trace, type Attributes, type Span } from '@opentelemetry/api';

/**
 * Spans around the work worth timing: requests, grants, verifications, FDS rules, database
 * calls. Attributes name what ran (route, grant type, method, rule, SQL text with its
 * `:placeholders`), never a value a caller sent: no codes, tokens, passwords or identifiers.
 */
export interface Tracing {
  readonly enabled: boolean;
  /** Whether a span is current here (a request's, or one `span` opened). */
  inTrace(): boolean;
  /** Runs `work` in a span, a child of the current one; a throw marks it an error (by code only). */
  span<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T>;
  /**
   * The server span of a request: `next` runs inside it, and it ends when the response is
   * done, named after the route template `route` gives then.
   */
  request(req: IncomingMessage, res: ServerResponse, route: () => string, next: () => void): void;
  /** Exports the spans ended so far (tests; shutdown). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

const NON_RECORDING = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** No exporter loaded: no provider, no context, no span objects; `work` runs as it is. */
export const NO_TRACING: Tracing = {
  enabled: false,
  inTrace: () => false,
  span: (_name, _attributes, work) => work(NON_RECORDING),
  request: (_req, _res, _route, next) => next(),
  flush: async () => undefined,
  shutdown: async () => undefined,
};

/**
 * The tracing the core's parts hold: `NO_TRACING` until a plugin provides the `tracing` service
 * (`@gatehouse-auth/tracing-otlp`), then that one. The database driver and the services made
 * before the plugins register hold this, so each call asks whichever is current.
 */
export function tracingSlot(): Tracing & { use(provided: Tracing): void } {
  let current = NO_TRACING;
  return {
    get enabled() {
      return current.enabled;
    },
    inTrace: () => current.inTrace(),
    span: (name, attributes, work) => current.span(name, attributes, work),
    request: (req, res, route, next) => current.request(req, res, route, next),
    flush: () => current.flush(),
    shutdown: () => current.shutdown(),
    use: (provided) => void (current = provided),
  };
}
