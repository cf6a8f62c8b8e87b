import type { IncomingMessage } from 'node:http';
import { mediaType, readBody } from '../http/body.js';
import { OAuthError } from './errors.js';

const FORM_TYPE = 'application/x-www-form-urlencoded';

/**
 * Reads an `application/x-www-form-urlencoded` body strictly (RFC 6749 §3.2): a repeated
 * parameter is `invalid_request`, an empty one counts as absent.
 */
export async function readForm(req: IncomingMessage): Promise<Record<string, string>> {
  if (mediaType(req) !== FORM_TYPE) {
    req.resume();
    throw new OAuthError('invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    req.resume();
    throw new OAuthError('invalid_request', 'compressed request bodies are not accepted');
  }
  return parseStrict(await readBody(req, FORM_LIMIT, tooLarge));
}

const FORM_LIMIT = 64 * 1024;
const tooLarge = () => new OAuthError('invalid_request', 'the request body is too large', 413);

export function parseStrict(text: string): Record<string, string> {
  const form = new StrictForm();
  // The WHATWG form parser's steps (URLSearchParams), without its object and iterator per body.
  for (let start = 0; start < text.length;) {
    let end = text.indexOf('&', start);
    if (end < 0) end = text.length;
    if (end > start) {
      const eq = text.indexOf('=', start);
      const named = eq >= 0 && eq < end;
      const key = formDecode(text.slice(start, named ? eq : end));
      const value = named ? formDecode(text.slice(eq + 1, end)) : '';
      // A malformed escape: URLSearchParams decides what it stands for.
      if (key === null || value === null) {
        const fallback = new StrictForm();
        for (const [k, v] of new URLSearchParams(text)) fallback.add(k, v);
        return fallback.params;
      }
      form.add(key, value);
    }
    start = end + 1;
  }
  return form.params;
}

/** The parameters read so far: a repeated one is `invalid_request`, an empty one counts as absent. */
class StrictForm {
  readonly params: Record<string, string> = {};
  private readonly seen = new Set<string>();

  add(key: string, value: string): void {
    if (this.seen.has(key)) throw new OAuthError('invalid_request', `parameter ${key} appears more than once`);
    this.seen.add(key);
    if (value !== '') this.params[key] = value;
  }
}

/** `+` and percent escapes decoded, or null where decodeURIComponent refuses (invalid UTF-8). */
function formDecode(part: string): string | null {
  if (!part.includes('%') && !part.includes('+')) return part;
  try {
    return decodeURIComponent(part.replaceAll('+', ' '));
  } catch {
    return null;
  }
}

/** The same rules for a query string (the authorization endpoint). */
export function parseStrictQuery(url: string): Record<string, string> {
  const q = url.indexOf('?');
  return parseStrict(q < 0 ? '' : url.slice(q + 1));
}
