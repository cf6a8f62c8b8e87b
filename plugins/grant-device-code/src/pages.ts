import type { Request, Response } from 'express';
import { html, type NamedLimit, type Services, type WebApi } from '@gatehouse-auth/core';
import { normalizeUserCode } from './codes.js';
import type { Confirmation, DeviceGrants } from './store.js';

export interface PageOptions {
  /** Counts the codes an address submits (right or wrong): a guesser is stopped with 429. */
  attempts: NamedLimit;
  /** The page's mount path (`/device`). */
  mount: string;
}

/**
 * The user code page (RFC 8628 §3.3): the user enters the code (or opens
 * verification_uri_complete), signs in to the device's app on the hosted login (single sign-on
 * when the browser's session suffices for that app), then allows or denies the device. Between
 * the steps the browser holds random ids only; the device request stays server-side.
 */
export function devicePages(
  web: WebApi,
  grants: DeviceGrants,
  services: Pick<Services, 'clock'>,
  options: PageOptions,
) {
  const action = (path = '') => web.url(`${options.mount}${path}`);
  const remaining = (expiresAt: number) => Math.max(1, Math.ceil((expiresAt - services.clock.now().getTime()) / 1000));

  /** The form to enter a code, with a notice (a wrong code, say) and its status. */
  function codeForm(req: Request, res: Response, input: { code?: string; notice?: string; status?: number }): void {
    const t = web.messages(req);
    web.page(req, res, {
      title: t.t('device.title'),
      status: input.status ?? 200,
      body: html`<main class="card" id="gh-device">
        <h1>${t.t('device.title')}</h1>
        ${input.notice ? html`<p class="error" role="alert">${input.notice}</p>` : null}
        <p>${t.t('device.enter')}</p>
        <form method="post" action="${action()}">
          <input type="hidden" name="csrf" value="${web.csrf.token(req, res)}" />
          <label for="gh-user-code">${t.t('device.code_label')}</label>
          <input
            id="gh-user-code"
            name="user_code"
            type="text"
            value="${input.code ?? ''}"
            autocomplete="off"
            autocapitalize="characters"
            spellcheck="false"
            maxlength="32"
            required
          />
          <button class="primary" type="submit">${t.t('device.continue')}</button>
        </form>
      </main>`,
    });
  }

  /** A page that ends the flow (answered, denied, gone). */
  function notice(req: Request, res: Response, title: string, text: string, status = 200): void {
    web.page(req, res, {
      title,
      status,
      body: html`<main class="card" id="gh-device-done">
        <h1>${title}</h1>
        <p>${text}</p>
      </main>`,
    });
  }

  /** A live request nobody answered yet, or null. */
  async function pending(device: string) {
    const request = await grants.request(device);
    if (!request || request.expiresAt <= services.clock.now().getTime()) return null;
    return (await grants.decision(device)) ? null : request;
  }

  async function showCodeForm(req: Request, res: Response): Promise<void> {
    const code = typeof req.query.user_code === 'string' ? req.query.user_code.slice(0, 32) : '';
    codeForm(req, res, { code });
  }

  async function submitCode(req: Request, res: Response): Promise<void> {
    const t = web.messages(req);
    if (!web.csrf.valid(req, req.body?.csrf)) {
      return codeForm(req, res, { notice: t.t('device.form_expired'), status: 403 });
    }
    // Every code counts, so a guesser is stopped before the check, whatever it would find.
    const wait = await options.attempts.hit(web.clientIp(req));
    if (wait !== null) {
      res.set('Retry-After', String(wait));
      return codeForm(req, res, { notice: t.t('device.too_many', { seconds: wait }), status: 429 });
    }
    const code = normalizeUserCode(req.body?.user_code);
    const device = code ? await grants.deviceOfUserCode(code) : null;
    const request = device ? await pending(device) : null;
    if (!device || !request) {
      req.log?.info?.({ ip: web.clientIp(req) }, 'device: wrong or expired user code');
      return codeForm(req, res, { notice: t.t('device.wrong_code'), status: 400 });
    }
    const flow = await grants.step('flow', { device }, remaining(request.expiresAt));
    await web.login.start(req, res, {
      clientId: request.clientId,
      returnTo: action(`/continue?flow=${encodeURIComponent(flow)}`),
    });
  }

  async function afterLogin(req: Request, res: Response): Promise<void> {
    const t = web.messages(req);
    // The login first: only the browser that did it reads it, so another one cannot spend the step.
    const login = await web.login.result(req, res, req.query.request_id);
    const flow = login ? await grants.takeStep('flow', req.query.flow) : null;
    if (!flow || !login || typeof flow.device !== 'string') {
      return codeForm(req, res, { notice: t.t('device.login_failed'), status: 400 });
    }
    const request = await pending(flow.device);
    if (!request) return notice(req, res, t.t('device.title'), t.t('device.gone'), 410);
    const confirmation: Confirmation = {
      device: flow.device,
      userId: login.userId,
      amr: login.amr,
      authTime: login.authTime,
    };
    const confirm = await grants.step('confirm', { ...confirmation }, remaining(request.expiresAt));
    const app = request.clientName;
    web.page(req, res, {
      title: t.t('device.confirm_title', { app }),
      body: html`<main class="card" id="gh-device-confirm">
        <h1>${t.t('device.confirm_title', { app })}</h1>
        <p>${t.t('device.confirm_text')}</p>
        ${
          request.scope.length
            ? html`<p>${t.t('device.confirm_scopes', { app })}</p>
                <ul>
                  ${request.scope.map((s) => html`<li><code>${s}</code></li>`)}
                </ul>`
            : null
        }
        <form method="post" action="${action('/confirm')}">
          <input type="hidden" name="csrf" value="${web.csrf.token(req, res)}" />
          <input type="hidden" name="confirm" value="${confirm}" />
          <button class="primary" name="decision" value="allow">${t.t('device.allow')}</button>
          <button name="decision" value="deny">${t.t('device.deny')}</button>
        </form>
      </main>`,
    });
  }

  async function answer(req: Request, res: Response): Promise<void> {
    const t = web.messages(req);
    if (!web.csrf.valid(req, req.body?.csrf)) {
      return notice(req, res, t.t('device.title'), t.t('device.form_expired'), 403);
    }
    const decision = req.body?.decision;
    if (decision !== 'allow' && decision !== 'deny') {
      return notice(req, res, t.t('device.title'), t.t('device.gone'), 400);
    }
    const confirmation = (await grants.takeStep('confirm', req.body?.confirm)) as Confirmation | null;
    const request = confirmation ? await pending(confirmation.device) : null;
    const approved = decision === 'allow';
    if (
      !confirmation ||
      !request ||
      !(await grants.decide(confirmation.device, request, {
        approved,
        userId: confirmation.userId,
        amr: confirmation.amr,
        authTime: confirmation.authTime,
      }))
    ) {
      return notice(req, res, t.t('device.title'), t.t('device.gone'), 410);
    }
    req.log?.info?.({ clientId: request.clientId, userId: confirmation.userId, approved }, 'device: user answered');
    if (approved) notice(req, res, t.t('device.approved_title'), t.t('device.approved_text'));
    else notice(req, res, t.t('device.denied_title'), t.t('device.denied_text'));
  }

  return { showCodeForm, submitCode, afterLogin, answer };
}
