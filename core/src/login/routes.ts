import express, { type Request, type Response, type Router } from 'express';
import { routeInput } from '../http/api-spec.js';
import { LOGIN_API } from './api.js';
import type { DeviceCookie } from '../http/device.js';
import type { ClientRegistry } from '../oauth/clients.js';
import type { Extensions } from '../plugins/loader.js';
import type { Clock } from '../services.js';
import type { LoginFlow, LoginFlowStore } from '../verification/flows.js';
import { FORM_POST_JS, LOGIN_CSS, LOGIN_JS, MESSAGES_JS, OFFER_JS, type Asset } from './assets.js';
import { OFFER_PATH, type SetupOffers } from './offer.js';
import { verificationError } from '../verification/errors.js';
import type { EnrollmentService } from '../verification/enrollment.js';
import type { LoginRedirects } from '../verification/routes.js';
import { formBody, jsonBody } from '../http/parsers.js';
import { ok } from '../http/envelope.js';
import { pageHeaders, redirectSources } from './headers.js';
import { methodView, offerView } from './methods.js';
import type { PageModules } from './modules.js';
import {
  renderErrorPage,
  renderLoginPage,
  renderOfferPage,
  renderProblemPage,
  type LoginView,
  type PageContext,
} from './page.js';
import { pickMethods } from './picker.js';
import type { GatehouseConfig } from '../config/schema.js';
import { readCookie } from '../http/cookies.js';
import {
  authorizeUrlOf,
  flowFormToken,
  sessionCookieName,
  type AuthorizationRequest,
  type BrowserBinding,
} from '../oauth/authorize/index.js';
import { logoutCsrf } from '../oauth/end-session.js';
import type { SessionStore } from '../oauth/sessions.js';
import type { History } from '../plugins/extensions.js';
import type { UserService } from '../users/users.js';
import { requestFacts } from '../verification/context.js';
import type { VerificationService } from '../verification/service.js';
import type { Locales } from '../i18n/locales.js';

/** What the hosted login page uses (the container's cradle provides it). */
export interface LoginPageDeps {
  config: GatehouseConfig;
  flows: LoginFlowStore;
  clients: ClientRegistry;
  extensions: Extensions;
  clock: Clock;
  /** Whether this browser holds the flow's binding cookie (set by /authorize). */
  binding: BrowserBinding;
  /** Given to every browser that opens the page (failed sign-ins are told apart by it). */
  device: DeviceCookie;
  users: UserService;
  sessions: SessionStore;
  events: History;
  /** Whether the user has a method set up (to offer only those). */
  verification: Pick<VerificationService, 'isEnrolled'>;
  /** The browser modules of methods (`page.module`), served under /login/methods/. */
  pageModules: PageModules;
  /** The method to offer once a login completed, and its setup. */
  setupOffers: SetupOffers;
  enrollment: EnrollmentService;
  loginRedirects: LoginRedirects;
  /** The pages' messages, by the request's `ui_locales` and the browser's languages. */
  locales: Locales;
}

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
  noClient: { status: 400, name: 'no_client' },
  otherBrowser: { status: 403, name: 'other_browser' },
  noMethod: { status: 500, name: 'no_method' },
  noneSetUp: { status: 409, name: 'none_set_up' },
} satisfies Record<string, PageError>;

/** Why a flow cannot be shown, or null when it can. */
function flowProblem(flow: LoginFlow | null, now: Date): PageError | null {
  if (!flow) return ERRORS.unknown;
  if (flow.status === 'completed' || flow.status === 'finished') return ERRORS.completed;
  if (flow.status !== 'active' || flow.expiresAt <= now || flow.stage >= flow.stages.length) return ERRORS.expired;
  return null;
}

function sendAsset(res: Response, asset: Asset): void {
  res.set({
    'Content-Type': asset.contentType,
    'Cache-Control': 'public, max-age=300',
    'X-Content-Type-Options': 'nosniff',
  });
  res.send(asset.body);
}

/**
 * The hosted login page: `GET /login?request_id=…` renders the flow's current stage, and
 * `/login/assets/*` serves its script and style. The page talks to the verification API and
 * continues the flow with a form POST to /login/continue.
 */
export function loginPageRoutes(deps: LoginPageDeps): Router {
  const base = new URL(deps.config.issuer).pathname.replace(/\/+$/, '');
  const sessionCookie = sessionCookieName(deps.config.issuer);
  // Read now, not at the first page: a broken message file stops the server at start-up.
  const locales = deps.locales;
  const router = express.Router();

  /** Who the flow is for, once known, and how to get out if it is someone else. */
  const whoOf = async (req: Request, flow: LoginFlow): Promise<LoginView['who']> => {
    const user = flow.userId ? await deps.users.findById(flow.userId) : null;
    if (!user) return null;
    const cookie = readCookie(req, sessionCookie);
    const session = await deps.sessions.get(cookie);
    const request = flow.params.oauth as unknown as AuthorizationRequest | undefined;
    return {
      name: user.username,
      signOutCsrf: session?.userId === user.id ? logoutCsrf(cookie!) : null,
      // Someone else signs in: the app's guess at who it is no longer helps.
      restartUrl: request ? `${base}${authorizeUrlOf({ ...request, login_hint: null })}` : null,
    };
  };

  /** Of these methods, the one the user last signed in with. */
  const lastUsed = async (userId: string, methods: string[]) => {
    const recent = await deps.events.recent({ types: ['verification.success'], userId, limit: 50 });
    return recent.find((e) => e.method !== null && methods.includes(e.method))?.method ?? null;
  };

  /** The page's base and messages: by the sign-in request's `ui_locales`, then the browser's languages. */
  const pageOf = (req: Request, flow?: LoginFlow | null): PageContext => {
    const oauth = flow?.params.oauth as { ui_locales?: unknown } | undefined;
    const uiLocales = typeof oauth?.ui_locales === 'string' ? oauth.ui_locales : null;
    return { base, t: locales.for(req, uiLocales) };
  };

  const showError = (req: Request, res: Response, error: PageError, flow?: LoginFlow | null) => {
    const page = pageOf(req, flow);
    pageHeaders(res);
    res
      .status(error.status)
      .send(
        renderErrorPage(page, page.t.t(`login.error.${error.name}.title`), page.t.t(`login.error.${error.name}.text`)),
      );
  };

  router.get('/login/assets/login.js', (_req, res) => sendAsset(res, LOGIN_JS));
  router.get('/login/assets/login.css', (_req, res) => sendAsset(res, LOGIN_CSS));
  router.get('/login/assets/form-post.js', (_req, res) => sendAsset(res, FORM_POST_JS));
  router.get('/login/assets/offer.js', (_req, res) => sendAsset(res, OFFER_JS));
  router.get('/login/assets/messages.js', (_req, res) => sendAsset(res, MESSAGES_JS));

  router.get('/login', async (req: Request, res: Response) => {
    const requestId = req.query.request_id;
    if (typeof requestId !== 'string' || !requestId || requestId.length > 200) {
      return showError(req, res, ERRORS.missing);
    }
    const flow = await deps.flows.get(requestId);
    const problem = flowProblem(flow, deps.clock.now());
    if (problem || !flow) return showError(req, res, problem ?? ERRORS.unknown, flow);
    // A sign-in link sent by someone else must not log this browser in for them.
    if (!deps.binding.isBound(req, flow)) return showError(req, res, ERRORS.otherBrowser, flow);
    const client = deps.clients.get(flow.clientId);
    if (!client) return showError(req, res, ERRORS.noClient, flow);
    const page = pageOf(req, flow);

    // A method already used in this login (here or by the session) is not offered again.
    const user = flow.userId ? await deps.users.findById(flow.userId) : null;
    const picked = await pickMethods({
      stage: (flow.stages[flow.stage] ?? []).filter((id) => deps.extensions.methods.has(id)),
      used: flow.methods,
      user,
      isEnrolled: (u, id) =>
        deps.verification.isEnrolled(u, id, flow.clientId, requestFacts(req, undefined, deps.device), req.log),
      lastUsed,
    });
    // The way back to the app, for flows an app started.
    const cancelCsrf = flow.params.oauth ? flowFormToken(deps.config.issuer, req, flow) : null;
    if (!picked.preselect) {
      const problem = user ? ERRORS.noneSetUp : ERRORS.noMethod;
      pageHeaders(res, redirectSources(client.redirectUris));
      return res
        .status(problem.status)
        .send(
          renderProblemPage(
            { ...page, requestId: flow.id, appName: client.name, cancelCsrf },
            page.t.t(`login.error.${problem.name}.title`),
            page.t.t(`login.error.${problem.name}.text`),
          ),
        );
    }
    const methods = picked.ids.map((id) =>
      methodView(deps.extensions.methods.get(id)!, deps.pageModules.url(base, id), page.t),
    );
    const request = flow.params.oauth as { login_hint?: unknown } | undefined;

    pageHeaders(res, redirectSources(client.redirectUris), 'same-origin');
    deps.device.ensure(req, res);
    res.send(
      renderLoginPage({
        ...page,
        requestId: flow.id,
        appName: client.name,
        step: flow.stage + 1,
        steps: flow.stages.length,
        userId: flow.userId,
        methods,
        preselected: picked.preselect,
        who: await whoOf(req, flow),
        cancelCsrf,
        // A hint only fills the field in: the stage is still done, and nothing says whether it names anyone.
        loginHint: typeof request?.login_hint === 'string' ? request.login_hint : null,
      }),
    );
  });

  router.get('/login/methods/:id/:version/:file', deps.pageModules.serve);

  // ─── after the login: a method to set up for next time (SetupOffers) ───

  /** The completed flow of this browser, or why there is none. */
  const completedFlow = async (req: Request, requestId: unknown) => {
    if (typeof requestId !== 'string' || !requestId || requestId.length > 200) return { error: ERRORS.missing };
    const flow = await deps.flows.get(requestId);
    if (!flow) return { error: ERRORS.unknown };
    if (flow.status !== 'completed' || flow.expiresAt <= deps.clock.now()) return { error: ERRORS.completed };
    if (!deps.binding.isBound(req, flow)) return { error: ERRORS.otherBrowser };
    return { flow };
  };
  const facts = (req: Request) => requestFacts(req, undefined, deps.device);

  router.get(OFFER_PATH, async (req, res) => {
    const { flow, error } = await completedFlow(req, req.query.request_id);
    if (!flow) return showError(req, res, error);
    const method = await deps.setupOffers.pick(flow, facts(req), req.log);
    if (!method?.page?.offer) return res.redirect(303, deps.loginRedirects.completed(flow));
    const page = pageOf(req, flow);
    const client = deps.clients.get(flow.clientId);
    // The continue form's POST ends at the app's redirect URI: CSP form-action must allow it.
    pageHeaders(res, redirectSources(client?.redirectUris ?? []));
    res.send(
      renderOfferPage({
        ...page,
        requestId: flow.id,
        appName: client?.name ?? flow.clientId,
        method: method.id,
        offer: offerView(method.id, method.page.offer, page.t),
        module: deps.pageModules.url(base, method.id),
      }),
    );
  });

  router.post(LOGIN_API.offerSetup.path, jsonBody('100kb'), async (req, res) => {
    const { body } = routeInput(LOGIN_API.offerSetup, req);
    const { flow } = await completedFlow(req, body.request_id);
    if (!flow) throw verificationError('FLOW_NOT_BOUND', 'this sign-in cannot set anything up');
    const step = String(req.params.step);
    if (step !== 'initiation' && step !== 'verification') throw verificationError('ENROLLMENT_NOT_SUPPORTED');
    const method = await deps.setupOffers.pick(flow, facts(req), req.log);
    const user = method ? await deps.users.findById(flow.userId!) : null;
    if (!method || !user) throw verificationError('ENROLLMENT_NOT_SUPPORTED', 'nothing to set up after this sign-in');
    const { request_id: _ignored, sub: _sub, ...fields } = body;
    ok(res, await deps.enrollment.step(step, method.id, user, fields, facts(req), req.log));
  });

  router.post(`${OFFER_PATH}/done`, formBody('4kb'), async (req, res) => {
    const { flow, error } = await completedFlow(req, req.body?.request_id);
    if (!flow) return showError(req, res, error);
    if (req.body?.decision === 'later') {
      const method = await deps.setupOffers.pick(flow, facts(req), req.log);
      if (method && flow.userId) await deps.setupOffers.decline(flow.userId, method.id);
    }
    res.redirect(303, deps.loginRedirects.completed(flow));
  });

  return router;
}
