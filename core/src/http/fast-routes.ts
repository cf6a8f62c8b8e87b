import type { FastJsonRoute } from '@gatehouse-auth/plugin-api';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { errorReply, replyLogger, type ErrorStyle, type ReplyLogger } from './error-handler.js';
import { success, type Reply } from './envelope.js';
import { isPlainJson, readJson } from './body.js';

export type { Reply } from './envelope.js';
import { httpLogger } from './logging.js';
import { clientAddress } from './trust-proxy.js';
import type { RequestObserver } from '../observability/http.js';

/**
 * An endpoint that needs no framework: the raw request, the client address (trust proxy
 * applied) and the path's `:name` parameters.
 */
export type Endpoint = (req: IncomingMessage, ip: string, params: Record<string, string>) => Promise<Reply>;

export interface FastRoute {
  /** `*` answers every method. */
  method: string;
  /**
   * The exact path, without query string; a segment `:name` matches one non-empty segment.
   * Other spellings (case, trailing slash) fall through.
   */
  path: string;
  /** Requests this returns false for (say, another content type) go to express instead. */
  accepts?: (req: IncomingMessage) => boolean;
  endpoint: Endpoint;
  /** How its failures are written (default: the Gatehouse API envelope). */
  errorStyle?: ErrorStyle;
}

/**
 * A plugin's JSON call (`RouteContribution.fast`) at its full path: the body read as express.json
 * would read it, the answer in the API envelope.
 */
export function jsonFastRoute(path: string, route: FastJsonRoute): FastRoute {
  return {
    method: route.method,
    path,
    accepts: isPlainJson,
    endpoint: async (req, ip, params) => success(await route.handle(req, params, await readJson(req), ip)),
  };
}

interface PatternRoute {
  method: string;
  pattern: RegExp;
  names: string[];
  route: FastRoute;
}

/** `/a/:x/b` → a RegExp with one capture per parameter. */
function compile(route: FastRoute): PatternRoute {
  const names: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(segment.slice(1));
      return '([^/]+)';
    })
    .join('/');
  return { method: route.method, pattern: new RegExp(`^${source}$`), names, route };
}

/** The route for a request and its decoded parameters, or null (express takes it). */
function matcher(routes: FastRoute[]) {
  const exact = new Map(routes.filter((r) => !r.path.includes('/:')).map((r) => [`${r.method} ${r.path}`, r]));
  const patterned = routes.filter((r) => r.path.includes('/:')).map(compile);
  const NO_PARAMS: Record<string, string> = {};
  return (method: string, path: string): { route: FastRoute; params: Record<string, string> } | null => {
    const route = exact.get(`${method} ${path}`) ?? exact.get(`* ${path}`);
    if (route) return { route, params: NO_PARAMS };
    for (const p of patterned) {
      if (p.method !== method && p.method !== '*') continue;
      const m = p.pattern.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      try {
        p.names.forEach((name, i) => (params[name] = decodeURIComponent(m[i + 1]!)));
      } catch {
        return null; // a malformed escape: express answers it
      }
      return { route: p.route, params };
    }
    return null;
  };
}

/**
 * Writes a reply in one go. Header by header: the response already has one (X-Request-Id), so
 * node would copy an object given to writeHead header by header anyway.
 */
export function sendReply(res: ServerResponse, reply: Reply): void {
  const body = reply.body === undefined ? '' : JSON.stringify(reply.body);
  if (reply.headers) for (const name of Object.keys(reply.headers)) res.setHeader(name, reply.headers[name]!);
  if (body) res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.writeHead(reply.status);
  res.end(body);
}

/**
 * A plain node:http listener in front of express for the hot endpoints (token, introspection,
 * revocation; verification initiation and verification with JSON). Express 5's own work per
 * request (prototype swaps, the router walk, res.json) cost more than the endpoints themselves
 * (docs/decisions/0011). A request these routes do not match, or do not accept, goes to express,
 * where the same endpoints are mounted too, so both paths answer alike; the request id, access
 * log and error mapping are the ones express uses.
 */
export function withFastRoutes(opts: {
  routes: FastRoute[];
  fallback: RequestListener;
  /** Requests that always take the fallback (cross-origin calls, for CORS). */
  bypass?: (req: IncomingMessage) => boolean;
  logger: Logger;
  /** The server's error-reply logger, shared with the express error handler (default: its own). */
  logReply?: ReplyLogger;
  /** Counts and traces each request (metrics, tracing); null when neither is on. */
  observe?: RequestObserver | null;
  /** The compiled `trust proxy` setting (express's `trust proxy fn`). */
  trustProxy: (addr: string, i: number) => boolean;
}): RequestListener {
  const match = matcher(opts.routes);
  const log = httpLogger(opts.logger);
  const logReply = opts.logReply ?? replyLogger();

  const run = async (route: FastRoute, params: Record<string, string>, req: IncomingMessage, res: ServerResponse) => {
    try {
      sendReply(res, await route.endpoint(req, clientAddress(req, opts.trustProxy), params));
    } catch (err) {
      if (res.headersSent) {
        req.log.error({ err }, 'error after the response started');
        return void res.destroy();
      }
      const mapped = errorReply(err, req.id, route.errorStyle);
      logReply(mapped, err, req.log);
      sendReply(res, mapped);
    }
  };

  return (req, res) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const found = match(req.method ?? '', path);
    if (!found || (found.route.accepts && !found.route.accepts(req)) || opts.bypass?.(req))
      return opts.fallback(req, res);
    const handle = () => void run(found.route, found.params, req, res).catch(() => res.destroy());
    const { observe } = opts;
    log(req, res, observe ? () => observe(req, res, () => found.route.path, handle) : handle);
  };
}
