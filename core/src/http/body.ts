import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors.js';

/**
 * The error for a body past the limit, answered with `Connection: close`: the rest of the body
 * is never read, the connection ends with the answer.
 */
function refused(tooLarge: () => Error): Error {
  const err = tooLarge() as Error & { headers?: () => Record<string, string> };
  const own = typeof err.headers === 'function' ? err.headers.bind(err) : () => ({});
  err.headers = () => ({ ...own(), Connection: 'close' });
  return err;
}

/**
 * Reads a small UTF-8 body; `tooLarge` is thrown past `limit` bytes. A declared
 * Content-Length past the limit is refused before a byte is read.
 */
export function readBody(req: IncomingMessage, limit: number, tooLarge: () => Error): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(refused(tooLarge));
  return new Promise((resolve, reject) => {
    // A small body comes in one chunk: kept as it is, an array only for a second one.
    let first: Buffer | null = null;
    let rest: Buffer[] | null = null;
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.pause();
        reject(refused(tooLarge));
        return;
      }
      if (!first) first = chunk;
      else (rest ??= [first]).push(chunk);
    });
    // `on`, not `once`: each fires once anyway, and `once` wraps every listener in an object.
    req.on('end', () => resolve(rest ? Buffer.concat(rest).toString('utf8') : (first?.toString('utf8') ?? '')));
    // The client went away mid-body: its mistake (nobody reads the answer), not a fault.
    req.on('error', () => reject(new ApiError(400, 'INVALID_REQUEST', 'the request body was cut off')));
  });
}

/** The media type of a request, lower case, without parameters. */
export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * Whether `readJson` can take this request as express.json would: `application/json`, UTF-8,
 * not compressed. Anything else goes to express, whose body parser answers it.
 */
export function isPlainJson(req: IncomingMessage): boolean {
  if (mediaType(req) !== 'application/json') return false;
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1];
  return charset === undefined || /^utf-?8$/i.test(charset);
}

const JSON_LIMIT = 100 * 1024;

/**
 * A JSON body with express.json's rules (strict: an object or array; empty → `{}`), and the
 * error codes its errors map to: 400 INVALID_REQUEST_BODY, 413 PAYLOAD_TOO_LARGE.
 */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(
    req,
    JSON_LIMIT,
    () => new ApiError(413, 'PAYLOAD_TOO_LARGE', 'the request body is too large'),
  );
  if (text.length === 0) return {};
  // trimStart skips more than JSON's four whitespace characters; JSON.parse refuses the rest.
  const first = text.trimStart()[0];
  let body: unknown;
  try {
    if (first !== '{' && first !== '[') throw new Error('not an object or array');
    body = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'INVALID_REQUEST_BODY', 'the request body is not valid');
  }
  return body;
}
