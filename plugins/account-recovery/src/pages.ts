import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import {
  html,
  type ApiError,
  isProtocolError,
  readCookie,
  type LoginFlowView,
  type PluginApi,
  type SafeHtml,
  type UserAccounts,
  type UserRecord,
} from '@gatehouse-auth/core';
import type { RecoveryOptions } from './options.js';
import { PASSWORD_METHOD, type Exchange, type MessagesFor, type PasswordRecovery } from './recovery.js';

/** Why a page is shown again: the refusal's code (the notice's `data-code`), status and message values. */
interface Problem {
  code: string;
  status: number;
  vars?: Record<string, string | number>;
}

type Router = ReturnType<PluginApi['services']['http']['createRouter']>;

/** The plugin's first-party app: its one stage is the second factors (`second_factors`). */
export const RECOVERY_CLIENT_ID = 'gatehouse-recovery';
/** Where the pages are mounted. */
export const RECOVERY_PATH = '/recovery';

/** A login request id as the pages take it (the login to go back to afterwards). */
function requestIdOf(value: unknown): string | null {
  return typeof value === 'string' && value && value.length <= 200 ? value : null;
}

/** The user's locale (profile `locale`) when known, else the request's languages. */
export function messagesFor(api: PluginApi, req: IncomingMessage): MessagesFor {
  return async (user: UserRecord) => {
    const profile = await api.services.resolve<UserAccounts>('userAccounts').profile(user.id);
    return api.web.messages(req, typeof profile.locale === 'string' ? profile.locale : pageLocales(api, req));
  };
}

/** The cookie that keeps the login's `ui_locales` through the reset's pages. */
function localeCookie(api: PluginApi): string {
  return `${api.web.issuer.startsWith('https://') ? '__Host-' : ''}gh_recovery_locale`;
}

/** `ui_locales` as the pages take it: language tags and spaces, at most 64 characters. */
function uiLocalesOf(value: unknown): string | null {
  return typeof value === 'string' && /^[A-Za-z0-9_ -]{1,64}$/.test(value) ? value : null;
}

/** The locales of this request's first page, before its cookie comes back. */
const firstPageLocales = new WeakMap<IncomingMessage, string>();

/** The `ui_locales` of the login the reset began at (its cookie), else null: the browser's languages. */
function pageLocales(api: PluginApi, req: IncomingMessage): string | null {
  return firstPageLocales.get(req) ?? uiLocalesOf(readCookie(req, localeCookie(api)));
}

/**
 * The hosted "Forgot password?" pages at /recovery. Between the steps the browser holds one
 * random value in an HttpOnly cookie (the ticket, then the exchange), never in a URL; every form
 * is CSRF-protected; the code, the second factor and the new password each move the reset on once.
 */
export function recoveryPages(api: PluginApi, recovery: PasswordRecovery, options: RecoveryOptions, router: Router) {
  const { web } = api;
  const secure = web.issuer.startsWith('https://');
  const cookie = (name: 'ticket' | 'exchange') => `${secure ? '__Host-' : ''}gh_recovery_${name}`;
  const cookieOptions = { httpOnly: true, secure, sameSite: 'lax' as const, path: '/' };
  const action = (path = '') => web.url(`${RECOVERY_PATH}${path}`);
  const withLogin = (path: string, requestId: string | null) =>
    requestId ? `${action(path)}?request_id=${encodeURIComponent(requestId)}` : action(path);

  const body = (req: Request) => (req.body ?? {}) as Record<string, unknown>;

  /** A page of the reset, with a notice (an error) and its status. */
  function show(
    req: Request,
    res: Response,
    page: { title: string; content: SafeHtml; problem?: Problem | undefined; id: string },
  ): void {
    const problem = page.problem;
    web.page(req, res, {
      title: page.title,
      status: problem?.status ?? 200,
      body: html`<main class="card" id="${page.id}">
        <h1>${page.title}</h1>
        ${
          problem
            ? html`<p class="message error" role="alert" id="gh-notice" data-code="${problem.code}">
                ${noticeOf(req, problem)}
              </p>`
            : null
        }
        ${page.content}
      </main>`,
    });
  }

  const t = (req: Request) => web.messages(req, pageLocales(api, req));

  /** The message of a refusal, by its code. */
  function noticeOf(req: Request, problem: Problem): string {
    const messages = t(req);
    return messages.or(`recovery.error.${problem.code}`, messages.t('recovery.error.other'), problem.vars ?? {});
  }

  function identifierForm(req: Request, res: Response, requestId: string | null, problem?: Problem) {
    const m = t(req);
    show(req, res, {
      id: 'gh-recovery',
      title: m.t('recovery.title'),
      problem,
      content: html`<p>${m.t('recovery.intro')}</p>
        <form method="post" action="${action()}">
          <input type="hidden" name="csrf" value="${web.csrf.token(req, res)}" />
          ${requestId ? html`<input type="hidden" name="request_id" value="${requestId}" />` : null}
          <div class="field">
            <label for="gh-identifier">${m.t('recovery.identifier')}</label>
            <input
              id="gh-identifier"
              name="identifier"
              type="text"
              autocomplete="username"
              autocapitalize="off"
              spellcheck="false"
              maxlength="320"
              required
            />
          </div>
          <button class="primary" type="submit">${m.t('recovery.send')}</button>
        </form>`,
    });
  }

  function codeForm(req: Request, res: Response, problem?: Problem) {
    const m = t(req);
    show(req, res, {
      id: 'gh-recovery-code',
      title: m.t('recovery.title'),
      problem,
      content: html`<p role="status">${m.t('recovery.sent', { minutes: options.code_ttl_minutes })}</p>
        <form method="post" action="${action('/code')}">
          <input type="hidden" name="csrf" value="${web.csrf.token(req, res)}" />
          <div class="field">
            <label for="gh-code">${m.t('recovery.code')}</label>
            <input
              id="gh-code"
              name="code"
              type="text"
              inputmode="numeric"
              autocomplete="one-time-code"
              maxlength="6"
              required
            />
          </div>
          <button class="primary" type="submit">${m.t('recovery.check')}</button>
        </form>
        <p><a href="${action()}">${m.t('recovery.again')}</a></p>`,
    });
  }

  /** A dead end (expired, refused): the reason and a way to start again. */
  function dead(req: Request, res: Response, code: string, status: number) {
    const problem = { code, status };
    const m = t(req);
    res.clearCookie(cookie('ticket'), cookieOptions);
    res.clearCookie(cookie('exchange'), cookieOptions);
    show(req, res, {
      id: 'gh-recovery-problem',
      title: m.t('recovery.title'),
      problem,
      content: html`<p><a href="${action()}">${m.t('recovery.again')}</a></p>`,
    });
  }

  function factorPage(req: Request, res: Response, problem?: Problem) {
    const m = t(req);
    show(req, res, {
      id: 'gh-recovery-factor',
      title: m.t('recovery.factor_title'),
      problem,
      content: html`<p>${m.t('recovery.factor_text')}</p>
        <p class="note">${m.t('recovery.factor_cannot')}</p>
        <form method="post" action="${action('/verify')}">
          <input type="hidden" name="csrf" value="${web.csrf.token(req, res)}" />
          <button class="primary" type="submit">${m.t('recovery.factor_continue')}</button>
        </form>`,
    });
  }

  function passwordForm(req: Request, res: Response, problem?: Problem) {
    const m = t(req);
    show(req, res, {
      id: 'gh-recovery-password',
      title: m.t('recovery.password_title'),
      problem,
      content: html`<form method="post" action="${action('/password')}">
        <input type="hidden" name="csrf" value="${web.csrf.token(req, res)}" />
        <div class="field">
          <label for="gh-password">${m.t('recovery.password')}</label>
          <input id="gh-password" name="password" type="password" autocomplete="new-password" required />
        </div>
        <div class="field">
          <label for="gh-password-confirm">${m.t('recovery.password_confirm')}</label>
          <input id="gh-password-confirm" name="confirm" type="password" autocomplete="new-password" required />
        </div>
        <button class="primary" type="submit">${m.t('recovery.password_save')}</button>
      </form>`,
    });
  }

  /** The exchange of this browser's cookie, or null when there is none (or it is gone). */
  async function currentExchange(req: Request): Promise<Exchange | null> {
    try {
      return await recovery.exchange(readCookie(req, cookie('exchange')));
    } catch (err) {
      if (isProtocolError(err)) return null;
      throw err;
    }
  }

  router.get('/', async (req, res) => {
    const requestId = requestIdOf(req.query.request_id);
    // The login's ui_locales (an app asked for German, say) carry through the reset's pages.
    const flow = requestId ? await web.loginFlows.get(requestId) : null;
    const locales = uiLocalesOf(flow?.oauth?.ui_locales);
    if (locales) {
      firstPageLocales.set(req, locales);
      res.cookie(localeCookie(api), locales, { ...cookieOptions, maxAge: options.code_ttl_minutes * 120_000 });
    }
    identifierForm(req, res, requestId);
  });

  router.post('/', api.services.http.form(), async (req, res) => {
    const requestId = requestIdOf(body(req).request_id);
    if (!web.csrf.valid(req, body(req).csrf)) return identifierForm(req, res, requestId, { code: 'CSRF', status: 403 });
    const identifier = typeof body(req).identifier === 'string' ? (body(req).identifier as string) : '';
    let ticket: string;
    try {
      ticket = await recovery.initiate(identifier, { returnTo: requestId, messages: messagesFor(api, req), req });
    } catch (err) {
      if (!isProtocolError(err) || err.code !== 'TOO_MANY_REQUESTS') throw err;
      const seconds = Number((err as ApiError).details?.retry_after ?? 60);
      res.set('Retry-After', String(seconds));
      return identifierForm(req, res, requestId, { code: err.code, status: 429, vars: { seconds } });
    }
    res.clearCookie(cookie('exchange'), cookieOptions);
    res.cookie(cookie('ticket'), ticket, { ...cookieOptions, maxAge: options.code_ttl_minutes * 60_000 });
    res.redirect(303, action('/code'));
  });

  router.get('/code', (req, res) => {
    if (!readCookie(req, cookie('ticket'))) return dead(req, res, 'RECOVERY_EXPIRED', 410);
    codeForm(req, res);
  });

  router.post('/code', api.services.http.form(), async (req, res) => {
    if (!web.csrf.valid(req, body(req).csrf)) return codeForm(req, res, { code: 'CSRF', status: 403 });
    let exchange: Exchange;
    try {
      exchange = await recovery.validate(readCookie(req, cookie('ticket')), body(req).code, req);
    } catch (err) {
      if (!isProtocolError(err)) throw err;
      if (err.code === 'CODE_INVALID') return codeForm(req, res, { code: err.code, status: err.status });
      return dead(req, res, err.code, err.status);
    }
    res.clearCookie(cookie('ticket'), cookieOptions);
    res.cookie(cookie('exchange'), exchange.id, { ...cookieOptions, maxAge: options.code_ttl_minutes * 60_000 });
    if (exchange.secondFactor === 'needed') return factorPage(req, res);
    res.redirect(303, action('/password'));
  });

  // The second factor: a login of the plugin's app, pinned to the user, on the hosted page.
  router.post('/verify', api.services.http.form(), async (req, res) => {
    if (!web.csrf.valid(req, body(req).csrf)) return factorPage(req, res, { code: 'CSRF', status: 403 });
    const exchange = await currentExchange(req);
    if (!exchange) return dead(req, res, 'RECOVERY_EXPIRED', 410);
    if (exchange.secondFactor !== 'needed') return res.redirect(303, action('/password'));
    await web.login.start(req, res, {
      clientId: RECOVERY_CLIENT_ID,
      returnTo: action('/verified'),
      userId: exchange.userId,
    });
  });

  router.get('/verified', async (req, res) => {
    const exchange = await currentExchange(req);
    if (!exchange) return dead(req, res, 'RECOVERY_EXPIRED', 410);
    const login = await web.login.result(req, res, req.query.request_id);
    // The login made a browser session: the reset signs no one in, so it ends at once.
    if (login) {
      const user = await api.services.users.findById(login.userId);
      const actor = { via: 'recovery', userId: login.userId, ip: web.clientIp(req) };
      if (user)
        await api.services.resolve<UserAccounts>('userAccounts').endSession(actor, user, login.sid, [login.sid]);
    }
    if (!login || login.userId !== exchange.userId)
      return factorPage(req, res, { code: 'SECOND_FACTOR_FAILED', status: 403 });
    await recovery.secondFactorProven(exchange);
    res.redirect(303, action('/password'));
  });

  router.get('/password', async (req, res) => {
    const exchange = await currentExchange(req);
    if (!exchange) return dead(req, res, 'RECOVERY_EXPIRED', 410);
    if (exchange.secondFactor === 'needed')
      return factorPage(req, res, { code: 'SECOND_FACTOR_REQUIRED', status: 403 });
    passwordForm(req, res);
  });

  router.post('/password', api.services.http.form(), async (req, res) => {
    if (!web.csrf.valid(req, body(req).csrf)) return passwordForm(req, res, { code: 'CSRF', status: 403 });
    const exchangeId = readCookie(req, cookie('exchange'));
    let returnTo: string | null = null;
    try {
      returnTo = (await recovery.exchange(exchangeId)).returnTo;
      await recovery.accept(exchangeId, {
        password: body(req).password,
        confirm: body(req).confirm,
        req,
        messages: messagesFor(api, req),
      });
    } catch (err) {
      if (!isProtocolError(err)) throw err;
      if (err.code === 'RECOVERY_EXPIRED') return dead(req, res, err.code, err.status);
      if (err.code === 'SECOND_FACTOR_REQUIRED') return factorPage(req, res, { code: err.code, status: err.status });
      return passwordForm(req, res, { code: err.code, status: err.status });
    }
    res.clearCookie(cookie('exchange'), cookieOptions);
    // Not signed in by the reset (OWASP): back to the login it began at, if it is still open.
    const flow = returnTo ? await web.loginFlows.get(returnTo) : null;
    const signIn = flow && flow.status === 'active' && flow.expiresAt > api.services.clock.now() ? flow.id : null;
    const m = t(req);
    show(req, res, {
      id: 'gh-recovery-done',
      title: m.t('recovery.done_title'),
      content: html`<p role="status">${m.t('recovery.done_text')}</p>
        ${signIn ? html`<p><a id="gh-sign-in" href="${web.url(`/login?request_id=${encodeURIComponent(signIn)}`)}">${m.t('recovery.sign_in')}</a></p>` : null}`,
    });
  });

  /** "Forgot password?" beside the password on the hosted login page. */
  function loginLink(req: IncomingMessage, flow: LoginFlowView) {
    const stage = flow.stages[flow.stage] ?? [];
    if (!stage.includes(PASSWORD_METHOD)) return null;
    const uiLocales = typeof flow.oauth?.ui_locales === 'string' ? flow.oauth.ui_locales : null;
    return {
      method: PASSWORD_METHOD,
      href: withLogin('', flow.id),
      text: web.messages(req, uiLocales).t('recovery.link'),
    };
  }

  return { loginLink };
}
