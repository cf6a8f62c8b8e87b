import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import proxyaddr from 'proxy-addr';
import { errorReply } from './error-handler.js';
import { httpLogger } from './logging.js';

/** What an endpoint answers: a JSON body (or none), its status and extra headers. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/** An endpoint that needs no framework: the raw request and the client address (trust proxy applied). */
export type Endpoint = (req: IncomingMessage, ip: string) => Promise<Reply>;

export interface FastRoute {
  /** `*` answers every method. */
  method: string;
  /** The exact path, without query string. Other spellings (case, trailing slash) fall through. */
  path: string;
  endpoint: Endpoint;
}

/** Writes a reply in one go. */
export function sendReply(res: ServerResponse, reply: Reply): void {
  const body = reply.body === undefined ? '' : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    ...reply.headers,
    ...(body ? { 'Content-Type': 'application/json; charset=utf-8' } : {}),
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/**
 * A plain node:http listener in front of express for the hot endpoints (token, introspection,
 * revocation). Express 5's own work per request (prototype swaps, the router walk, res.json)
 * cost more than the endpoints themselves (docs/decisions/0011). A request these routes do not
 * name exactly goes to express, where the same endpoints are mounted too, so both paths answer
 * alike; the request id, access log and error mapping are the ones express uses.
 */
export function withFastRoutes(opts: {
  routes: FastRoute[];
  fallback: RequestListener;
  logger: Logger;
  /** The compiled `trust proxy` setting (express's `trust proxy fn`). */
  trustProxy: (addr: string, i: number) => boolean;
}): RequestListener {
  const table = new Map(opts.routes.map((r) => [`${r.method} ${r.path}`, r.endpoint]));
  const log = httpLogger(opts.logger);

  const run = async (endpoint: Endpoint, req: IncomingMessage, res: ServerResponse) => {
    try {
      sendReply(res, await endpoint(req, proxyaddr(req, opts.trustProxy)));
    } catch (err) {
      if (res.headersSent) {
        req.log.error({ err }, 'error after the response started');
        return void res.destroy();
      }
      const mapped = errorReply(err, req.id);
      if (mapped.fault) req.log.error({ err }, 'unhandled fault');
      sendReply(res, mapped);
    }
  };

  return (req, res) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const endpoint = table.get(`${req.method} ${path}`) ?? table.get(`* ${path}`);
    if (!endpoint) return opts.fallback(req, res);
    log(req, res, () => void run(endpoint, req, res).catch(() => res.destroy()));
  };
}
