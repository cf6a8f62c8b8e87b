import {
  redirectSources,
  type AccountAnswer,
  type AccountPrompt,
  type AuthorizeChoicesApi,
  type ConsentAnswer,
  type ConsentPrompt,
  type LoginFlowView,
} from '@gatehouse-auth/plugin-api';
import type { Request, Response } from 'express';
import { readCookie } from '../../http/cookies.js';
import { safeEqual } from '../../util/crypto.js';
import type { LoginFlow } from '../../verification/flows.js';
import { OAuthError } from '../errors.js';
import { flowFormToken } from './browser.js';
import { RESUME_PATH, type AuthorizeContext } from './context.js';
import { finish } from './finish.js';
import { authorizeUrlOf, ErrorPage, type AuthorizationRequest } from './request.js';

/**
 * The consent and the account choice of the authorization endpoint (`web.authorize`, decision
 * 75) for the plugin that shows their pages: the flow cookie's binding, the form's CSRF token,
 * single use and the answer to the app are here, so a page cannot skip one.
 */
export class AuthorizeChoices implements AuthorizeChoicesApi {
  constructor(
    private readonly ctx: AuthorizeContext,
    private readonly views: { view(flow: LoginFlow): LoginFlowView },
  ) {}

  readonly consent = {
    show: (req: Request, res: Response, requestId: unknown) =>
      this.ctx.shown(res, async (): Promise<ConsentPrompt> => {
        const { flow, request, csrf } = await this.waiting(req, requestId, 'completed');
        const client = this.ctx.deps.clients.get(request.client_id)!;
        const formTargets = redirectSources(client.redirectUris);
        return { flow: this.views.view(flow), scopes: request.scope, csrf, formTargets };
      }),
    answer: async (req: Request, res: Response, form: ConsentAnswer) => {
      await this.ctx.shown(res, () => this.answerConsent(req, res, form));
    },
  };

  readonly account = {
    show: (req: Request, res: Response, requestId: unknown) =>
      this.ctx.shown(res, async (): Promise<AccountPrompt> => {
        const { flow, request, csrf, user } = await this.choosing(req, requestId);
        const client = this.ctx.deps.clients.get(request.client_id)!;
        // Continuing ends at the app's redirect URI, or at its own login UI for the stages left.
        const ends = [...client.redirectUris, ...(client.loginPageUrl ? [client.loginPageUrl] : [])];
        return { flow: this.views.view(flow), userName: user.username, csrf, formTargets: redirectSources(ends) };
      }),
    answer: async (req: Request, res: Response, form: AccountAnswer) => {
      await this.ctx.shown(res, () => this.answerAccount(req, res, form));
    },
  };

  /** This browser's flow in `status`, with the token its form must echo. */
  private async waiting(req: Request, requestId: unknown, status: LoginFlow['status'] | LoginFlow['status'][]) {
    const { flow, request } = await this.ctx.boundFlow(req, requestId, status);
    // boundFlow found the flow's cookie in this browser: the token exists.
    const csrf = flowFormToken(this.ctx.deps.config.issuer, req, flow)!;
    return { flow, request, csrf };
  }

  /** The form must echo the token of this browser's flow cookie (CSRF), compared in constant time. */
  private checkCsrf(given: unknown, expected: string): void {
    if (typeof given !== 'string' || !safeEqual(given, expected)) {
      throw new ErrorPage(403, 'invalid_request', 'The form has expired. Start again from the app.');
    }
  }

  /** Deny answers access_denied; Allow is remembered, then the client is answered. */
  private async answerConsent(req: Request, res: Response, form: ConsentAnswer) {
    const { clients, consents, sessions } = this.ctx.deps;
    const { flow, request, csrf } = await this.waiting(req, form.requestId, 'completed');
    this.checkCsrf(form.csrf, csrf);
    const client = clients.get(request.client_id)!;
    if (form.decision !== 'allow') {
      return this.ctx.refuse(res, flow, request, new OAuthError('access_denied', 'the user denied the request'));
    }
    await consents.put(`${flow.userId}:${client.clientId}`, { scopes: request.scope });
    const session = await sessions.get(readCookie(req, this.ctx.sessionCookie));
    const own = session?.userId === flow.userId ? session : null;
    await finish(this.ctx, res, { flow, client, request, session: own }, req.log);
  }

  /**
   * The flow that waits for the account choice: started with `prompt=select_account` from a
   * session (so its user is known), completed by single sign-on or with stages left.
   */
  private async choosing(req: Request, requestId: unknown) {
    const { flow, request, csrf } = await this.waiting(req, requestId, ['completed', 'active']);
    const user = flow.userId ? await this.ctx.deps.users.findById(flow.userId) : null;
    if (!request.prompt.includes('select_account') || !user) {
      throw new ErrorPage(400, 'invalid_request', 'This sign-in does not ask which account to use.');
    }
    return { flow, request, user, csrf };
  }

  /**
   * "continue" goes on as single sign-on does: to the app, or to the stages this app still asks
   * for. "other" ends this sign-in and starts the same request again without the session
   * counting (`prompt=login`) and without the app's `login_hint`, so the login begins at the
   * first stage; the session is replaced once someone signs in.
   */
  private async answerAccount(req: Request, res: Response, form: AccountAnswer) {
    const { ctx } = this;
    const { flow, request, csrf } = await this.choosing(req, form.requestId);
    this.checkCsrf(form.csrf, csrf);
    if (form.choice !== 'continue' && form.choice !== 'other') {
      throw new ErrorPage(400, 'invalid_request', 'Choose to continue or to use another account.');
    }
    if (form.choice === 'continue') {
      return res.redirect(303, flow.status === 'completed' ? ctx.flowUrl(RESUME_PATH, flow) : ctx.loginUrl(flow));
    }
    await ctx.end(res, flow, flow.status === 'completed' ? 'finish' : 'cancel');
    res.redirect(303, `${ctx.page.base}${authorizeUrlOf(anotherAccount(request))}`);
  }
}

/** The request again, for someone other than the session's user. */
function anotherAccount(request: AuthorizationRequest): AuthorizationRequest {
  const prompt = [...new Set([...request.prompt.filter((p) => p !== 'select_account'), 'login'])];
  return { ...request, prompt, login_hint: null };
}
