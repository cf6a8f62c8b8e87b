import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Router } from 'express';
import type { Registry } from 'prom-client';
import { BootError } from '../errors.js';
import type { AdminGuard } from '../http/admin-guard.js';
import type { Metrics, MetricsSource } from './metrics.js';
import type { Tracing } from './tracing.js';

/** Counts and traces one request; `route` names its route template once the response is done. */
export type RequestObserver = (
  req: IncomingMessage,
  res: ServerResponse,
  route: () => string,
  next: () => void,
) => void;

/** The label of a request no route answered (404s, CORS preflights): one value, whatever the path. */
export const UNMATCHED = 'unmatched';

/** The request observer, or null when neither metrics nor tracing are on (nothing to do per request). */
export function requestObserver(metrics: Metrics, tracing: Tracing): RequestObserver | null {
  const counting = metrics.registry !== null;
  if (!counting && !tracing.enabled) return null;
  return (req, res, route, next) => {
    if (counting) {
      const started = process.hrtime.bigint();
      res.once('finish', () => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        metrics.httpRequest(req.method ?? 'GET', route(), res.statusCode, seconds);
      });
    }
    tracing.request(req, res, route, next);
  };
}

/**
 * The route template of an express route (`/admin/users/:id`, after the path its router is
 * mounted at), never the path itself: ids in paths would make a series per user.
 */
export function routeTemplate(baseUrl: string | undefined, route: unknown): string {
  const path: unknown = (route as { path?: unknown } | undefined)?.path;
  if (path === undefined) return UNMATCHED;
  return (baseUrl ?? '') + (Array.isArray(path) ? path.map(String).join(',') : String(path));
}

/**
 * The observer as express middleware (the express side of buildWeb). The route is read when
 * the router assigns `req.route`: by the time the response is done, a router left through an
 * error has already put its mount path back out of `req.baseUrl`.
 */
export function observeExpress(observe: RequestObserver): express.RequestHandler {
  return (req, res, next) => {
    let route: unknown;
    let template = UNMATCHED;
    Object.defineProperty(req, 'route', {
      configurable: true,
      enumerable: true,
      get: () => route,
      set: (value: unknown) => {
        route = value;
        template = routeTemplate(req.baseUrl, value);
      },
    });
    observe(req, res, () => template, next);
  };
}

const METRICS_PATH = '/metrics';

/** Answers a scrape: the registry's text, or 500 with no detail if collecting failed. */
async function scrape(text: () => Promise<string>, contentType: string, res: ServerResponse): Promise<void> {
  let body: string;
  try {
    body = await text();
  } catch {
    res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
    return void res.end('metrics collection failed\n');
  }
  res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
  res.end(body);
}

/** `GET /metrics` on the main port, behind the admin token (`metrics.expose: admin`). */
export function metricsRoutes(source: MetricsSource, adminGuard: Pick<AdminGuard, 'require'>): Router {
  const router = express.Router();
  router.get(METRICS_PATH, adminGuard.require, (_req, res) => scrape(() => source.text(), source.contentType, res));
  return router;
}

/** This server's registry as a scrape source. */
export function registrySource(registry: Registry): MetricsSource {
  return { text: () => registry.metrics(), contentType: registry.contentType };
}

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

/**
 * The metrics' own listener (`metrics.expose: listener`): `GET /metrics` and nothing else, on a
 * host and port apart from the public ones (loopback by default).
 */
export async function listenForMetrics(
  where: { host: string; port: number },
  source: MetricsSource,
): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== METRICS_PATH) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      return void res.end('not found\n');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
      return void res.end('method not allowed\n');
    }
    void scrape(() => source.text(), source.contentType, res);
  });
  await new Promise<void>((resolve, reject) => {
    const refused = (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new BootError(
              'CONFIG_INVALID',
              `metrics.port: ${where.host}:${where.port} is already in use; stop what listens there or set another metrics.port`,
            )
          : err,
      );
    server.once('error', refused);
    server.listen(where.port, where.host, () => {
      server.off('error', refused);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
