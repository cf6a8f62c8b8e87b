import type { Brand } from './login.js';
import type { Response } from 'express';

const POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
];

/**
 * The Content-Security-Policy of the login pages. `formTargets` widens form-action: browsers
 * apply form-action to every redirect that follows a form POST, so the last stage's 303 back
 * to the client needs the client's redirect origins listed. `imageSource` is the origin of a
 * brand's logo URL, the only addition img-src ever gets.
 */
export function contentSecurityPolicy(formTargets: string[] = [], imageSource: string | null = null): string {
  return POLICY.map((d) => {
    if (d.startsWith('form-action ') && formTargets.length) return `${d} ${formTargets.join(' ')}`;
    if (d.startsWith('img-src ') && imageSource && SAFE_SOURCE.test(imageSource)) return `${d} ${imageSource}`;
    return d;
  }).join('; ');
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
const SAFE_SOURCE = /^[a-z][a-z0-9+.-]*:(\/\/[a-z0-9.\-[\]:*]+)?$/;
/** Schemes that must never become a form target, whatever the config says. */
const UNSAFE_SCHEMES = new Set(['javascript:', 'data:', 'blob:', 'filesystem:', 'about:']);

/**
 * CSP source expressions for a client's registered redirect URIs: the origin of each http(s)
 * URI (any port on a loopback host, RFC 8252 §7.3) and the scheme of a native app's URI.
 */
export function redirectSources(redirectUris: string[]): string[] {
  const sources = new Set<string>();
  for (const uri of redirectUris) {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      continue;
    }
    let source: string;
    if (url.protocol === 'https:' || url.protocol === 'http:') {
      source = url.protocol === 'http:' && LOOPBACK.has(url.hostname) ? `http://${url.hostname}:*` : url.origin;
    } else if (!UNSAFE_SCHEMES.has(url.protocol)) {
      source = url.protocol;
    } else {
      continue;
    }
    if (SAFE_SOURCE.test(source)) sources.add(source);
  }
  return [...sources];
}

/**
 * Headers of every HTML page of the login routes: no framing, no referrer, no caching, no
 * sniffing. A page whose forms move a login on says `same-origin` instead: under `no-referrer` a
 * browser sends `Origin: null` with the form, and the continuation refuses that (form-origin.ts);
 * its URL still never reaches another site.
 */
export function pageHeaders(
  res: Response,
  formTargets: string[] = [],
  referrer: 'no-referrer' | 'same-origin' = 'no-referrer',
  brand: Pick<Brand, 'imageSource'> | null = null,
): void {
  res.set({
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': contentSecurityPolicy(formTargets, brand?.imageSource ?? null),
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': referrer,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
}
