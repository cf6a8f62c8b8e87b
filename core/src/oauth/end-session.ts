import express, { type Request, type Response, type Router } from 'express';
import { formBody } from '../http/parsers.js';
import { readCookie } from '../http/cookies.js';
import { safeEqual, sha256 } from '../util/crypto.js';
import type { GatehouseConfig } from '../config/schema.js';
import type { LoginFlowStore } from '../verification/flows.js';
import {
  authorizeUrlOf,
  sessionCookieName,
  type AuthorizationRequest,
  type BrowserBinding,
} from './authorize/index.js';
import type { ClientRegistry, OAuthClient } from './clients.js';
import { parseStrictQuery } from './form.js';
import type { IdTokenHint, LogoutService } from './logout.js';
import type { Branding } from '../login/branding.js';
import { errorPage, logoutConfirmPage, signedOutPage, type PageContext } from './pages.js';
import { queryUiLocales, type Locales } from '../i18n/locales.js';
import type { SessionStore } from './sessions.js';

export const END_SESSION_PATH = '/session/end_session';

/** The parameters RP-Initiated Logout 1.0 §2 defines, and the hosted page's own two. */
const PARAMS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'logout_hint', 'ui_locales'];

/** The token a confirmation form must echo: bound to this browser's session cookie. */
export function logoutCsrf(sessionCookie: string): string {
  return sha256(`logout:${sessionCookie}`);
}

class LogoutRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0). With an `id_token_hint`
 * naming the user of this browser's session, it signs out at once; otherwise the user confirms
 * with a form bound to the session cookie, so no other site can sign a user out by a link.
 * `post_logout_redirect_uri` must be registered for the app (exact match) or nothing redirects.
 * The hosted login page's "Not you?" posts here with its `request_id`: after signing out, the
 * same authorization request starts again from its first stage.
 */
/** What the end-session endpoint uses (the container's cradle provides it). */
export interface EndSessionDeps {
  config: GatehouseConfig;
  clients: ClientRegistry;
  sessions: SessionStore;
  logout: LogoutService;
  flows: LoginFlowStore;
  binding: BrowserBinding;
  locales: Locales;
  /** The logout pages show the global brand. */
  branding: Pick<Branding, 'of'>;
}

export function endSessionRoutes(deps: EndSessionDeps): Router {
  const sessionCookie = sessionCookieName(deps.config.issuer);
  const clearSession = (res: Response) => deps.binding.dropCookie(res, sessionCookie);
  const router = express.Router();
  const base = new URL(deps.config.issuer).pathname.replace(/\/+$/, '');
  /** In the language of the logout request's `ui_locales` (RP-Initiated Logout §2), then the browser's. */
  const pageOf = (req: Request, params: Record<string, string> = {}): PageContext => ({
    base,
    t: deps.locales.for(req, params.ui_locales ?? queryUiLocales(req)),
    brand: deps.branding.of(null),
  });

  const handle = async (req: Request, res: Response, params: Record<string, string>, confirmed: boolean) => {
    const hint = params.id_token_hint ? await deps.logout.readIdTokenHint(params.id_token_hint) : null;
    if (params.id_token_hint && !hint)
      throw new LogoutRefused(400, 'The id_token_hint is not an ID token of this server.');
    const client = clientOf(params, hint);
    const returnTo = params.post_logout_redirect_uri;
    if (returnTo && !client?.postLogoutRedirectUris.includes(returnTo)) {
      throw new LogoutRefused(400, 'The post_logout_redirect_uri is not registered for this app.');
    }
    const cookie = readCookie(req, sessionCookie);
    const session = await deps.sessions.get(cookie);
    // A valid hint for this browser's user proves the app asks for this user's logout.
    const hinted = Boolean(hint && session && hint.sub === session.userId);
    if (session && !confirmed && !hinted) {
      const fields = Object.fromEntries(PARAMS.filter((k) => params[k] !== undefined).map((k) => [k, params[k]!]));
      return logoutConfirmPage(res, pageOf(req, params), {
        appName: client?.name ?? null,
        fields: {
          ...fields,
          csrf: logoutCsrf(cookie!),
          ...(params.request_id ? { request_id: params.request_id } : {}),
        },
        redirectUris: client?.postLogoutRedirectUris ?? [],
      });
    }
    if (session && confirmed && !(typeof params.csrf === 'string' && safeEqual(params.csrf, logoutCsrf(cookie!)))) {
      throw new LogoutRefused(403, 'The form has expired. Sign out again.');
    }
    if (session) await deps.logout.endSession(session.sid, hinted ? 'rp_initiated' : 'user');
    clearSession(res);
    res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });

    const restart = params.request_id ? await restartOf(req, params.request_id) : null;
    if (restart) return res.redirect(303, restart);
    if (returnTo) {
      const url = new URL(returnTo);
      if (params.state) url.searchParams.append('state', params.state);
      return res.redirect(303, url.toString());
    }
    signedOutPage(res, pageOf(req, params), client?.name ?? null);
  };

  /** The app: the hint's audience, or `client_id` (which must agree with it). */
  function clientOf(params: Record<string, string>, hint: IdTokenHint | null): OAuthClient | undefined {
    if (params.client_id && hint && !hint.clientIds.includes(params.client_id)) {
      throw new LogoutRefused(400, 'The client_id does not match the id_token_hint.');
    }
    const id = params.client_id ?? hint?.clientIds[0];
    const client = id ? deps.clients.get(id) : undefined;
    if (id && !client) throw new LogoutRefused(400, 'The app (client_id) is not registered.');
    return client;
  }

  /** "Not you?": the authorization request of a flow this browser started, from its start. */
  async function restartOf(req: Request, requestId: string): Promise<string | null> {
    const flow = await deps.flows.get(requestId);
    if (!flow || flow.status !== 'active' || !flow.params.oauth || !deps.binding.isBound(req, flow)) return null;
    // Someone else signs in: the app's guess at who it is no longer helps.
    return `${base}${authorizeUrlOf({ ...(flow.params.oauth as unknown as AuthorizationRequest), login_hint: null })}`;
  }

  const answer = (req: Request, res: Response, read: () => Record<string, string>, confirmed: boolean) => {
    let params: Record<string, string>;
    try {
      params = read();
    } catch {
      return errorPage(res, pageOf(req), 400, 'invalid_request', 'A parameter appears more than once or is malformed.');
    }
    handle(req, res, params, confirmed).catch((err: unknown) => {
      if (err instanceof LogoutRefused) {
        return errorPage(res, pageOf(req, params), err.status, 'invalid_request', err.message);
      }
      req.log.error({ err }, 'logout failed');
      errorPage(res, pageOf(req, params), 500, 'server_error', 'Signing out failed. Try again.');
    });
  };

  router.get(END_SESSION_PATH, (req, res) => answer(req, res, () => parseStrictQuery(req.originalUrl), false));
  router.post(END_SESSION_PATH, formBody('16kb', 20), (req, res) =>
    answer(req, res, () => formFields(req.body), (req.body as Record<string, unknown>)?.confirm === 'yes'),
  );
  return router;
}

/** A flat form: every value a string (a repeated field is an array: refused). */
function formFields(body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((body ?? {}) as Record<string, unknown>)) {
    if (typeof v !== 'string') throw new Error(`malformed ${k}`);
    if (v !== '') out[k] = v;
  }
  return out;
}
