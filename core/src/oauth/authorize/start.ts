import type { JsonObject } from '@gatehouse-auth/plugin-api';
import type { Request, RequestHandler, Response } from 'express';
import { isProtocolError } from '../../errors.js';
import { randomToken, sha256 } from '../../util/crypto.js';
import { stagesFor } from '../acr.js';
import { flowStart, type SsoDecision } from '../sso.js';
import { OAuthError } from '../errors.js';
import { errorPage } from '../pages.js';
import { ssoDecision } from './hosted-login.js';
import { flowCookieNames, MAX_FLOW_COOKIES } from './browser.js';
import { ACCOUNT_PATH, CONSENT_PATH, RESUME_PATH, type AuthorizeContext } from './context.js';
import { errorParams, RedirectError, validate, type AuthorizationRequest } from './request.js';

/**
 * GET /api/oauth2/authorize (RFC 6749 §4.1/§4.2, OIDC Core §3.1.2): validates the request,
 * asks what the browser's session is worth to this app, and either answers from it or starts a
 * login flow on the hosted page (bound to this browser by a cookie).
 */
export function startAuthorization(ctx: AuthorizeContext): RequestHandler {
  const { deps } = ctx;
  const { config, clients, flows, binding } = deps;

  return async (req: Request, res: Response) => {
    const wait = await ctx.flowStartWait(req);
    if (wait) {
      res.set('Retry-After', String(wait));
      return errorPage(
        res,
        ctx.pageFor(req),
        429,
        'temporarily_unavailable',
        'Too many sign-in requests from this address; try again shortly.',
      );
    }
    let request: AuthorizationRequest;
    try {
      request = validate(await ctx.requestQuery(req.originalUrl), clients);
    } catch (err) {
      if (err instanceof RedirectError) return ctx.respond(res, err.request, errorParams(err));
      throw err;
    }
    const client = clients.get(request.client_id)!;
    try {
      if (!client.loginStages.length)
        throw new OAuthError('server_error', 'the app has no login stages configured', 500);
      // The stages of the acr asked for: a session short of them is asked for what is missing (step-up).
      const loginStages = stagesFor(client, request);
      const hinted = await hintedUser(deps.logout, request.id_token_hint);
      // prompt=create (a plugin's registration page, plugin API 1.3): a new account signs in,
      // so the browser's session is not asked (validate() let it through only for such an app).
      const register = request.prompt.includes('create') ? deps.extensions.prompts.get('create') : undefined;
      const signedIn: SsoDecision = register
        ? { kind: 'none' }
        : await ssoDecision(deps, req, client, { loginStages, prompt: request.prompt, maxAge: request.max_age });
      // A session of another user than the app's id_token_hint names is not used (OIDC Core §3.1.2.1).
      const otherUser = hinted !== null && signedIn.kind !== 'none' && signedIn.userId !== hinted;
      if (otherUser && request.prompt.includes('none')) {
        throw new OAuthError('login_required', 'the signed-in user is not the one id_token_hint names');
      }
      const decision: typeof signedIn = otherUser ? { kind: 'none' } : signedIn;
      // No plugin shows the choice asked for: the app hears so now (OIDC Core §3.1.2.6), not after a login.
      if (request.prompt.includes('consent') && !ctx.serves(CONSENT_PATH)) {
        throw new OAuthError('consent_required', 'no consent page is configured');
      }
      if (request.prompt.includes('select_account') && decision.kind !== 'none' && !ctx.serves(ACCOUNT_PATH)) {
        throw new OAuthError('account_selection_required', 'no account choice page is configured');
      }
      if (request.prompt.includes('none')) {
        if (decision.kind === 'none' || (decision.kind === 'login' && decision.stale))
          throw new OAuthError('login_required', 'the user must sign in (again)');
        // Signed in, but not with what this app asks for (a second factor, a step-up).
        if (decision.kind === 'login')
          throw new OAuthError('interaction_required', 'the app needs the user to complete another sign-in step');
        if (await ctx.needsConsent(client, decision.userId, request)) {
          throw new OAuthError('consent_required', 'the user has not consented');
        }
        // An admin's required actions (plugin API 1.3) need the hosted page: no silent answer.
        if (ctx.deps.extensions.routes.has('/login') && (await ctx.deps.requiredActions.of(decision.userId)).length) {
          throw new OAuthError('interaction_required', 'the user must first do what an administrator required');
        }
      }
      const bindingValue = randomToken(24);
      const flow = await flows.create({
        clientId: client.clientId,
        ...flowStart(decision, loginStages),
        ttlSeconds: config.verification.flow_ttl,
        // The hint is spent: the flow need not carry an ID token around.
        params: { oauth: { ...request, id_token_hint: null } as unknown as JsonObject, binding: sha256(bindingValue) },
      });
      // Abandoned sign-ins leave their cookies until the flow expires: past a cap, the oldest go
      // (their flows can no longer continue), so a busy browser never reaches the header limit.
      const stale = flowCookieNames(req, binding.cookieName('gh_flow_')).slice(0, -(MAX_FLOW_COOKIES - 1));
      // Bounded per answer, so a request stuffed with cookies cannot blow up the response headers.
      for (const name of stale.slice(0, MAX_FLOW_COOKIES)) binding.dropCookie(res, name);
      // An app's own login UI on another site posts back cross-site: its flow cookie must travel
      // with that POST (SameSite=None, Secure; decision 19). The binding itself is unchanged.
      const crossSite = client.loginPageUrl !== null;
      const cookieOptions = binding.cookieOptions(config.verification.flow_ttl, crossSite);
      res.cookie(binding.flowCookie(flow.id), bindingValue, cookieOptions);
      if (register) return res.redirect(303, ctx.flowUrl(register.path, flow));
      // prompt=select_account: the session's user confirms the account, or signs in with another.
      if (request.prompt.includes('select_account') && decision.kind !== 'none') {
        return res.redirect(303, ctx.flowUrl(ACCOUNT_PATH, flow));
      }
      // Single sign-on: the session already satisfies this app; else its first stage left to do.
      res.redirect(303, flow.status === 'completed' ? ctx.flowUrl(RESUME_PATH, flow) : ctx.loginUrl(flow));
    } catch (err) {
      if (isProtocolError(err) && err instanceof OAuthError) return ctx.respond(res, request, errorParams(err));
      throw err;
    }
  };
}

/** The subject of an id_token_hint: an ID token this server signed (expired ones too); refused otherwise. */
async function hintedUser(logout: AuthorizeContext['deps']['logout'], hint: string | null | undefined) {
  if (!hint) return null;
  const read = await logout.readIdTokenHint(hint);
  if (!read) throw new OAuthError('invalid_request', 'id_token_hint is not an ID token of this server');
  return read.sub;
}
