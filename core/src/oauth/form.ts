import type { IncomingMessage } from 'node:http';
import { OAuthError } from './errors.js';

const FORM_TYPE = 'application/x-www-form-urlencoded';

/**
 * Reads an `application/x-www-form-urlencoded` body strictly (RFC 6749 §3.2): a repeated
 * parameter is `invalid_request`, an empty one counts as absent.
 */
export async function readForm(req: IncomingMessage): Promise<Record<string, string>> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== FORM_TYPE) {
    req.resume();
    throw new OAuthError('invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  return parseStrict(await readBody(req, FORM_LIMIT));
}

const FORM_LIMIT = 64 * 1024;

/** Reads a small UTF-8 body (the token endpoint's hot path: body-parser costs more than this). */
function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(new OAuthError('invalid_request', 'the request body is too large', 413));
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

export function parseStrict(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [key, value] of new URLSearchParams(text)) {
    if (seen.has(key)) throw new OAuthError('invalid_request', `parameter ${key} appears more than once`);
    seen.add(key);
    if (value !== '') out[key] = value;
  }
  return out;
}

/** The same rules for a query string (the authorization endpoint). */
export function parseStrictQuery(url: string): Record<string, string> {
  const q = url.indexOf('?');
  return parseStrict(q < 0 ? '' : url.slice(q + 1));
}
