import {
  MethodModules,
  pageContext,
  renderErrorPage,
  routeInput,
  sendAsset,
  verificationError,
  type LoginFlowView,
  type PluginApi,
  type MethodSetup,
} from '@gatehouse-auth/core';
import type { Request, Response } from 'express';
import { FINISH_PATH, LOGIN_API, OFFER_PATH } from './api.js';
import { ENROLL_JS, LOGIN_JS, MESSAGES_JS, OFFER_JS, RESEND_JS } from './assets.js';
import { methodView, offerView, type LoginPageLink, type RecoveryLinks } from './methods.js';
import { renderLoginPage, renderOfferPage, renderProblemPage, type LoginView } from './page.js';
import { pickMethods } from './picker.js';
import { ENROLL_ON_LOGIN, ENROLL_PATH, setupPages } from './setup-pages.js';

type Router = ReturnType<PluginApi['services']['http']['createRouter']>;

/** Why the page cannot be shown: its status and its messages (`login.error.<name>.title` and `.text`). */
interface PageError {
  status: number;
  name: string;
}

const ERRORS = {
  missing: { status: 400, name: 'missing' },
  unknown: { status: 404, name: 'unknown' },
  expired: { status: 410, name: 'expired' },
  completed: { status: 410, name: 'completed' },
  otherBrowser: { status: 403, name: 'other_browser' },
  noMethod: { status: 500, name: 'no_method' },
  noneSetUp: { status: 409, name: 'none_set_up' },
} satisfies Record<string, PageError>;

/** Why a flow cannot be shown, or null when it can. */
function flowProblem(flow: LoginFlowView | null, now: Date): PageError | null {
  if (!flow) return ERRORS.unknown;
  if (flow.status === 'completed' || flow.status === 'finished') return ERRORS.completed;
  if (flow.status !== 'active' || flow.expiresAt <= now || flow.stage >= flow.stages.length) return ERRORS.expired;
  return null;
}

/** A request id as the page takes it: a non-empty string of at most 200 characters. */
function requestIdOf(value: unknown): string | null {
  return typeof value === 'string' && value && value.length <= 200 ? value : null;
}

/** The continuation fields of the page's form that are strings (any other is left out, as the core's route does). */
function continuationFields(body: unknown) {
  const given = (body ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof given[name] === 'string' ? given[name] : undefined);
  return {
    requestId: text('requestId'),
    status_id: text('status_id'),
    verificationType: text('verificationType'),
    sub: text('sub'),
  };
}

/**
 * The hosted login page, on a router mounted at `/login`: `GET /login?request_id=…` renders the
 * flow's current stage, `/login/assets/*` serves its scripts (the style sheet is the core's),
 * `/login/methods/*` the methods' browser modules, `/login/offer` a method to set up after the
 * login. The page talks to the verification API and continues the flow with a form POST to
 * `/login/finish`: the core's continuation (`web.loginFlows.continue`, decision 40), then the
 * offer when there is one.
 */
export function loginPageRoutes(api: PluginApi, router: Router): void {
  const { web } = api;
  const base = web.base;
  const modules = new MethodModules(web);
  const now = () => api.services.clock.now();

  /** Of these methods, the one the user last signed in with. */
  const lastUsed = async (userId: string, methods: string[]) => {
    const recent = await api.services.history.recent({ types: ['verification.success'], userId, limit: 50 });
    return recent.find((e) => e.method !== null && methods.includes(e.method))?.method ?? null;
  };

  /** The link a recovery plugin shows with a method of the stage ("Forgot password?"); null without one. */
  const recoveryLink = (req: Request, flow: LoginFlowView): LoginPageLink | null => {
    let links: RecoveryLinks;
    try {
      links = api.services.resolve<RecoveryLinks>('passwordRecovery');
    } catch {
      return null; // no plugin provides it
    }
    return links.loginLink(req, flow);
  };

  const showError = (req: Request, res: Response, error: PageError, flow?: LoginFlowView | null) => {
    const page = pageContext(web, req, res, { flow });
    res
      .status(error.status)
      .send(
        renderErrorPage(
          page,
          page.t.t(`login.error.${error.name}.title`),
          page.t.t(`login.error.${error.name}.text`),
          req.id ? String(req.id) : undefined,
        ),
      );
  };

  router.get('/assets/login.js', (_req, res) => sendAsset(res, LOGIN_JS));
  router.get('/assets/offer.js', (_req, res) => sendAsset(res, OFFER_JS));
  router.get('/assets/messages.js', (_req, res) => sendAsset(res, MESSAGES_JS));
  router.get('/assets/enroll.js', (_req, res) => sendAsset(res, ENROLL_JS));
  router.get('/assets/resend.js', (_req, res) => sendAsset(res, RESEND_JS));

  setupPages({
    api,
    router,
    base,
    modules,
    coreMessages: (req, flow) => web.loginFlows.messages(req, flow),
    flowError: (req, res, flow, requestId) => {
      if (!requestIdOf(requestId)) return showError(req, res, ERRORS.missing);
      if (!flow) return showError(req, res, ERRORS.unknown);
      if (!web.loginFlows.isBound(req, flow)) return showError(req, res, ERRORS.otherBrowser, flow);
      if (flow.status === 'completed' || flow.status === 'finished') return showError(req, res, ERRORS.completed, flow);
      // A live flow of this browser that has no such screen (the app does not let it set up).
      if (!flowProblem(flow, now())) return showError(req, res, ERRORS.unknown, flow);
      return showError(req, res, ERRORS.expired, flow);
    },
  });

  router.get('/', async (req: Request, res: Response) => {
    const requestId = requestIdOf(req.query.request_id);
    if (!requestId) return showError(req, res, ERRORS.missing);
    const flow = await web.loginFlows.get(requestId);
    const problem = flowProblem(flow, now());
    if (problem || !flow) return showError(req, res, problem ?? ERRORS.unknown, flow);
    // A sign-in link sent by someone else must not log this browser in for them.
    if (!web.loginFlows.isBound(req, flow)) return showError(req, res, ERRORS.otherBrowser, flow);

    // A method already used in this login (here or by the session) is not offered again.
    const user = flow.userId ? await api.services.users.findById(flow.userId) : null;
    const registered = web.loginFlows.stageMethods(flow);
    const picked = await pickMethods({
      stage: registered.map((m) => m.id),
      used: flow.methods,
      user,
      isEnrolled: (u, id) => web.loginFlows.isEnrolled(req, flow, u, id),
      lastUsed,
    });
    // The way back to the app, for flows an app started.
    const cancelCsrf = web.loginFlows.cancelToken(req, flow);
    if (!picked.preselect) {
      // The app lets its users set up, here and now, what this stage asks for (the setup screens).
      if (user && flow.appSettings[ENROLL_ON_LOGIN] === true) {
        return res.redirect(303, `${base}/login${ENROLL_PATH}?request_id=${encodeURIComponent(flow.id)}`);
      }
      const problem = user ? ERRORS.noneSetUp : ERRORS.noMethod;
      const page = pageContext(web, req, res, { flow, formTargets: web.loginFlows.formTargets(flow) });
      return res
        .status(problem.status)
        .send(
          renderProblemPage(
            { ...page, requestId: flow.id, appName: flow.clientName, cancelCsrf },
            page.t.t(`login.error.${problem.name}.title`),
            page.t.t(`login.error.${problem.name}.text`),
          ),
        );
    }
    const page = pageContext(web, req, res, {
      flow,
      formTargets: web.loginFlows.formTargets(flow),
      referrer: 'same-origin',
    });
    const link = recoveryLink(req, flow);
    const methods = picked.ids.map((id) => ({
      ...methodView(
        registered.find((m) => m.id === id)!,
        modules.url(`${base}/login`, id),
        page.t,
      ),
      link: link?.method === id ? link : null,
    }));
    const loginHint = flow.oauth?.login_hint;

    web.loginFlows.markDevice(req, res);
    const view: LoginView = {
      ...page,
      requestId: flow.id,
      appName: flow.clientName,
      step: flow.stage + 1,
      steps: flow.stages.length,
      userId: flow.userId,
      methods,
      preselected: picked.preselect,
      who: await web.loginFlows.signedInAs(req, flow),
      cancelCsrf,
      // A hint only fills the field in: the stage is still done, and nothing says whether it names anyone.
      loginHint: typeof loginHint === 'string' ? loginHint : null,
      registerUrl: flow.userId ? null : web.loginFlows.promptUrl(flow, 'create'),
    };
    res.send(renderLoginPage(view));
  });

  router.get('/methods/:id/:version/:file', modules.serve);

  // ─── after the login: a method to set up for next time (the core's offer rule) ───

  // The form's POST ends the stage: the core's checks (Origin, binding, the status), then the
  // offer page before the app when the login completed and the core offers this user a method.
  router.post(FINISH_PATH, api.services.http.form(), async (req, res) => {
    const fields = continuationFields(req.body);
    await web.loginFlows.admit(req, res, fields.requestId);
    const next = await web.loginFlows.continue(req, fields);
    const offered = next.completed ? await web.loginFlows.offer(req, next.flow) : null;
    const offerPage = `${base}/login${OFFER_PATH}?request_id=${encodeURIComponent(next.flow.id)}`;
    // 303 so the browser follows with GET and never re-posts the credential (RFC 9700 §4.12).
    res.redirect(303, offered ? offerPage : next.location);
  });

  /** The completed flow of this browser, or why there is none. */
  const completedFlow = async (req: Request, value: unknown) => {
    const requestId = requestIdOf(value);
    if (!requestId) return { error: ERRORS.missing };
    const flow = await web.loginFlows.get(requestId);
    if (!flow) return { error: ERRORS.unknown };
    if (flow.status !== 'completed' || flow.expiresAt <= now()) return { error: ERRORS.completed };
    if (!web.loginFlows.isBound(req, flow)) return { error: ERRORS.otherBrowser };
    return { flow };
  };

  router.get(OFFER_PATH, async (req, res) => {
    const { flow, error } = await completedFlow(req, req.query.request_id);
    if (!flow) return showError(req, res, error);
    const method = await web.loginFlows.offer(req, flow);
    if (!method?.page?.offer) return res.redirect(303, web.loginFlows.completedLocation(flow));
    // The continue form's POST ends at the app's redirect URI: CSP form-action must allow it.
    const page = pageContext(web, req, res, { flow, formTargets: web.loginFlows.formTargets(flow) });
    res.send(
      renderOfferPage({
        ...page,
        requestId: flow.id,
        appName: flow.clientName,
        method: method.id,
        offer: offerView(method.id, method.page.offer, page.t),
        module: modules.url(`${base}/login`, method.id),
      }),
    );
  });

  router.post(LOGIN_API.offerSetup.path, api.services.http.json(), async (req, res) => {
    const { body } = routeInput(LOGIN_API.offerSetup, req);
    const { flow } = await completedFlow(req, body.request_id);
    if (!flow) throw verificationError('FLOW_NOT_BOUND', 'this sign-in cannot set anything up');
    const step = String(req.params.step);
    if (step !== 'initiation' && step !== 'verification') throw verificationError('ENROLLMENT_NOT_SUPPORTED');
    const method = await web.loginFlows.offer(req, flow);
    const user = method ? await api.services.users.findById(flow.userId!) : null;
    if (!method || !user) throw verificationError('ENROLLMENT_NOT_SUPPORTED', 'nothing to set up after this sign-in');
    const { request_id: _ignored, sub: _sub, ...fields } = body;
    const data = await api.services.resolve<MethodSetup>('methodSetup').step(step, method.id, user, fields, req);
    res.status(200).set('Cache-Control', 'no-store').json({ success: true, status: 200, data });
  });

  router.post(`${OFFER_PATH}/done`, api.services.http.form(), async (req, res) => {
    const { flow, error } = await completedFlow(req, (req.body as Record<string, unknown> | undefined)?.request_id);
    if (!flow) return showError(req, res, error);
    if ((req.body as Record<string, unknown>).decision === 'later') {
      const method = await web.loginFlows.offer(req, flow);
      if (method) await web.loginFlows.declineOffer(flow, method.id);
    }
    res.redirect(303, web.loginFlows.completedLocation(flow));
  });
}
