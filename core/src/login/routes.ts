import express, { type Request, type Response, type Router } from 'express';
import type { DeviceCookie } from '../http/device.js';
import type { ClientRegistry } from '../oauth/clients.js';
import type { Extensions } from '../plugins/loader.js';
import type { Clock } from '../services.js';
import type { LoginFlow, LoginFlowStore } from '../verification/flows.js';
import { FORM_POST_JS, LOGIN_CSS, LOGIN_JS, type Asset } from './assets.js';
import { pageHeaders, redirectSources } from './headers.js';
import { methodView } from './methods.js';
import type { PageModules } from './modules.js';
import { renderErrorPage, renderLoginPage, renderProblemPage, type LoginView } from './page.js';
import { pickMethods } from './picker.js';
import type { UserRecord } from '../plugins/extensions.js';

export interface LoginPageDeps {
  flows: LoginFlowStore;
  clients: ClientRegistry;
  extensions: Extensions;
  /** The public base URL; its path is the prefix of every URL the page uses. */
  issuer: string;
  /** The server clock for flow expiry (default: system time). */
  clock?: Clock;
  /** Whether this browser holds the flow's binding cookie (set by /authorize). */
  isBound?: (req: Request, flow: LoginFlow) => boolean;
  /** Given to every browser that opens the page (failed sign-ins are told apart by it). */
  device?: DeviceCookie;
  /** Who the flow is for, once known, and how to get out if it is someone else. */
  who?: (req: Request, flow: LoginFlow) => Promise<LoginView['who']>;
  /** The token of the "back to the app" form, for flows an app started; else null. */
  cancelCsrf?: (req: Request, flow: LoginFlow) => string | null;
  /** The flow's user, to offer only the methods they have set up. */
  findUser?: (id: string) => Promise<UserRecord | null>;
  isEnrolled?: (req: Request, user: UserRecord, method: string, clientId: string) => Promise<boolean>;
  /** Of these methods, the one the user last signed in with. */
  lastUsed?: (userId: string, methods: string[]) => Promise<string | null>;
  /** The browser modules of methods (`page.module`), served under /login/methods/. */
  modules?: PageModules;
}

interface PageError {
  status: number;
  title: string;
  text: string;
}

const ERRORS = {
  missing: { status: 400, title: 'This sign-in link is incomplete', text: 'The link has no valid sign-in request.' },
  unknown: { status: 404, title: 'Sign-in request not found', text: 'This sign-in request does not exist.' },
  expired: { status: 410, title: 'This sign-in request has expired', text: 'It was not completed in time.' },
  completed: { status: 410, title: 'This sign-in is already complete', text: 'The request was already used.' },
  noClient: { status: 400, title: 'Unknown app', text: 'The app of this sign-in request is not registered.' },
  otherBrowser: {
    status: 403,
    title: 'Start this sign-in from the app',
    text: 'This sign-in was started in another browser. Go back to the app you came from and sign in there.',
  },
  noMethod: {
    status: 500,
    title: 'No way to sign in',
    text: 'None of the sign-in methods of this step is available. Contact the administrator of the app.',
  },
  noneSetUp: {
    status: 409,
    title: 'No way to sign in to this app yet',
    text: 'Your account has none of the ways to sign in that this step asks for set up. Set one up, or ask the administrator of the app.',
  },
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
 * continues the flow with a form POST to /login-srv/verification/login.
 */
export function loginPageRoutes(deps: LoginPageDeps): Router {
  const base = new URL(deps.issuer).pathname.replace(/\/+$/, '');
  const router = express.Router();

  const showError = (res: Response, error: PageError) => {
    pageHeaders(res);
    res.status(error.status).send(renderErrorPage(base, error.title, error.text));
  };

  router.get('/login/assets/login.js', (_req, res) => sendAsset(res, LOGIN_JS));
  router.get('/login/assets/login.css', (_req, res) => sendAsset(res, LOGIN_CSS));
  router.get('/login/assets/form-post.js', (_req, res) => sendAsset(res, FORM_POST_JS));

  router.get('/login', async (req: Request, res: Response) => {
    const requestId = req.query.request_id;
    if (typeof requestId !== 'string' || !requestId || requestId.length > 200) return showError(res, ERRORS.missing);
    const flow = await deps.flows.get(requestId);
    const problem = flowProblem(flow, deps.clock?.now() ?? new Date());
    if (problem || !flow) return showError(res, problem ?? ERRORS.unknown);
    // A sign-in link sent by someone else must not log this browser in for them.
    if (deps.isBound && !deps.isBound(req, flow)) return showError(res, ERRORS.otherBrowser);
    const client = deps.clients.get(flow.clientId);
    if (!client) return showError(res, ERRORS.noClient);

    // A method already used in this login (here or by the session) is not offered again.
    const user = flow.userId ? ((await deps.findUser?.(flow.userId)) ?? null) : null;
    const picked = await pickMethods({
      stage: (flow.stages[flow.stage] ?? []).filter((id) => deps.extensions.methods.has(id)),
      used: flow.methods,
      user,
      isEnrolled: (u, id) => deps.isEnrolled?.(req, u, id, flow.clientId) ?? Promise.resolve(true),
      lastUsed: (userId, ids) => deps.lastUsed?.(userId, ids) ?? Promise.resolve(null),
    });
    const cancelCsrf = deps.cancelCsrf?.(req, flow) ?? null;
    if (!picked.preselect) {
      const problem = user ? ERRORS.noneSetUp : ERRORS.noMethod;
      pageHeaders(res, redirectSources(client.redirectUris));
      return res
        .status(problem.status)
        .send(
          renderProblemPage(
            { base, requestId: flow.id, appName: client.name, cancelCsrf },
            problem.title,
            problem.text,
          ),
        );
    }
    const methods = picked.ids.map((id) =>
      methodView(deps.extensions.methods.get(id)!, deps.modules?.url(base, id) ?? null),
    );

    pageHeaders(res, redirectSources(client.redirectUris));
    deps.device?.ensure(req, res);
    res.send(
      renderLoginPage({
        base,
        requestId: flow.id,
        appName: client.name,
        step: flow.stage + 1,
        steps: flow.stages.length,
        userId: flow.userId,
        methods,
        preselected: picked.preselect,
        who: (await deps.who?.(req, flow)) ?? null,
        cancelCsrf,
      }),
    );
  });

  if (deps.modules) router.get('/login/methods/:id/:version/:file', deps.modules.serve);

  return router;
}
