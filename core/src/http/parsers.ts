import express, { type RequestHandler } from 'express';
import { ApiError } from '../errors.js';

/**
 * Body parsers for express routes, each behind a Content-Length check. express's own parsers
 * read (and throw away) a whole oversized body before they answer 413; these answer from the
 * header at once and close the connection. Compressed bodies are refused (415) rather than
 * inflated: no client of these endpoints needs them, and a malformed or huge stream is work
 * for nothing.
 */

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

function bytes(limit: string | number): number {
  if (typeof limit === 'number') return limit;
  const m = /^(\d+)\s*(b|kb|mb)$/i.exec(limit.trim());
  if (!m) throw new Error(`not a size: ${limit}`);
  return Number(m[1]) * UNITS[m[2]!.toLowerCase()]!;
}

/** An error answered with `Connection: close`: the rest of the request is never read. */
export function closing<T extends ApiError>(err: T): T {
  err.headers = () => ({ Connection: 'close' });
  return err;
}

/** Refuses a declared Content-Length past `limit` before a byte is read. */
export function bodyLimit(limit: string | number): RequestHandler {
  const max = bytes(limit);
  return (req, _res, next) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      return next(closing(new ApiError(413, 'PAYLOAD_TOO_LARGE', 'the request body is too large')));
    }
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      return next(closing(new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'compressed request bodies are not accepted')));
    }
    next();
  };
}

/** `first`, then `second` unless the first failed: one middleware. */
function chain(first: RequestHandler, second: RequestHandler): RequestHandler {
  return (req, res, next) => first(req, res, (err?: unknown) => (err ? next(err) : second(req, res, next)));
}

/** A JSON body (express.json) of at most `limit`. */
export function jsonBody(limit: string | number): RequestHandler {
  return forType('application/json', chain(bodyLimit(limit), express.json({ limit, inflate: false })));
}

/** A form body (express.urlencoded, flat) of at most `limit` and `parameterLimit` fields. */
export function formBody(limit: string | number, parameterLimit = 100): RequestHandler {
  return forType(
    'application/x-www-form-urlencoded',
    chain(bodyLimit(limit), express.urlencoded({ extended: false, limit, parameterLimit, inflate: false })),
  );
}

/** Runs `handler` only for bodies of `type`: another parser of the route (multipart) has its own limit. */
function forType(type: string, handler: RequestHandler): RequestHandler {
  return (req, res, next) => (req.is(type) ? handler(req, res, next) : next());
}
