import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import {
  html,
  isProtocolError,
  MethodModules,
  type AuthMethod,
  type JsonObject,
  type PluginApi,
  type UserAccounts,
  type MethodSetup,
} from '@gatehouse-auth/core';
import { csrfField, type Site, type SiteRequest } from '@gatehouse-auth/site-kit';
import { knowledgeOnly, textOf, type ActionGuard } from './guard.js';

const SCRIPT = readFileSync(new URL('../assets/account.js', import.meta.url), 'utf8');
const SCRIPT_VERSION = createHash('sha256').update(SCRIPT).digest('hex').slice(0, 16);
const SCRIPT_PATH = '/assets/account.js';

/** How the page sets a method up: a browser ceremony (a module), a code sent to an address, or a plain start. */
export type SetupKind = 'module' | 'address' | 'plain';

/** What the account page asks before a method's setup starts. */
export function setupKind(method: AuthMethod): SetupKind {
  if (method.page?.module && method.page.offer) return 'module';
  if (method.page?.sends) return 'address';
  return 'plain';
}

/** Whether a method's codes go to a phone (a text message, a call) rather than an email address. */
function isPhone(method: AuthMethod): boolean {
  return method.amr.includes('sms') || method.amr.includes('tel');
}

/**
 * Whether the user may set `method` up once more while it is set up: a passkey, another phone
 * or address, another device; not a second authenticator app.
 */
export function addsMore(method: AuthMethod): boolean {
  return Boolean(method.discoverable || method.page?.sends || method.device);
}

/**
 * The methods the page offers to add: `add_methods` from the options, else every registered
 * method with a setup, but a knowledge factor (the password has its own form) and methods
 * renewed as a whole (backup codes: "Make new codes").
 */
export function addableMethods(all: AuthMethod[], configured: string[] | undefined): AuthMethod[] {
  if (configured) return configured.flatMap((id) => all.filter((m) => m.id === id && m.enrollment));
  // A setup that takes files (a photo) has no form here.
  return all.filter((m) => m.enrollment && !knowledgeOnly(m.amr) && !m.page?.renew && !m.files?.length);
}

/**
 * Adding a way to sign in on the account page (issue 27): TOTP (QR code, then a code), a passkey
 * (the method's browser module, WebAuthn), a phone or email (a code sent there), a device (a QR
 * code to scan with the authenticator app). Each step is the setup API's operation
 * (management's `methodSetup.step`, decision 81), under the binding rule: a recent sign-in, and
 * more than a password for a credential that signs in alone or beside a second factor (security
 * checklist 12.3).
 */
export function setupRoutes(
  api: PluginApi,
  site: Site,
  guard: ActionGuard,
  opts: { addMethods: string[] | undefined; freshLogin: (r: SiteRequest) => Promise<void> },
): { addable: (r: SiteRequest) => Promise<AuthMethod[]> } {
  const base = site.href;
  const modules = new MethodModules(api.web);
  const addable = async (r: SiteRequest): Promise<AuthMethod[]> => {
    const listed = await api.services.resolve<UserAccounts>('userAccounts').methods(r.session.user, r.req);
    const all = listed.flatMap((m) => guard.methodOf(String(m.method)) ?? []);
    return addableMethods(all, opts.addMethods);
  };

  site.router.get(SCRIPT_PATH, (_req, res) => {
    res.set({
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=300',
      'X-Content-Type-Options': 'nosniff',
    });
    res.send(SCRIPT);
  });
  site.router.get('/methods/:id/:version/:file', modules.serve);

  const label = (r: SiteRequest, id: string) =>
    api.services.resolve<UserAccounts>('userAccounts').method(id, r.req)?.label ?? id;

  /** The method of the path if the page may add it, else a 404 page. */
  const methodOf = async (r: SiteRequest): Promise<AuthMethod | null> => {
    const id = String(r.req.params.method);
    const method = (await addable(r)).find((m) => m.id === id) ?? null;
    if (!method) site.refuse(r, 404, r.t.t('myaccount.add.no_such_method'));
    return method;
  };

  /** True when the sign-in may bind `method` now; else it answered (a fresh sign-in, or 403). */
  const checked = async (r: SiteRequest, method: AuthMethod, json: boolean): Promise<boolean> => {
    const refusal = await guard.mayBind(r, method);
    if (!refusal) return true;
    if (json) {
      const code = refusal === 'stale' ? 'REAUTHENTICATION_REQUIRED' : 'SETUP_NOT_ALLOWED';
      r.res
        .status(403)
        .json({ success: false, status: 403, error: { code, error: r.t.t(`myaccount.refused.${refusal}`) } });
    } else if (refusal === 'stale' && r.req.method === 'GET') {
      await opts.freshLogin(r);
    } else {
      site.refuse(r, 403, r.t.t(`myaccount.refused.${refusal}`));
    }
    return false;
  };

  const fail = (r: SiteRequest, err: unknown): void => {
    if (!isProtocolError(err) || err.status >= 500) throw err;
    site.refuse(r, err.status, `${r.t.t('myaccount.add.failed')} ${err.message}`);
  };

  site.get('/add/:method', '', async (r) => {
    const method = await methodOf(r);
    if (!method || !(await checked(r, method, false))) return;
    const name = label(r, method.id);
    const { t, session } = r;
    const action = `${base}/add/${encodeURIComponent(method.id)}`;
    const kind = setupKind(method);
    let body;
    if (kind === 'module') {
      const module = modules.url(base, method.id);
      // The page's own words, and the method module's (`method.<ID>.js.…`, the core's catalogs).
      const messages = JSON.stringify({
        ...api.web.loginFlows.messages(r.req).under([`method.${method.id}.js.`]),
        network: t.t('myaccount.js.network'),
        unavailable: t.t('myaccount.js.unavailable'),
        failed: t.t('myaccount.js.failed'),
      });
      body = html`<section class="panel">
        <p>${t.t('myaccount.add.module_text')}</p>
        <div
          id="gh-setup"
          data-method="${method.id}"
          data-action="${action}/setup"
          data-csrf="${session.csrf}"
          data-done="${base}?done=method_added"
          data-messages="${messages}"
        >
          <p id="gh-message" class="notice" role="status" hidden></p>
          <div class="actions">
            <button type="button" id="gh-setup-start" disabled>
              ${t.t('myaccount.add.module_button', { method: name })}
            </button>
          </div>
        </div>
        <p><a href="${base}">${t.t('myaccount.back')}</a></p>
        <script src="${base}${SCRIPT_PATH}?v=${SCRIPT_VERSION}"></script>
        ${module ? html`<script type="module" src="${module}"></script>` : ''}
      </section>`;
    } else {
      const phone = isPhone(method);
      const address =
        kind === 'address'
          ? html`<p>
              <label for="gh-address">${t.t(phone ? 'myaccount.add.phone' : 'myaccount.add.email')}</label>
              <input
                id="gh-address"
                name="address"
                required
                maxlength="255"
                type="${phone ? 'tel' : 'email'}"
                autocomplete="${phone ? 'tel' : 'email'}"
              />
            </p>`
          : '';
      body = html`<section class="panel">
        <form method="post" action="${action}/start">
          ${csrfField(session.csrf)}
          <p>${t.t(`myaccount.add.${kind}_text`)}</p>
          ${address}
          <div class="actions"><button type="submit" id="gh-setup-start">${t.t('myaccount.add.start')}</button></div>
        </form>
        <p><a href="${base}">${t.t('myaccount.back')}</a></p>
      </section>`;
    }
    site.render(r, t.t('myaccount.add.heading', { method: name }), body);
  });

  site.post('/add/:method/start', '', async (r) => {
    const method = await methodOf(r);
    if (!method || !(await checked(r, method, false))) return;
    const form = r.req.body as Record<string, unknown>;
    const input: Record<string, unknown> = {};
    if (setupKind(method) === 'address') {
      if (typeof form.address !== 'string' || !form.address.trim() || form.address.length > 255) {
        return site.refuse(r, 400, r.t.t('myaccount.add.address_missing'));
      }
      input.address = form.address.trim();
    }
    let data: JsonObject;
    try {
      data = await api.services
        .resolve<MethodSetup>('methodSetup')
        .step('initiation', method.id, r.session.user, input, r.req);
    } catch (err) {
      return fail(r, err);
    }
    await audit(api, r, 'method_setup_started', method.id);
    const { t, session } = r;
    const name = label(r, method.id);
    const action = `${base}/add/${encodeURIComponent(method.id)}`;
    const qr = textOf(data, 'qr_code');
    const secret = textOf(data, 'secret');
    const waits = data.exchange_id !== undefined;
    const parts = html`${
      qr && qr.startsWith('data:image/')
        ? html`<p><img id="gh-qr" src="${qr}" alt="${t.t('myaccount.add.qr_alt')}" width="240" height="240" /></p>`
        : ''
    }
    ${secret ? html`<p>${t.t('myaccount.add.secret')} <code id="gh-secret">${secret}</code></p>` : ''}
    ${textOf(data, 'medium_text') ? html`<p>${t.t('myaccount.add.sent', { to: textOf(data, 'medium_text')! })}</p>` : ''}`;
    if (!waits) {
      // Done at once (a device binds when its app scans the code): nothing to confirm here.
      const text = qr ? t.t('myaccount.add.scan_device') : t.t('myaccount.done.method_added');
      return site.render(
        r,
        t.t('myaccount.add.heading', { method: name }),
        html`<section class="panel">
          <p role="status">${text}</p>
          ${parts}
          <p><a href="${base}" id="gh-back">${t.t('myaccount.back')}</a></p>
        </section>`,
      );
    }
    site.render(
      r,
      t.t('myaccount.add.heading', { method: name }),
      html`<section class="panel">
        <p>${t.t(qr ? 'myaccount.add.scan_code' : 'myaccount.add.enter_code')}</p>
        ${parts}
        <form method="post" action="${action}/verify">
          ${csrfField(session.csrf)}
          <p>
            <label for="gh-code">${t.t('myaccount.add.code')}</label>
            <input
              id="gh-code"
              name="pass_code"
              required
              maxlength="64"
              inputmode="numeric"
              autocomplete="one-time-code"
            />
          </p>
          <div class="actions"><button type="submit">${t.t('myaccount.add.confirm')}</button></div>
        </form>
      </section>`,
    );
  });

  site.post('/add/:method/verify', '', async (r) => {
    const method = await methodOf(r);
    if (!method || !(await checked(r, method, false))) return;
    const code = (r.req.body as Record<string, unknown>).pass_code;
    if (typeof code !== 'string' || !code || code.length > 64) {
      return site.refuse(r, 400, r.t.t('myaccount.add.code_missing'));
    }
    try {
      await api.services
        .resolve<MethodSetup>('methodSetup')
        .step('verification', method.id, r.session.user, { pass_code: code.trim() }, r.req);
    } catch (err) {
      return fail(r, err);
    }
    await audit(api, r, 'method_added', method.id);
    site.done(r, '', 'method_added');
  });

  // The module's steps (its script posts the sign-in's CSRF token as a form field): JSON answers.
  site.post('/add/:method/setup/:step', '', async (r) => {
    const method = (await addable(r)).find((m) => m.id === String(r.req.params.method));
    const step = String(r.req.params.step);
    const refuse = (status: number, code: string, error: string): void => {
      r.res.status(status).json({ success: false, status, error: { code, error } });
    };
    if (!method || setupKind(method) !== 'module') {
      return refuse(404, 'METHOD_NOT_FOUND', r.t.t('myaccount.add.no_such_method'));
    }
    if (step !== 'initiation' && step !== 'verification') return refuse(404, 'ENROLLMENT_NOT_SUPPORTED', step);
    if (!(await checked(r, method, true))) return;
    const { csrf: _csrf, ...fields } = r.req.body as Record<string, unknown>;
    try {
      const data = await api.services
        .resolve<MethodSetup>('methodSetup')
        .step(step, method.id, r.session.user, fields, r.req);
      if (step === 'verification') await audit(api, r, 'method_added', method.id);
      r.res.status(200).set('Cache-Control', 'no-store').json({ success: true, status: 200, data });
    } catch (err) {
      if (!isProtocolError(err) || err.status >= 500) throw err;
      refuse(err.status, err.code, err.message);
    }
  });

  return { addable };
}

async function audit(api: PluginApi, r: SiteRequest, action: string, method: string): Promise<void> {
  await api.services.events.record({
    type: `${r.actor.via}.${action}`,
    userId: r.session.user.id,
    method,
    ip: r.actor.ip,
    data: { actor: r.actor.userId },
  });
}
