import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, apiErrorBody, isProtocolError, type ProtocolError } from '../errors.js';
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
}

/**
 * The one mapping of errors to answers. Protocol errors answer with their status, code and body
 * format; anything else is a fault: answered as a bare 500 with the request id.
 */
export function errorReply(err: unknown, requestId: string): ErrorReply {
  const known = isProtocolError(err) ? err : fromFrameworkError(err);
  // Never cached: an error may answer a request that carried a secret.
  if (known)
    return {
      status: known.status,
      headers: { ...NO_STORE, ...known.headers() },
      body: known.body(requestId),
      fault: false,
    };
  return {
    status: 500,
    headers: { ...NO_STORE },
    body: apiErrorBody(500, 'INTERNAL_ERROR', 'internal server error', requestId),
    fault: true,
  };
}

/** The express error handler: `errorReply`, with faults logged under the request id. */
export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  if (res.headersSent) {
    req.log?.error({ err }, 'error after the response started');
    res.destroy();
    return;
  }
  const reply = errorReply(err, String(req.id ?? ''));
  if (reply.fault) req.log?.error({ err }, 'unhandled fault');
  res.status(reply.status).set(reply.headers).json(reply.body);
};
