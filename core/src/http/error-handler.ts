import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { ApiError, apiErrorBody, isProtocolError, type ProtocolError } from '../errors.js';
import { isStoreUnavailable } from '../storage/drivers.js';
import { NO_STORE } from './envelope.js';

/**
 * Body-parser errors are the client's: map them to stable codes. (Multipart errors are mapped
 * where the body is parsed: multipart-errors.ts.)
 */
function fromFrameworkError(err: unknown): ProtocolError | null {
  const e = err as { type?: string; status?: number; message?: string };
  if (e?.type === 'entity.parse.failed')
    return new ApiError(400, 'INVALID_REQUEST_BODY', 'the request body is not valid');
  if (e?.type === 'entity.too.large') {
    return new ApiError(413, 'PAYLOAD_TOO_LARGE', 'the request body is too large');
  }
  if (e?.type === 'charset.unsupported' || e?.type === 'encoding.unsupported') {
    return new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'unsupported body encoding');
  }
  // The router's "Failed to decode param" for a malformed %-escape in the path.
  if (err instanceof URIError && e.status === 400) {
    return new ApiError(400, 'INVALID_REQUEST', 'the request path could not be decoded');
  }
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500 && e.type) {
    return new ApiError(e.status, 'INVALID_REQUEST', 'the request could not be read');
  }
  return null;
}

export const notFound: RequestHandler = (_req, _res, next) => {
  next(new ApiError(404, 'NOT_FOUND', 'no such endpoint'));
};

/** What an error answers: its status, headers and body, and whether it is a fault (to be logged). */
export interface ErrorReply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  fault: boolean;
  /** The database could not be reached or did not answer: logged once in a while, not per request. */
  unavailable?: boolean;
}

/** The body format of an endpoint's errors: the Gatehouse API envelope, or RFC 6749 §5.2's. */
export type ErrorStyle = 'api' | 'oauth';

/** How long a client should wait before retrying while the database is unavailable. */
const RETRY_AFTER_SECONDS = '5';
const UNAVAILABLE = 'the database is unavailable; retry shortly';

/**
 * The one mapping of errors to answers. Protocol errors answer with their status, code and body
 * format; a database that cannot be reached is 503 with `Retry-After` (STORE_UNAVAILABLE, or
 * `temporarily_unavailable` at the OAuth endpoints); anything else is a fault: a bare 500 with
 * the request id (`server_error` at the OAuth endpoints).
 */
export function errorReply(err: unknown, requestId: string, style: ErrorStyle = 'api'): ErrorReply {
  const known = isProtocolError(err) ? err : fromFrameworkError(err);
  // Never cached: an error may answer a request that carried a secret.
  if (known)
    return {
      status: known.status,
      headers: { ...NO_STORE, ...known.headers() },
      body: known.body(requestId),
      fault: false,
    };
  const oauth = style === 'oauth';
  if (isStoreUnavailable(err)) {
    return {
      status: 503,
      headers: { ...NO_STORE, 'Retry-After': RETRY_AFTER_SECONDS },
      body: oauth
        ? { error: 'temporarily_unavailable', error_description: UNAVAILABLE }
        : apiErrorBody(503, 'STORE_UNAVAILABLE', UNAVAILABLE, requestId),
      fault: false,
      unavailable: true,
    };
  }
  return {
    status: 500,
    headers: { ...NO_STORE },
    body: oauth
      ? { error: 'server_error', error_description: 'internal server error' }
      : apiErrorBody(500, 'INTERNAL_ERROR', 'internal server error', requestId),
    fault: true,
  };
}

const UNAVAILABLE_LOG_EVERY_MS = 10_000;

/** Logs a reply (see `replyLogger`). */
export type ReplyLogger = (reply: ErrorReply, err: unknown, log: Logger | undefined) => void;

/**
 * Logs replies: a fault with its stack under the request id; a database outage as one warning
 * every 10 s with how many requests it answered 503 since (not a stack per request). One per
 * server, so two servers in a process (tests, the demo) each report their own outage.
 */
export function replyLogger(): ReplyLogger {
  let unavailableSince = -Infinity;
  let unavailableUnlogged = 0;
  return (reply, err, log) => {
    if (reply.fault) log?.error({ err }, 'unhandled fault');
    if (!reply.unavailable) return;
    unavailableUnlogged++;
    const now = performance.now();
    if (now - unavailableSince < UNAVAILABLE_LOG_EVERY_MS) return;
    log?.warn(
      { reason: (err as Error)?.message, answered503: unavailableUnlogged },
      'database unavailable: answering 503 with Retry-After',
    );
    unavailableSince = now;
    unavailableUnlogged = 0;
  };
}

/** The express error handler: `errorReply`, logged by the server's `ReplyLogger`. */
export function errorHandler(logReply: ReplyLogger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) {
      req.log?.error({ err }, 'error after the response started');
      res.destroy();
      return;
    }
    const style = (res.locals.errorStyle as ErrorStyle | undefined) ?? 'api';
    const reply = errorReply(err, String(req.id ?? ''), style);
    logReply(reply, err, req.log);
    res.status(reply.status).set(reply.headers).json(reply.body);
  };
}
