import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Metrics } from './metrics.js';
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
  const counting = metrics.enabled;
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
export function observeExpress(observe: RequestObserver): RequestHandler {
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
