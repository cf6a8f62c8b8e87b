import {
  ApiError,
  html,
  isProtocolError,
  pageLayout,
  routeInput,
  verificationError,
  type AuthMethod,
  type JsonObject,
  type LoginFlowView,
  type PluginApi,
  type RequiredAction,
  type SafeHtml,
  type UserAccounts,
  type MethodModules,
  type UserRecord,
  type MethodSetup,
} from '@gatehouse-auth/core';
import type { Request, Response } from 'express';
import { LOGIN_API } from './api.js';
import { ENROLL_JS, MESSAGES_JS } from './assets.js';
import type { Messages } from './methods.js';

type Router = ReturnType<PluginApi['services']['http']['createRouter']>;

/** The app key that lets users set up, during a login, a method its stage asks for. */
export const ENROLL_ON_LOGIN = 'enroll_on_login';

/** Where the setup screens live, under the plugin's `/login`. */
export const ENROLL_PATH = '/enroll';
export const REQUIRED_PATH = '/required';

/** A pending setup lives this long (management's `methodSetup` keeps the method's state as long). */
const STARTED_TTL_SECONDS = 600;

/**
 * `stage`: the login's current stage asks for a method the user has none of, and the app has
 * `enroll_on_login` (the stage completes with the setup's proof). `required`: an admin asked the
 * user for a second factor; the login is complete and waits on the required-actions page.
 */
type Mode = 'stage' | 'required';

interface SetupFlow {
  flow: LoginFlowView;
  user: UserRecord;
  mode: Mode;
}

export interface SetupPagesInput {
  api: PluginApi;
  router: Router;
  base: string;
  modules: MethodModules;
  /** The core's messages of a login's page (for the method labels and the scripts' texts). */
  coreMessages(req: Request, flow: LoginFlowView): Messages;
  /** The plugin's error page for a flow that is not there, not this browser's, or over. */
  flowError(req: Request, res: Response, flow: LoginFlowView | null, requestId: unknown): void;
}

/**
 * The setup screens of the hosted page: a method set up at the stage that needs it
 * (`enroll_on_login`), and what an admin requires at the next sign-in (a new password, a second
 * factor). Forms post with a CSRF token; a JS ceremony (a passkey) calls the JSON step endpoint.
 * Each setup is bound to the browser's login flow and was started by it (a record by flow id).
 */
export function setupPages(input: SetupPagesInput): void {
  const { api, router, base, modules } = input;
  const { web } = api;
  const accounts = () => api.services.resolve<UserAccounts>('userAccounts');
  const now = () => api.services.clock.now();
  const tries = web.limit('setup', 30, 600);
  const started = api.records;

  const uiLocales = (flow: LoginFlowView) =>
    typeof flow.oauth?.ui_locales === 'string' ? flow.oauth.ui_locales : null;
  const messages = (req: Request, flow: LoginFlowView) => web.messages(req, uiLocales(flow));

  /** The flow of a request id in the given mode, for this browser, with its user; else null. */
  async function flowFor(req: Request, requestId: unknown, mode: Mode): Promise<SetupFlow | null> {
    const flow = await web.loginFlows.get(requestId);
    if (!flow || !flow.userId || !web.loginFlows.isBound(req, flow) || flow.expiresAt <= now()) return null;
    if (mode === 'stage') {
      if (flow.status !== 'active' || flow.stage >= flow.stages.length) return null;
      if (flow.appSettings[ENROLL_ON_LOGIN] !== true) return null;
    } else if (flow.status !== 'completed') return null;
    const user = await api.services.users.findById(flow.userId);
    if (!user || user.status !== 'active') return null;
    return { flow, user, mode };
  }

  /** Methods with a setup this page can run: a JS ceremony (`page.offer`), a code to confirm, or a device to bind. */
  const canRun = (method: AuthMethod) =>
    Boolean(method.enrollment && (method.page?.offer || method.enrollment.verify || method.device));
  const secondFactor = (method: AuthMethod) => !method.amr.every((v) => v === 'pwd');

  /** What the user may set up now, in the stage's (or the registry's) order. */
  async function candidates(req: Request, s: SetupFlow): Promise<AuthMethod[]> {
    const out: AuthMethod[] = [];
    if (s.mode === 'stage') {
      for (const method of web.loginFlows.stageMethods(s.flow)) {
        if (!canRun(method)) continue;
        try {
          await web.setup.duringLogin(s.flow, method.id, req);
          out.push(method);
        } catch (err) {
          if (!isProtocolError(err)) throw err;
        }
      }
      return out;
    }
    for (const listed of await accounts().methods(s.user, req)) {
      const method = web.loginFlows.method(String(listed.method));
      if (listed.enrolled === true || !canRun(method) || !secondFactor(method) || method.discoverable) continue;
      if (await web.setup.mayBind(s.flow, method.id, req)) out.push(method);
    }
    return out;
  }

  async function hasSecondFactor(req: Request, user: UserRecord): Promise<boolean> {
    for (const listed of await accounts().methods(user, req)) {
      if (listed.enrolled === true && secondFactor(web.loginFlows.method(String(listed.method)))) return true;
    }
    return false;
  }

  const requiredUrl = (flow: LoginFlowView) =>
    `${base}/login${REQUIRED_PATH}?request_id=${encodeURIComponent(flow.id)}`;
  const stageUrl = (flow: LoginFlowView) => `${base}/login?request_id=${encodeURIComponent(flow.id)}`;
  const actor = (req: Request, user: UserRecord) => ({ via: 'login', userId: user.id, ip: web.clientIp(req) });

  /** One step of the setup, as the mode does it; where the browser goes once it is done, else null. */
  async function runStep(
    req: Request,
    s: SetupFlow,
    method: AuthMethod,
    step: 'initiation' | 'verification',
    body: Record<string, unknown>,
  ): Promise<{ response: JsonObject; location: string | null }> {
    if (s.mode === 'stage') {
      const { response, continuation } = await api.services
        .resolve<MethodSetup>('methodSetup')
        .stepDuringLogin(s.flow, method.id, step, body, req);
      return { response, location: continuation?.location ?? null };
    }
    if (!(await web.setup.mayBind(s.flow, method.id, req))) throw verificationError('SETUP_NOT_ALLOWED');
    const response = await api.services.resolve<MethodSetup>('methodSetup').step(step, method.id, s.user, body, req);
    if (step === 'verification' && (await hasSecondFactor(req, s.user))) {
      const left = (await accounts().requiredActions(s.user.id)).filter((a) => a !== 'second_factor');
      await accounts().setRequiredActions(actor(req, s.user), s.user, left);
      return { response, location: requiredUrl(s.flow) };
    }
    return { response, location: null };
  }

  // ─── pages ───

  function send(
    req: Request,
    res: Response,
    s: SetupFlow,
    title: string,
    body: SafeHtml,
    status = 200,
    script = false,
  ) {
    const t = messages(req, s.flow);
    const brand = web.brand(s.flow.clientId);
    web.headers(res, web.loginFlows.formTargets(s.flow), 'same-origin', brand);
    const head = script
      ? html`<script src="${base}/login/assets/messages.js?v=${MESSAGES_JS.version}" defer></script>
          <script src="${base}/login/assets/enroll.js?v=${ENROLL_JS.version}" defer></script>`
      : '';
    const page = { base, t, brand };
    res.status(status).send(pageLayout(page, title, body, null, head));
  }

  const hidden = (s: SetupFlow, csrf: string) =>
    html`<input type="hidden" name="request_id" value="${s.flow.id}" />
      <input type="hidden" name="mode" value="${s.mode}" />
      <input type="hidden" name="csrf" value="${csrf}" />`;

  const message = (text: string | null) =>
    text ? html`<p id="gh-message" class="message error" role="alert">${text}</p>` : '';

  const label = (req: Request, s: SetupFlow, method: AuthMethod) =>
    input.coreMessages(req, s.flow).or(`method.${method.id}.label`, method.page?.label ?? method.id);

  function titleOf(req: Request, s: SetupFlow) {
    const t = messages(req, s.flow);
    return s.mode === 'stage'
      ? t.t('enroll.title', { app: s.flow.clientName })
      : t.t('required.factor.title', { app: s.flow.clientName });
  }

  /** The choice of a method to set up. */
  async function chooser(req: Request, res: Response, s: SetupFlow, error: string | null = null, status = 200) {
    const t = messages(req, s.flow);
    const methods = await candidates(req, s);
    const title = titleOf(req, s);
    if (!methods.length) {
      const text = s.mode === 'stage' ? t.t('enroll.none.text') : t.t('required.factor.none');
      const heading = s.mode === 'stage' ? t.t('enroll.none.title') : title;
      return send(
        req,
        res,
        s,
        heading,
        html`<main class="card">
          <h1>${heading}</h1>
          <p>${text}</p>
        </main>`,
        409,
      );
    }
    const intro =
      s.mode === 'stage'
        ? t.t('enroll.intro', { app: s.flow.clientName })
        : t.t('required.factor.intro', { app: s.flow.clientName });
    const body = html`<main class="card" id="gh-enroll">
      <h1>${title}</h1>
      <p>${intro}</p>
      ${message(error)}
      <form method="post" action="${base}/login${ENROLL_PATH}/start">
        ${hidden(s, web.csrf.token(req, res))}
        <fieldset>
          <legend>${t.t('enroll.method')}</legend>
          ${methods.map(
            (m, i) =>
              html`<label class="choice"
                ><input type="radio" name="method" value="${m.id}" ${i === 0 ? html` checked` : ''} />
                ${label(req, s, m)}</label
              >`,
          )}
        </fieldset>
        <button type="submit" class="primary" id="gh-enroll-start">${t.t('enroll.start')}</button>
      </form>
    </main>`;
    send(req, res, s, title, body, status);
  }

  /** A code method's first screen: where to send the code. */
  function addressForm(req: Request, res: Response, s: SetupFlow, method: AuthMethod, error: string | null) {
    const t = messages(req, s.flow);
    const title = titleOf(req, s);
    const body = html`<main class="card">
      <h1>${label(req, s, method)}</h1>
      ${message(error)}
      <form method="post" action="${base}/login${ENROLL_PATH}/start">
        ${hidden(s, web.csrf.token(req, res))}
        <input type="hidden" name="method" value="${method.id}" />
        <div class="field">
          <label for="gh-address">${t.t('enroll.address.label')}</label>
          <input id="gh-address" name="address" type="text" autocomplete="off" aria-describedby="gh-address-help" />
          <p class="note" id="gh-address-help">${t.t('enroll.address.help')}</p>
        </div>
        <button type="submit" class="primary">${t.t('enroll.address.send')}</button>
      </form>
    </main>`;
    send(req, res, s, title, body, error ? 400 : 200);
  }

  /** After the initiation: what the method answered (a QR code, a key, where a code went), and the confirmation. */
  function confirmPage(
    req: Request,
    res: Response,
    s: SetupFlow,
    method: AuthMethod,
    response: JsonObject,
    error: string | null = null,
    status = 200,
  ) {
    const t = messages(req, s.flow);
    const qr =
      typeof response.qr_code === 'string' && response.qr_code.startsWith('data:image/') ? response.qr_code : null;
    const secret = typeof response.secret === 'string' ? response.secret : null;
    const medium = typeof response.medium_text === 'string' ? response.medium_text : null;
    const device = Boolean(method.device) && !method.enrollment?.verify;
    const next = s.mode === 'stage' ? stageUrl(s.flow) : requiredUrl(s.flow);
    const body = html`<main class="card" id="gh-enroll-confirm">
      <h1>${label(req, s, method)}</h1>
      ${message(error)}
      ${
        qr
          ? html`<p>${device ? t.t('enroll.device') : t.t('enroll.qr')}</p>
              <p><img id="gh-qr" src="${qr}" alt="QR code" width="200" height="200" /></p>`
          : ''
      }
      ${secret ? html`<p>${t.t('enroll.secret')} <code id="gh-secret">${secret}</code></p>` : ''}
      ${medium ? html`<p>${t.t('enroll.sent', { medium })}</p>` : ''}
      ${
        device
          ? html`<p>
              <a class="button primary" id="gh-enroll-continue" href="${next}">${t.t('enroll.device.continue')}</a>
            </p>`
          : html`<form method="post" action="${base}/login${ENROLL_PATH}/verify">
              ${hidden(s, web.csrf.token(req, res))}
              <input type="hidden" name="method" value="${method.id}" />
              <div class="field">
                <label for="gh-code">${t.t('enroll.code')}</label>
                <input id="gh-code" name="pass_code" type="text" inputmode="numeric" autocomplete="one-time-code" />
              </div>
              <button type="submit" class="primary" id="gh-enroll-confirm-button">${t.t('enroll.confirm')}</button>
            </form>`
      }
      <form method="post" action="${base}/login${ENROLL_PATH}/start">
        ${hidden(s, web.csrf.token(req, res))}
        <button type="submit" id="gh-enroll-again">${t.t('enroll.again')}</button>
      </form>
    </main>`;
    send(req, res, s, titleOf(req, s), body, status);
  }

  /** A method whose setup is a browser ceremony (a passkey): its module's `enroll` driver runs it. */
  function ceremonyPage(req: Request, res: Response, s: SetupFlow, method: AuthMethod) {
    const core = input.coreMessages(req, s.flow);
    const module = modules.url(`${base}/login`, method.id);
    const offer = method.page!.offer!;
    const body = html`<main
      class="card"
      id="gh-enroll-ceremony"
      data-request-id="${s.flow.id}"
      data-method="${method.id}"
      data-mode="${s.mode}"
      data-base="${base}"
      data-messages="${JSON.stringify(core.under(['js.offer.', `method.${method.id}.js.`]))}"
    >
      <h1>${core.or(`method.${method.id}.offer.title`, offer.title)}</h1>
      <p>${core.or(`method.${method.id}.offer.text`, offer.text)}</p>
      <p id="gh-message" class="message" role="status" aria-live="polite"></p>
      <button type="button" id="gh-accept" class="primary">
        ${core.or(`method.${method.id}.offer.accept`, offer.accept)}
      </button>
      <p>
        <a
          href="${s.mode === 'stage' ? `${base}/login${ENROLL_PATH}?request_id=${encodeURIComponent(s.flow.id)}` : requiredUrl(s.flow)}"
          >${messages(req, s.flow).t('enroll.again')}</a
        >
      </p>
      ${module ? html`<script type="module" src="${module}"></script>` : ''}
    </main>`;
    send(req, res, s, titleOf(req, s), body, 200, true);
  }

  /** A refusal of a step as the page says it. */
  function stepError(req: Request, s: SetupFlow, err: unknown): { text: string; status: number } {
    if (!isProtocolError(err)) throw err;
    const t = messages(req, s.flow);
    const code = (err as { code?: string }).code;
    const status = (err as { status?: number }).status ?? 400;
    const key =
      code === 'VERIFICATION_FAILED'
        ? 'enroll.error.code'
        : code === 'TOO_MANY_ATTEMPTS'
          ? 'enroll.error.attempts'
          : code === 'ENROLLMENT_NOT_STARTED'
            ? 'enroll.error.not_started'
            : code === 'SETUP_NOT_ALLOWED' || code === 'METHOD_NOT_ENABLED'
              ? 'enroll.error.not_allowed'
              : 'enroll.error.failed';
    return { text: t.t(key), status };
  }

  /** The form's flow, CSRF and rate checks; answers the page itself (and null) when they fail. */
  async function formFlow(req: Request, res: Response): Promise<SetupFlow | null> {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const mode: Mode = form.mode === 'required' ? 'required' : 'stage';
    const s = await flowFor(req, form.request_id, mode);
    if (!s) {
      input.flowError(req, res, await web.loginFlows.get(form.request_id), form.request_id);
      return null;
    }
    const t = messages(req, s.flow);
    if (!web.csrf.valid(req, form.csrf)) {
      send(
        req,
        res,
        s,
        t.t('enroll.error.csrf'),
        html`<main class="card"><h1>${t.t('enroll.error.csrf')}</h1></main>`,
        403,
      );
      return null;
    }
    if (mode === 'required' && !(await accounts().requiredActions(s.user.id)).includes('second_factor')) {
      res.redirect(303, requiredUrl(s.flow));
      return null;
    }
    const wait = await tries.hit(s.flow.id);
    if (wait) {
      res.set('Retry-After', String(wait));
      send(
        req,
        res,
        s,
        t.t('enroll.error.rate'),
        html`<main class="card"><h1>${t.t('enroll.error.rate')}</h1></main>`,
        429,
      );
      return null;
    }
    return s;
  }

  const methodOf = async (req: Request, s: SetupFlow, id: unknown) =>
    (await candidates(req, s)).find((m) => m.id === id) ?? null;
  const startedKey = (s: SetupFlow) => `setup:${s.flow.id}`;

  router.get(ENROLL_PATH, async (req: Request, res: Response) => {
    const s = await flowFor(req, req.query.request_id, 'stage');
    if (!s) return input.flowError(req, res, await web.loginFlows.get(req.query.request_id), req.query.request_id);
    await chooser(req, res, s);
  });

  router.post(`${ENROLL_PATH}/start`, api.services.http.form(), async (req: Request, res: Response) => {
    const s = await formFlow(req, res);
    if (!s) return;
    const form = req.body as Record<string, unknown>;
    if (form.method === undefined) return chooser(req, res, s);
    const method = await methodOf(req, s, form.method);
    if (!method) return chooser(req, res, s, messages(req, s.flow).t('enroll.error.not_allowed'), 409);
    if (method.page?.offer) return ceremonyPage(req, res, s, method);
    const needsAddress = Boolean(method.page?.sends);
    if (needsAddress && typeof form.address !== 'string') return addressForm(req, res, s, method, null);
    let result;
    try {
      result = await runStep(req, s, method, 'initiation', needsAddress ? { address: form.address } : {});
    } catch (err) {
      const { text } = stepError(req, s, err);
      return needsAddress ? addressForm(req, res, s, method, text) : chooser(req, res, s, text, 400);
    }
    await started.put(startedKey(s), { method: method.id, mode: s.mode }, { ttlSeconds: STARTED_TTL_SECONDS });
    confirmPage(req, res, s, method, result.response);
  });

  router.post(`${ENROLL_PATH}/verify`, api.services.http.form(), async (req: Request, res: Response) => {
    const s = await formFlow(req, res);
    if (!s) return;
    const form = req.body as Record<string, unknown>;
    const record = await started.get(startedKey(s));
    const method = record?.data.method === form.method ? await methodOf(req, s, form.method) : null;
    if (!method || record?.data.mode !== s.mode) {
      return chooser(req, res, s, messages(req, s.flow).t('enroll.error.not_started'), 409);
    }
    try {
      const { location } = await runStep(req, s, method, 'verification', { pass_code: String(form.pass_code ?? '') });
      await started.delete(startedKey(s));
      res.redirect(303, location ?? (s.mode === 'stage' ? stageUrl(s.flow) : requiredUrl(s.flow)));
    } catch (err) {
      const { text, status } = stepError(req, s, err);
      confirmPage(req, res, s, method, {}, text, status);
    }
  });

  // The JSON steps of a browser ceremony (enroll.js): the flow's cookie and a JSON body (no form
  // can send one across sites) stand in for the CSRF token.
  router.post(LOGIN_API.enrollSetup.path, api.services.http.json(), async (req: Request, res: Response) => {
    const { body } = routeInput(LOGIN_API.enrollSetup, req);
    const mode: Mode = body.mode === 'required' ? 'required' : 'stage';
    const s = await flowFor(req, body.request_id, mode);
    if (!s) throw verificationError('FLOW_NOT_BOUND', 'this sign-in cannot set anything up');
    if (mode === 'required' && !(await accounts().requiredActions(s.user.id)).includes('second_factor')) {
      throw verificationError('SETUP_NOT_ALLOWED', 'nothing to set up');
    }
    const step = String(req.params.step);
    if (step !== 'initiation' && step !== 'verification') throw verificationError('ENROLLMENT_NOT_SUPPORTED');
    const wait = await tries.hit(s.flow.id);
    if (wait) {
      res.set('Retry-After', String(wait));
      throw verificationError('TOO_MANY_ATTEMPTS');
    }
    const method = await methodOf(req, s, body.method);
    if (!method?.page?.offer) throw verificationError('SETUP_NOT_ALLOWED', 'this method cannot be set up here');
    if (step === 'verification' && (await started.get(startedKey(s)))?.data.method !== method.id) {
      throw new ApiError(400, 'ENROLLMENT_NOT_STARTED', 'start the setup first');
    }
    const { request_id: _r, mode: _m, method: _id, sub: _s, ...fields } = body;
    const { response, location } = await runStep(req, s, method, step, fields);
    if (step === 'initiation') {
      await started.put(startedKey(s), { method: method.id, mode }, { ttlSeconds: STARTED_TTL_SECONDS });
    } else await started.delete(startedKey(s));
    res
      .status(200)
      .set('Cache-Control', 'no-store')
      .json({
        success: true,
        status: 200,
        data: response,
        location: location ?? (mode === 'stage' ? stageUrl(s.flow) : requiredUrl(s.flow)),
      });
  });

  // ─── what an admin requires at the next sign-in (the core sends the completed login here) ───

  function passwordPage(req: Request, res: Response, s: SetupFlow, error: string | null = null, status = 200) {
    const t = messages(req, s.flow);
    const title = t.t('required.password.title');
    const body = html`<main class="card" id="gh-required-password">
      <h1>${title}</h1>
      <p>${t.t('required.password.intro', { app: s.flow.clientName })}</p>
      ${message(error)}
      <form method="post" action="${base}/login${REQUIRED_PATH}/password">
        ${hidden(s, web.csrf.token(req, res))}
        <div class="field">
          <label for="gh-new-password">${t.t('required.password.new')}</label>
          <input id="gh-new-password" name="password" type="password" autocomplete="new-password" />
        </div>
        <div class="field">
          <label for="gh-repeat-password">${t.t('required.password.repeat')}</label>
          <input id="gh-repeat-password" name="repeat" type="password" autocomplete="new-password" />
        </div>
        <button type="submit" class="primary" id="gh-password-save">${t.t('required.password.save')}</button>
      </form>
    </main>`;
    send(req, res, s, title, body, status);
  }

  router.get(REQUIRED_PATH, async (req: Request, res: Response) => {
    const s = await flowFor(req, req.query.request_id, 'required');
    if (!s) return input.flowError(req, res, await web.loginFlows.get(req.query.request_id), req.query.request_id);
    let actions: RequiredAction[] = await accounts().requiredActions(s.user.id);
    if (actions.includes('second_factor') && (await hasSecondFactor(req, s.user))) {
      actions = await accounts().setRequiredActions(
        actor(req, s.user),
        s.user,
        actions.filter((a) => a !== 'second_factor'),
      );
    }
    if (actions.includes('change_password')) return passwordPage(req, res, s);
    if (actions.includes('second_factor')) return chooser(req, res, s);
    res.redirect(303, web.loginFlows.completedLocation(s.flow));
  });

  router.post(`${REQUIRED_PATH}/password`, api.services.http.form(), async (req: Request, res: Response) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const s = await flowFor(req, form.request_id, 'required');
    if (!s) return input.flowError(req, res, await web.loginFlows.get(form.request_id), form.request_id);
    const t = messages(req, s.flow);
    if (!web.csrf.valid(req, form.csrf)) return passwordPage(req, res, s, t.t('enroll.error.csrf'), 403);
    const actions = await accounts().requiredActions(s.user.id);
    if (!actions.includes('change_password')) return res.redirect(303, requiredUrl(s.flow));
    const wait = await tries.hit(s.flow.id);
    if (wait) {
      res.set('Retry-After', String(wait));
      return passwordPage(req, res, s, t.t('enroll.error.rate'), 429);
    }
    if (typeof form.password !== 'string' || form.password !== form.repeat) {
      return passwordPage(req, res, s, t.t('required.password.mismatch'), 400);
    }
    try {
      // The PASSWORD method's own setup: its policy, its hash, and the core's "credential
      // replaced" rule (other sessions and tokens end, the user is told).
      await api.services
        .resolve<MethodSetup>('methodSetup')
        .step('initiation', 'PASSWORD', s.user, { password: form.password }, req);
    } catch (err) {
      if (!isProtocolError(err)) throw err;
      return passwordPage(req, res, s, t.t('required.password.refused', { reason: err.message }), 400);
    }
    await accounts().setRequiredActions(
      actor(req, s.user),
      s.user,
      actions.filter((a) => a !== 'change_password'),
    );
    res.redirect(303, requiredUrl(s.flow));
  });
}
