import type { Request, Response } from 'express';
import type { IdTokenHint, OAuthClient, PluginApi } from '@gatehouse-auth/core';
import { logoutPages } from './pages.js';

/** The parameters RP-Initiated Logout 1.0 §2 defines, and the hosted page's own two. */
const PARAMS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'logout_hint', 'ui_locales'];

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
 * naming the user of this browser's session (and that session, by its `sid`), it signs out at
 * once; otherwise the user confirms with a form bound to the session cookie, so no other site can
 * sign a user out by a link.
 * `post_logout_redirect_uri` must be registered for the app (exact match) or nothing redirects.
 * The hosted login page's "Not you?" posts here with its `request_id`: after signing out, the
 * same authorization request starts again from its first stage.
 */
export function endSession(api: Pick<PluginApi, 'web' | 'services' | 'logger'>) {
  const { web } = api;
  const { crypto } = api.services;
  const pages = logoutPages(web);

  const handle = async (req: Request, res: Response, params: Record<string, string>, confirmed: boolean) => {
    const uiLocales = params.ui_locales ?? null;
    const hint = params.id_token_hint ? await web.logout.idTokenHint(params.id_token_hint) : null;
    if (params.id_token_hint && !hint)
      throw new LogoutRefused(400, 'The id_token_hint is not an ID token of this server.');
    const client = clientOf(params, hint);
    const returnTo = params.post_logout_redirect_uri;
    if (returnTo && !client?.postLogoutRedirectUris.includes(returnTo)) {
      throw new LogoutRefused(400, 'The post_logout_redirect_uri is not registered for this app.');
    }
    const session = await web.logout.session(req);
    // A valid hint for this browser's user, of this session when it names one, proves the app
    // asks for this logout: an ID token of an earlier session (long expired, say) does not.
    const hinted = Boolean(hint && session && hint.sub === session.userId && (!hint.sid || hint.sid === session.sid));
    if (session && !confirmed && !hinted) {
      const fields = Object.fromEntries(PARAMS.filter((k) => params[k] !== undefined).map((k) => [k, params[k]!]));
      return pages.confirm(req, res, uiLocales, {
        appName: client?.name ?? null,
        fields: { ...fields, csrf: session.csrf, ...(params.request_id ? { request_id: params.request_id } : {}) },
        redirectUris: client?.postLogoutRedirectUris ?? [],
      });
    }
    if (session && confirmed && !(typeof params.csrf === 'string' && crypto.safeEqual(params.csrf, session.csrf))) {
      throw new LogoutRefused(403, 'The form has expired. Sign out again.');
    }
    // Ends the session (apps told by back-channel logout) and drops the cookie either way.
    await web.endSession(req, res, hinted ? 'rp_initiated' : 'user');
    res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });

    const restart = params.request_id ? await restartOf(req, params.request_id) : null;
    if (restart) return res.redirect(303, restart);
    if (returnTo) {
      const url = new URL(returnTo);
      if (params.state) url.searchParams.append('state', params.state);
      return res.redirect(303, url.toString());
    }
    pages.signedOut(req, res, uiLocales, client?.name ?? null);
  };

  /** The app: the one the hint was issued to (its `azp`), or `client_id` (which must be that one). */
  function clientOf(params: Record<string, string>, hint: IdTokenHint | null): OAuthClient | null {
    if (params.client_id && hint && params.client_id !== hint.clientId) {
      throw new LogoutRefused(400, 'The client_id does not match the id_token_hint.');
    }
    const id = params.client_id ?? hint?.clientId;
    const client = id ? web.client(id) : null;
    if (id && !client) throw new LogoutRefused(400, 'The app (client_id) is not registered.');
    return client;
  }

  /** "Not you?": the authorization request of a flow this browser started, from its start. */
  async function restartOf(req: Request, requestId: string): Promise<string | null> {
    const flow = await web.loginFlows.get(requestId);
    if (!flow || flow.status !== 'active' || !web.loginFlows.isBound(req, flow)) return null;
    return web.loginFlows.restartUrl(flow);
  }

  const answer = (req: Request, res: Response, read: () => Record<string, string>, confirmed: boolean) => {
    const asked = typeof req.query.ui_locales === 'string' ? req.query.ui_locales : null;
    let params: Record<string, string>;
    try {
      params = read();
    } catch {
      return pages.error(
        req,
        res,
        asked,
        400,
        'invalid_request',
        'A parameter appears more than once or is malformed.',
      );
    }
    handle(req, res, params, confirmed).catch((err: unknown) => {
      const uiLocales = params.ui_locales ?? asked;
      if (err instanceof LogoutRefused)
        return pages.error(req, res, uiLocales, err.status, 'invalid_request', err.message);
      api.logger.error({ err, reqId: req.id }, 'logout failed');
      pages.error(req, res, uiLocales, 500, 'server_error', 'Signing out failed. Try again.');
    });
  };

  return {
    get: (req: Request, res: Response) => answer(req, res, () => queryParams(req.originalUrl), false),
    post: (req: Request, res: Response) =>
      answer(req, res, () => formFields(req.body), (req.body as Record<string, unknown>)?.confirm === 'yes'),
  };
}

/** The query strictly: a repeated parameter is refused, an empty one counts as absent. */
function queryParams(url: string): Record<string, string> {
  const q = url.indexOf('?');
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [key, value] of new URLSearchParams(q < 0 ? '' : url.slice(q + 1))) {
    if (seen.has(key)) throw new Error(`repeated ${key}`);
    seen.add(key);
    if (value !== '') out[key] = value;
  }
  return out;
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
