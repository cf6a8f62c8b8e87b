import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import { html, type LoginFlowView, type PluginApi, type SafeHtml } from '@gatehouse-auth/core';
import type { AppRegistration, FieldName } from './config.js';
import { RegistrationError, type Pending, type RegistrationService } from './service.js';

/** Where the pages live. */
export const REGISTER_PATH = '/register';

type Messages = ReturnType<PluginApi['web']['messages']>;

/** The autocomplete hint and input type of each field. */
const INPUTS: Record<FieldName, { type: string; autocomplete: string }> = {
  username: { type: 'text', autocomplete: 'username' },
  email: { type: 'email', autocomplete: 'email' },
  phone: { type: 'tel', autocomplete: 'tel' },
  given_name: { type: 'text', autocomplete: 'given-name' },
  family_name: { type: 'text', autocomplete: 'family-name' },
  middle_name: { type: 'text', autocomplete: 'additional-name' },
  nickname: { type: 'text', autocomplete: 'nickname' },
  birthdate: { type: 'text', autocomplete: 'bday' },
  gender: { type: 'text', autocomplete: 'sex' },
  locale: { type: 'text', autocomplete: 'language' },
  zoneinfo: { type: 'text', autocomplete: 'off' },
  website: { type: 'url', autocomplete: 'url' },
  picture: { type: 'url', autocomplete: 'photo' },
};

/**
 * The hosted registration pages: the form (GET/POST /register), then the code (GET/POST
 * /register/code). Forms carry a CSRF token; every refusal is shown with its status and its code
 * in `data-error`.
 */
export function registrationPages(api: PluginApi, service: RegistrationService) {
  const { web, services } = api;
  const router = services.http.createRouter();
  const uiLocales = (flow: LoginFlowView | null) =>
    typeof flow?.oauth?.ui_locales === 'string' ? (flow.oauth.ui_locales as string) : null;

  function errorLine(t: Messages, err: RegistrationError | null): SafeHtml {
    if (!err) return html``;
    const key = `reg.error.${err.code}`;
    const text = t.or(key, t.t('reg.error.REQUEST'), {
      field: err.field ? t.or(`reg.field.${err.field}`, err.field) : '',
    });
    return html`<p class="message error" role="alert" id="gh-error" data-error="${err.code}">${text}</p>`;
  }

  /** A page for a request that cannot register (no flow, another browser's, an app without registration). */
  function problemPage(req: IncomingMessage, res: Response, err: RegistrationError, flow: LoginFlowView | null) {
    const t = web.messages(req, uiLocales(flow));
    if (err.retryAfter) res.set('Retry-After', String(err.retryAfter));
    const known = t.or(`reg.error.${err.code}`, '', { field: err.field ?? '' });
    web.page(req, res, {
      status: err.status,
      title: t.t('reg.error.title'),
      uiLocales: uiLocales(flow),
      app: flow?.clientId ?? null,
      body: html`<main class="card" id="gh-registration">
        <h1>${t.t('reg.error.title')}</h1>
        <p class="message error" role="alert" id="gh-error" data-error="${err.code}">
          ${known || t.t('reg.error.REQUEST')}
        </p>
      </main>`,
    });
  }

  function formPage(
    req: Request,
    res: Response,
    flow: LoginFlowView,
    app: AppRegistration,
    values: Record<string, string>,
    err: RegistrationError | null,
  ) {
    const t = web.messages(req, uiLocales(flow));
    if (err?.retryAfter) res.set('Retry-After', String(err.retryAfter));
    const fields = app.fields.map((f) => {
      const input = INPUTS[f.name];
      const label = html`${t.t(`reg.field.${f.name}`)}${f.required ? '' : html` <span class="note">${t.t('reg.optional')}</span>`}`;
      return html`<div class="field">
        <label for="gh-f-${f.name}">${label}</label>
        <input
          id="gh-f-${f.name}"
          name="${f.name}"
          type="${input.type}"
          autocomplete="${input.autocomplete}"
          value="${values[f.name] ?? ''}"
          ${f.required ? html`required` : ''}
          ${err?.field === f.name ? html`aria-invalid="true"` : ''}
        />
      </div>`;
    });
    const terms = app.terms_version
      ? html`<div class="field">
          <label class="choice"
            ><input type="checkbox" name="terms" value="accepted" id="gh-terms" required />
            ${t.t('reg.terms', { version: app.terms_version })}</label
          >
          ${app.terms_url ? html`<a href="${app.terms_url}" target="_blank" rel="noopener">${t.t('reg.terms_link')}</a>` : ''}
        </div>`
      : '';
    const signIn = web.loginFlows.loginUiUrl(flow) ?? web.url(`/login?request_id=${encodeURIComponent(flow.id)}`);
    web.page(req, res, {
      status: err?.status ?? 200,
      title: t.t('reg.title', { app: flow.clientName }),
      formTargets: web.loginFlows.formTargets(flow),
      uiLocales: uiLocales(flow),
      app: flow.clientId,
      body: html`<main class="card" id="gh-registration">
        <h1>${t.t('reg.title', { app: flow.clientName })}</h1>
        ${errorLine(t, err)}
        <form method="post" action="${web.url(REGISTER_PATH)}" novalidate>
          <input type="hidden" name="csrf" value="${web.csrf.token(req, res)}" />
          <input type="hidden" name="request_id" value="${flow.id}" />
          ${fields}
          <div class="field">
            <label for="gh-password">${t.t('reg.password')}</label>
            <input
              id="gh-password"
              name="password"
              type="password"
              autocomplete="new-password"
              required
              ${err?.field === 'password' ? html`aria-invalid="true"` : ''}
            />
          </div>
          <div class="field">
            <label for="gh-password-repeat">${t.t('reg.password_repeat')}</label>
            <input
              id="gh-password-repeat"
              name="password_repeat"
              type="password"
              autocomplete="new-password"
              required
            />
          </div>
          ${terms}
          <button type="submit" class="primary" id="gh-submit">${t.t('reg.submit')}</button>
        </form>
        <p><a href="${signIn}" id="gh-sign-in">${t.t('reg.sign_in')}</a></p>
      </main>`,
    });
  }

  function codePage(req: Request, res: Response, flow: LoginFlowView, pending: Pending, err: RegistrationError | null) {
    const t = web.messages(req, uiLocales(flow));
    if (err?.retryAfter) res.set('Retry-After', String(err.retryAfter));
    web.page(req, res, {
      status: err?.status ?? 200,
      title: t.t('reg.code.title'),
      formTargets: web.loginFlows.formTargets(flow),
      uiLocales: uiLocales(flow),
      app: flow.clientId,
      body: html`<main class="card" id="gh-registration">
        <h1>${t.t('reg.code.title')}</h1>
        <p id="gh-sent">${t.t('reg.code.sent', { address: pending.masked, minutes: pending.minutes })}</p>
        ${errorLine(t, err)}
        <form method="post" action="${web.url(`${REGISTER_PATH}/code`)}" novalidate>
          <input type="hidden" name="csrf" value="${web.csrf.token(req, res)}" />
          <input type="hidden" name="request_id" value="${flow.id}" />
          <input type="hidden" name="registration" value="${pending.id}" />
          <div class="field">
            <label for="gh-code">${t.t('reg.code.label')}</label>
            <input
              id="gh-code"
              name="code"
              type="text"
              inputmode="numeric"
              autocomplete="one-time-code"
              required
              ${err ? html`aria-invalid="true"` : ''}
            />
          </div>
          <button type="submit" class="primary" id="gh-submit">${t.t('reg.code.submit')}</button>
        </form>
      </main>`,
    });
  }

  const str = (value: unknown) => (typeof value === 'string' ? value : '');

  router.get('/', async (req: Request, res: Response) => {
    try {
      const { flow, app } = await service.flowFor(req, req.query.request_id);
      formPage(req, res, flow, app, {}, null);
    } catch (err) {
      if (err instanceof RegistrationError) return problemPage(req, res, err, null);
      throw err;
    }
  });

  router.post('/', services.http.form(), async (req: Request, res: Response) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!web.csrf.valid(req, body.csrf)) {
      return problemPage(req, res, new RegistrationError(403, 'CSRF_INVALID', 'the form has expired'), null);
    }
    let target: Awaited<ReturnType<RegistrationService['flowFor']>>;
    try {
      target = await service.flowFor(req, body.request_id);
    } catch (err) {
      if (err instanceof RegistrationError) return problemPage(req, res, err, null);
      throw err;
    }
    const { flow, app } = target;
    const values = Object.fromEntries(app.fields.map((f) => [f.name, str(body[f.name]).slice(0, 512)]));
    try {
      const started = await service.start(req, flow, {
        fields: values,
        password: str(body.password),
        passwordRepeat: str(body.password_repeat),
        termsAccepted: body.terms === 'accepted',
      });
      if ('continuation' in started) return res.redirect(303, started.continuation.location);
      const next = `${REGISTER_PATH}/code?request_id=${encodeURIComponent(flow.id)}&registration=${encodeURIComponent(started.id)}`;
      res.redirect(303, web.url(next));
    } catch (err) {
      if (err instanceof RegistrationError) return formPage(req, res, flow, app, values, err);
      throw err;
    }
  });

  router.get('/code', async (req: Request, res: Response) => {
    let flow: LoginFlowView | null = null;
    try {
      ({ flow } = await service.flowFor(req, req.query.request_id));
      const pending = await service.pending(flow, str(req.query.registration));
      if (!pending) throw new RegistrationError(410, 'CODE_EXPIRED', 'no registration waits for a code');
      codePage(req, res, flow, pending, null);
    } catch (err) {
      if (err instanceof RegistrationError) return problemPage(req, res, err, flow);
      throw err;
    }
  });

  router.post('/code', services.http.form(), async (req: Request, res: Response) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!web.csrf.valid(req, body.csrf)) {
      return problemPage(req, res, new RegistrationError(403, 'CSRF_INVALID', 'the form has expired'), null);
    }
    let flow: LoginFlowView | null = null;
    try {
      ({ flow } = await service.flowFor(req, body.request_id));
      const pending = await service.pending(flow, str(body.registration));
      try {
        const done = await service.confirm(req, flow, str(body.registration), str(body.code));
        res.redirect(303, done.continuation.location);
      } catch (err) {
        // A wrong code: the same page again, to try once more.
        if (err instanceof RegistrationError && err.code === 'CODE_INVALID' && pending) {
          return codePage(req, res, flow, pending, err);
        }
        throw err;
      }
    } catch (err) {
      if (err instanceof RegistrationError) return problemPage(req, res, err, flow);
      throw err;
    }
  });

  return router;
}
