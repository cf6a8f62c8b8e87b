import type { OAuthClient } from '@gatehouse-auth/plugin-api';
import type { IncomingMessage } from 'node:http';
import type { LoginFlow } from '../verification/flows.js';
import { verificationError } from '../verification/errors.js';

/**
 * The origins whose pages may post a login continuation for `client`: Gatehouse's own (the
 * hosted page), the origin of the app's `login_page_url` and its `allowed_origins`.
 */
export function continuationOrigins(issuer: string, client: OAuthClient | undefined): Set<string> {
  const origins = new Set([new URL(issuer).origin]);
  if (client?.loginPageUrl) origins.add(new URL(client.loginPageUrl).origin);
  for (const origin of client?.allowedOrigins ?? []) origins.add(origin);
  return origins;
}

/**
 * Login CSRF defence for the form POSTs that move a login on (the hosted page's /login/continue,
 * and plugins' continuations through `loginFlows.admit`, e.g. /login-srv/*): a browser sends `Origin` with every POST, so one from another
 * site, an opaque `null` (a sandboxed frame, a data: page) or none at all is refused for a flow
 * an app started in a browser. Without it a page anywhere could make the victim's browser finish
 * the attacker's login and hold the attacker's session (decision 20, the reverse direction).
 * A flow without OAuth parameters is an API caller's (no browser, no session): only a foreign
 * `Origin` is refused there. Returns the origin the form came from, when it sent one.
 */
export function checkContinuationOrigin(req: IncomingMessage, flow: LoginFlow, allowed: Set<string>): string | null {
  const origin = typeof req.headers.origin === 'string' ? req.headers.origin : null;
  if (origin === null && !flow.params.oauth) return null;
  if (origin !== null && allowed.has(origin)) return origin;
  throw verificationError(
    'ORIGIN_NOT_ALLOWED',
    origin === null
      ? 'the form must come from the app’s login page (the request has no Origin header)'
      : `the form must come from the app’s login page, not ${origin.slice(0, 100)}`,
  );
}
