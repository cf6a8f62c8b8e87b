import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { isProtocolError, type PluginApi, type Tracing } from '@gatehouse-auth/core';
import type { TracingOptions } from './options.js';

type Logger = PluginApi['logger'];

const headerGetter: TextMapGetter<IncomingMessage['headers']> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => headers[key],
};

/** What an error says about itself in a span: its code or class, never its message (it may echo input). */
function errorLabel(err: unknown): string {
  if (isProtocolError(err)) return err.code;
  return err instanceof Error ? err.name : 'Error';
}

/** A collector that does not answer holds up a shutdown this long at most. */
const SHUTDOWN_WAIT_MS = 3000;

/** How often a failing exporter is logged: once a minute is enough to be seen, not a flood. */
const EXPORT_WARNING_INTERVAL_MS = 60_000;

/** The exporter, with its failures logged (OpenTelemetry's own diagnostics go nowhere by default). */
function loggedExporter(exporter: SpanExporter, logger: Logger, endpoint: string): SpanExporter {
  let warnedAt = -Infinity;
  // Without a user:password or query an endpoint URL might carry.
  const url = new URL(endpoint);
  const where = url.origin + url.pathname;
  return {
    export: (spans, done) =>
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS && Date.now() - warnedAt >= EXPORT_WARNING_INTERVAL_MS) {
          warnedAt = Date.now();
          logger.warn(
            { err: result.error, endpoint: where, spans: spans.length },
            'trace export failed; spans dropped',
          );
        }
        done(result);
      }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/**
 * Traces exported over OTLP/HTTP (JSON). The current span lives in an AsyncLocalStorage of this
 * server's own: nothing is registered globally, so several servers in one process (tests) and a
 * host application's own OpenTelemetry setup stay apart.
 */
export class OtlpTracing implements Tracing {
  readonly enabled = true;
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly current = new AsyncLocalStorage<Context>();
  private readonly propagator = new W3CTraceContextPropagator();

  constructor(
    private readonly config: TracingOptions,
    version: string,
    logger: Logger,
  ) {
    const exporter = new OTLPTraceExporter({ url: config.otlp_endpoint, headers: config.headers });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.service_name, 'service.version': version }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sample_ratio) }),
      spanProcessors: [new BatchSpanProcessor(loggedExporter(exporter, logger, config.otlp_endpoint))],
    });
    this.tracer = this.provider.getTracer('gatehouse', version);
  }

  inTrace(): boolean {
    return this.current.getStore() !== undefined;
  }

  async span<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
    const parent = this.current.getStore() ?? ROOT_CONTEXT;
    const span = this.tracer.startSpan(name, { attributes }, parent);
    try {
      return await this.current.run(trace.setSpan(parent, span), () => work(span));
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorLabel(err) });
      throw err;
    } finally {
      span.end();
    }
  }

  request(req: IncomingMessage, res: ServerResponse, route: () => string, next: () => void): void {
    const parent = this.config.accept_traceparent
      ? this.propagator.extract(ROOT_CONTEXT, req.headers, headerGetter)
      : ROOT_CONTEXT;
    const method = req.method ?? 'GET';
    const span = this.tracer.startSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
      parent,
    );
    res.once('close', () => {
      const template = route();
      span.updateName(`${method} ${template}`);
      span.setAttributes({ 'http.route': template, 'http.response.status_code': res.statusCode });
      if (!res.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR, message: 'aborted' });
      else if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    this.current.run(trace.setSpan(parent, span), next);
  }

  // A failed export was logged (loggedExporter); it must not fail a shutdown.
  flush(): Promise<void> {
    return this.provider.forceFlush().catch(() => undefined);
  }

  /** Exports what is left, waiting at most SHUTDOWN_WAIT_MS for a collector that does not answer. */
  async shutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS)));
    await Promise.race([this.provider.shutdown().catch(() => undefined), waited]);
    clearTimeout(timer);
  }
}
