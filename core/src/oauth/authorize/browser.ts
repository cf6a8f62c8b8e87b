import type { IncomingMessage } from 'node:http';
import { readCookie } from '../../http/cookies.js';
import { safeEqual, sha256 } from '../../util/crypto.js';
import type { LoginFlow } from '../../verification/flows.js';

/** The browser session (SSO) cookie: `__Host-` and Secure on https. */
export function sessionCookieName(issuer: string): string {
  return browserBinding(issuer).cookieName('gh_session');
}

/**
 * The cookie that binds a login flow to the browser that started it at /authorize. Every step
 * that moves the flow on checks it: otherwise a victim could be sent an attacker's login link
 * and sign in for the attacker's browser (login-flow hijack).
 */
export function browserBinding(issuer: string) {
  const secure = issuer.startsWith('https://');
  const cookieName = (base: string) => (secure ? `__Host-${base}` : base);
  const flowCookie = (requestId: string) => cookieName(`gh_flow_${sha256(requestId).slice(0, 16)}`);
  return {
    secure,
    cookieName,
    flowCookie,
    /** True when the flow has no binding (an API caller's flow) or this browser holds it. */
    isBound(req: IncomingMessage, flow: LoginFlow): boolean {
      const expected = flow.params.binding;
      if (typeof expected !== 'string') return !flow.params.oauth;
      const presented = readCookie(req, flowCookie(flow.id));
      return presented !== undefined && safeEqual(sha256(presented), expected);
    },
  };
}

/** The CSRF token of a form: an HMAC-like digest of the flow's cookie binding. */
export function csrfToken(binding: string): string {
  return sha256(`csrf:${binding}`);
}

/** The token a flow's forms (consent, cancel) must echo, for this browser; null if it is not bound. */
export function flowFormToken(issuer: string, req: IncomingMessage, flow: LoginFlow): string | null {
  const binding = browserBinding(issuer);
  if (typeof flow.params.binding !== 'string' || !binding.isBound(req, flow)) return null;
  return csrfToken(readCookie(req, binding.flowCookie(flow.id))!);
}

/** Flow cookies a browser may hold at once; a new sign-in beyond that drops the oldest. */
export const MAX_FLOW_COOKIES = 10;

/** A cookie name (RFC 6265 §4.1.1: an RFC 7230 token); anything else is ignored, never echoed back. */
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The names of the flow cookies a request carries, oldest first (RFC 6265 §5.4 orders by creation). */
export function flowCookieNames(req: IncomingMessage, prefix: string): string[] {
  return (req.headers.cookie ?? '')
    .split(';')
    .map((part) => part.slice(0, Math.max(part.indexOf('='), 0)).trim())
    .filter((name) => name.startsWith(prefix) && COOKIE_NAME.test(name));
}

/** What browserBinding returns: cookie names and the flow-binding check of one issuer. */
export type BrowserBinding = ReturnType<typeof browserBinding>;
