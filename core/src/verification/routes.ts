import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import multer from 'multer';
import { ok, success } from '../http/envelope.js';
import { bodyLimit, formBody, jsonBody } from '../http/parsers.js';
import { multipartError } from '../http/multipart-errors.js';
import type { DeviceCookie } from '../http/device.js';
import type { GatehouseConfig } from '../config/schema.js';
import type { TokenService } from '../oauth/tokens.js';
import type { Clock } from '../services.js';
import type { LoginFlowStore } from './flows.js';
import type { BrowserBinding } from '../oauth/authorize/browser.js';
import { withRequestId } from '../oauth/authorize/hosted-login.js';
import { randomToken, sha256 } from '../util/crypto.js';
import type { Logger } from 'pino';
import type { IncomingMessage } from 'node:http';
import { PROOF_HEADER } from '../devices/proof.js';
import { isPlainJson, readJson } from '../http/body.js';
import type { FastRoute } from '../http/fast-routes.js';
import { lazyLogger } from '../http/logging.js';
import type { RequestFacts, UploadedFile } from '../plugins/extensions.js';
import type { UserService } from '../users/users.js';
import { requestFacts, stringFields } from './context.js';
import type { EnrollmentService, EnrollmentStep } from './enrollment.js';
import { OFFER_PATH, type SetupOffers } from '../login/offer.js';
import type { LoginUi } from '../login/custom-ui.js';
import { checkContinuationOrigin, continuationOrigins } from '../login/form-origin.js';
import type { ClientRegistry, OAuthClient } from '../oauth/clients.js';
import type { ClientAuthenticator } from '../oauth/client-auth.js';
import type { AccountVerification } from './account.js';
import { isProtocolError, type ApiError } from '../errors.js';
import { setupAccess } from './setup-access.js';
import type { AdminGuard } from '../http/admin-guard.js';
import type { LoginSetup } from './login-setup.js';
export { MANAGE_METHODS_SCOPE, type BearerResolver } from './setup-access.js';
import { verificationError } from './errors.js';
import type { LoginFlow } from './flows.js';
import type { VerificationService } from './service.js';
import { routeInput } from '../http/api-spec.js';
import { verificationApi } from './api.js';

/** Where the browser goes after a stage: the hosted login page, or back to the client. */
export interface LoginRedirects {
  nextStage(flow: LoginFlow): string;
  completed(flow: LoginFlow): string;
}

/** Where the browser goes once a continuation moved the flow: its next stage, or back to the client. */
export function locationAfter(redirects: LoginRedirects, result: { completed: boolean; flow: LoginFlow }): string {
  return result.completed ? redirects.completed(result.flow) : redirects.nextStage(result.flow);
}

export const defaultRedirects: LoginRedirects = {
  nextStage: (flow) => `/login?request_id=${encodeURIComponent(flow.id)}`,
  // A page that started the login (a plugin's) reads its result with the request id.
  completed: (flow) =>
    typeof flow.params.return_to === 'string'
      ? withRequestId(flow.params.return_to, flow.id)
      : `/login/complete?request_id=${encodeURIComponent(flow.id)}`,
};

const form = formBody('100kb');
const json = jsonBody('100kb');

/** Multipart only for methods that take files (FACE photo), in memory with the method's limits. */
function multipartFor(verification: VerificationService): RequestHandler {
  return (req, res, next) => {
    if (!req.is('multipart/form-data')) return next();
    const method = verification.method(String(req.params.method));
    const files = method.files ?? [];
    if (!files.length) return next(verificationError('INVALID_FIELD', `${method.id} does not take multipart bodies`));
    const upload = multer({
      storage: multer.memoryStorage(),
      // A part of a type the method does not take is refused before it is read.
      fileFilter: (_req, file, accept) => {
        const allowed = files.find((f) => f.name === file.fieldname)?.mimeTypes ?? [];
        if (allowed.includes(file.mimetype)) accept(null, true);
        else
          accept(
            verificationError('INVALID_FIELD', `${file.fieldname} must be one of ${allowed.join(', ')}`, {
              fields: [file.fieldname],
            }),
          );
      },
      limits: {
        fileSize: Math.max(...files.map((f) => f.maxBytes)),
        files: files.length,
        fields: 50,
        fieldSize: 16_384,
      },
    }).fields(files.map((f) => ({ name: f.name, maxCount: 1 })));
    // Every file at its limit plus room for the text fields: more is refused from the header.
    const most = files.reduce((sum, f) => sum + f.maxBytes, 0) + 64 * 1024;
    bodyLimit(most)(req, res, (err?: unknown) =>
      err ? next(err) : upload(req, res, (failed?: unknown) => next(failed ? multipartError(failed) : undefined)),
    );
  };
}

function uploadedFiles(req: Request): UploadedFile[] {
  const files = (req.files ?? {}) as Record<string, Express.Multer.File[]>;
  return Object.values(files)
    .flat()
    .map((f) => ({ fieldName: f.fieldname, mimeType: f.mimetype, size: f.size, buffer: f.buffer }));
}

function initiation(
  verification: VerificationService,
  method: string,
  body: unknown,
  request: RequestFacts,
  logger: Logger,
) {
  const { fields } = stringFields(body);
  return verification.initiate(method, { fields, request, logger });
}

function verificationStep(
  verification: VerificationService,
  method: string,
  body: unknown,
  files: UploadedFile[],
  request: RequestFacts,
  logger: Logger,
  device: { proof: string | undefined; path: string },
) {
  const { fields, malformed, keys } = stringFields(body);
  return verification.verify(method, { fields, malformed, keys, files, request, logger, device });
}

/** The Device-Proof header, for device methods (docs/devices.md). */
function proofHeader(req: IncomingMessage): string | undefined {
  const value = req.headers[PROOF_HEADER];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Initiation and verification with a JSON body, outside express (decision 11): the hot
 * requests of a login. Forms and multipart bodies still go through express.
 */
export function verificationFastRoutes(
  verification: VerificationService,
  device?: DeviceCookie,
  issuerPath = '',
): FastRoute[] {
  const api = verificationApi(verification.methods());
  const fast = (
    route: typeof api.initiate | typeof api.verify,
    handle: (
      method: string,
      body: unknown,
      request: RequestFacts,
      logger: Logger,
      req: IncomingMessage,
    ) => Promise<unknown>,
  ): FastRoute => ({
    method: 'POST',
    path: route.path,
    accepts: isPlainJson,
    endpoint: async (req, ip, params) =>
      success(
        await handle(
          params.method!,
          routeInput(route, { params, body: await readJson(req) }).body,
          requestFacts(req, ip, device),
          lazyLogger(() => req.log),
          req,
        ),
      ),
  });
  return [
    fast(api.initiate, (method, body, request, logger) => initiation(verification, method, body, request, logger)),
    fast(api.verify, (method, body, request, logger, req) =>
      verificationStep(verification, method, body, [], request, logger, {
        proof: proofHeader(req),
        path: issuerPath + (req.url ?? '').split('?')[0]!,
      }),
    ),
  ];
}

/** What the verification, continuation and setup routes use (the container's cradle provides it). */
export interface VerificationRouteDeps {
  config: GatehouseConfig;
  verification: VerificationService;
  enrollment: EnrollmentService;
  users: UserService;
  /** A user's own access token may manage their methods (recently authenticated). */
  tokens: TokenService;
  /** ...and the admin token, throttled per address. */
  adminGuard: AdminGuard;
  flows: LoginFlowStore;
  clients: ClientRegistry;
  /** An app's back end may set a method up during its login (the track id with its credentials). */
  clientAuth: Pick<ClientAuthenticator, 'authenticate'>;
  clock: Clock;
  /** Whether this browser may continue a login flow (the OAuth flow's cookie binding). */
  binding: Pick<BrowserBinding, 'isBound' | 'isUnclaimed' | 'flowCookie' | 'cookieOptions'>;
  /** The hosted page's device cookie, read into the facts FDS rules see. */
  device: DeviceCookie;
  /** Where the browser goes after a stage. */
  loginRedirects: LoginRedirects;
  /** The issuer's path: device proofs name the public path of the call. */
  issuerPath: string;
  /** Offers to set a method up once a login completes. */
  setupOffers: SetupOffers;
  /** An app's own login UI gets its errors back. */
  loginUi: LoginUi;
  accounts: AccountVerification;
  loginSetup: LoginSetup;
}

/** `?wait=N&state=S`: hold the answer up to N seconds (at most 30) while the state is S. */
function longPoll(query: Request['query']): { known: string; seconds: number } | undefined {
  const seconds = Number(query.wait);
  const known = typeof query.state === 'string' ? query.state : '';
  if (!known || !Number.isFinite(seconds) || seconds <= 0) return undefined;
  return { known, seconds: Math.min(seconds, 30) };
}

export function verificationRoutes(deps: VerificationRouteDeps): Router {
  const issuerOrigin = new URL(deps.config.issuer).origin;
  /**
   * Whether this browser may move the flow on. The form must come from a page of the app's
   * (login CSRF, form-origin.ts); then the browser must hold the flow's cookie, or the flow is one
   * an app's login UI generated and nobody has claimed yet: this continuation claims it for its
   * browser before the step runs, so it is bound before anyone can complete it (decision 20). A
   * claim from another origin than Gatehouse's is marked: its login makes no SSO session.
   */
  const continuation = async (req: Request, res: Response, requestId: string | undefined) => {
    const flow = requestId ? await deps.flows.get(requestId) : null;
    if (!flow) return;
    const origin = checkContinuationOrigin(
      req,
      flow,
      continuationOrigins(deps.config.issuer, deps.clients.get(flow.clientId)),
    );
    if (deps.binding.isBound(req, flow)) return;
    if (!deps.binding.isUnclaimed(flow)) throw verificationError('FLOW_NOT_BOUND');
    const value = randomToken(24);
    if (!(await deps.flows.claim(flow.id, sha256(value), { crossSite: origin !== issuerOrigin }))) {
      throw verificationError('FLOW_NOT_BOUND');
    }
    const left = Math.max(1, Math.ceil((flow.expiresAt.getTime() - deps.clock.now().getTime()) / 1000));
    res.cookie(deps.binding.flowCookie(flow.id), value, deps.binding.cookieOptions(left, true));
  };
  /**
   * The confidential app whose back end authenticated this call (RFC 6749 §2.3: Basic, a body
   * secret, a client assertion), or null when it sends no client credentials. A public client
   * has no secret to prove it is the app's back end, so it never counts.
   */
  const appBackEnd = async (req: Request, fields: Record<string, unknown>, ip: string) => {
    const params = Object.fromEntries(
      Object.entries(fields).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
    if (!req.headers.authorization && !params.client_secret && !params.client_assertion) return null;
    let client: OAuthClient;
    try {
      client = await deps.clientAuth.authenticate({ params, authorization: req.headers.authorization }, ip);
    } catch (err) {
      // A refusal in the verification API's words; anything else is a fault, not a wrong secret.
      if (!isProtocolError(err)) throw err;
      const throttled = (err as ApiError).status === 429;
      throw verificationError(throttled ? 'TOO_MANY_ATTEMPTS' : 'UNAUTHORIZED', 'client authentication failed');
    }
    if (client.isPublic) throw verificationError('UNAUTHORIZED', 'a public client cannot call for its back end');
    return client;
  };
  const { verification, enrollment } = deps;
  const redirects = deps.loginRedirects;
  const router = express.Router();
  const api = verificationApi(verification.methods());

  // Initiation and verification: the same functions serve express (forms, multipart) and the
  // fast path (JSON, see verificationFastRoutes).
  router.post(api.initiate.path, json, form, async (req, res) =>
    ok(
      res,
      await initiation(
        verification,
        String(req.params.method),
        routeInput(api.initiate, req).body,
        requestFacts(req, undefined, deps.device),
        req.log,
      ),
    ),
  );

  router.post(api.verify.path, json, form, multipartFor(verification), async (req, res) =>
    ok(
      res,
      await verificationStep(
        verification,
        String(req.params.method),
        routeInput(api.verify, req).body,
        uploadedFiles(req),
        requestFacts(req, undefined, deps.device),
        req.log,
        { proof: proofHeader(req), path: deps.issuerPath + req.path },
      ),
    ),
  );

  router.get('/verification-srv/verificationstatus/:statusId', async (req, res) => {
    res.set('Cache-Control', 'no-store');
    const { params, query } = routeInput(api.status, req);
    ok(res, await verification.status(params.statusId, longPoll(query)));
  });
  // The same poll as cidaas's notification-status call makes it.
  router.post('/verification-srv/v2/notification/status/:statusId', json, form, async (req, res) => {
    ok(res, await verification.status(routeInput(api.notificationStatus, req).params.statusId));
  });

  // What an app's own login UI shows: the stage's methods the user has set up (cidaas-style).
  router.post('/verification-srv/public/graph/user/setup', json, form, async (req, res) => {
    const { fields } = stringFields(routeInput(api.configuredList, req).body);
    ok(res, { configured_list: await verification.configured(fields, requestFacts(req), req.log) });
  });
  router.post('/verification-srv/v2/setup/public/configured/check/:method', json, form, async (req, res) => {
    const { fields } = stringFields(routeInput(api.configuredCheck, req).body);
    const method = verification.method(String(req.params.method)).id;
    const list = await verification.configured(fields, requestFacts(req), req.log);
    ok(res, { type: method, configured: list.some((m) => m.type === method) });
  });

  router.post('/verification-srv/authentication/:method/cancel', json, form, async (req, res) => {
    const { fields, keys } = stringFields(routeInput(api.cancel, req).body);
    ok(res, await verification.cancel(String(req.params.method), fields, keys, requestFacts(req), req.log));
  });

  /**
   * A form POST from an app's own login UI (apps[i].login_page_url) that fails goes back to that
   * UI with `error` and `error_description`, never to a JSON page the app cannot leave.
   */
  const formErrors =
    (handler: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
      try {
        await handler(req, res);
      } catch (err) {
        const requestId = stringFields(req.body).fields.requestId;
        const api = isProtocolError(err) ? (err as ApiError) : null;
        // A form from another site is answered here, never sent on to the app's UI.
        if (api?.code === 'ORIGIN_NOT_ALLOWED') throw err;
        const flow = requestId && api ? await deps.flows.get(requestId) : null;
        const back =
          flow && api && req.accepts(['html', 'json']) !== 'json'
            ? deps.loginUi.url(flow, { error: api.code, error_description: api.message })
            : null;
        if (!back) throw err;
        res.redirect(303, back);
      }
    };

  // A password stage completed by an app's own login UI with a plain form (cidaas-style).
  router.post(
    '/login-srv/login',
    form,
    json,
    formErrors(async (req, res) => {
      const { fields } = stringFields(routeInput(api.passwordLogin, req).body);
      const requestId = fields.requestId ?? '';
      await continuation(req, res, requestId);
      const method = verification.methodWithField('password');
      const request = requestFacts(req);
      const started = await verification.initiate(method.id, {
        fields: { request_id: requestId, usage_type: 'INITIAL_AUTHENTICATION', identifier: fields.username ?? '' },
        request,
        logger: req.log,
      });
      const exchangeId = (started.exchange_id as { exchange_id: string }).exchange_id;
      const proof = { exchange_id: exchangeId, password: fields.password ?? '' };
      const result = await verification.proveAndContinue(method.id, requestId, proof, request, req.log);
      res.redirect(303, locationAfter(redirects, result));
    }),
  );

  router.post(
    '/login-srv/verification/login',
    json,
    form,
    formErrors(async (req, res) => {
      const { fields } = stringFields(routeInput(api.continueLogin, req).body);
      await continuation(req, res, fields.requestId);
      const result = await verification.continueLogin(fields, req.log);
      let location = locationAfter(redirects, result);
      // The hosted page that just signed a user in may offer a method for next time (a passkey).
      if (result.completed && fields.offer === 'yes' && req.accepts(['html', 'json']) !== 'json') {
        const offered = await deps.setupOffers.pick(result.flow, requestFacts(req), req.log);
        if (offered) location = `${deps.issuerPath}${OFFER_PATH}?request_id=${encodeURIComponent(result.flow.id)}`;
      }
      if (req.accepts(['html', 'json']) === 'json') {
        ok(res, {
          request_id: result.flow.id,
          completed: result.completed,
          stage: result.flow.stage,
          next_methods: result.nextMethods,
          redirect_to: location,
        });
      } else {
        // 303 so the browser follows with GET and never re-posts the credential (RFC 9700 §4.12).
        res.redirect(303, location);
      }
    }),
  );

  // Enrollment: the admin credential with the user named in `sub`, or the user's own access
  // token from a recent login (setup-access.ts).
  const { requireSetupAccess: enrollmentAuth, userOf } = setupAccess(deps);
  const setupRoutes = { initiation: api.setupInitiation, scan: api.setupScan, verification: api.setupVerification };
  const enrollmentStep = (step: EnrollmentStep) => async (req: Request, res: Response) => {
    const { body } = routeInput(setupRoutes[step], req);
    const user = await userOf(body.sub, res);
    const files = uploadedFiles(req);
    ok(res, await enrollment.step(step, req.params.method as string, user, body, requestFacts(req), req.log, files));
  };
  // Account verification (cidaas-style): a code to the user's email or phone, then the code.
  router.post('/verification-actions-srv/account/initiation', enrollmentAuth, json, form, async (req, res) => {
    const { body } = routeInput(api.accountInitiation, req);
    const user = await userOf(body.sub, res);
    const medium = body.verification_medium ?? body.medium;
    if (medium !== 'email' && medium !== 'sms')
      throw verificationError('INVALID_FIELD', 'verification_medium must be email or sms', {
        fields: ['verification_medium'],
      });
    ok(res, await deps.accounts.start(user, medium));
  });
  router.post('/verification-actions-srv/account', json, form, async (req, res) => {
    const { fields } = stringFields(routeInput(api.accountConfirm, req).body);
    if (!fields.exchange_id) throw verificationError('EXCHANGE_INVALID', 'exchange_id is required');
    ok(res, await deps.accounts.confirm(fields.exchange_id, fields.code ?? fields.pass_code ?? ''));
  });

  // A confirmation without a bearer: the setup's exchange_id names the user and the method.
  const confirmByExchange = async (req: Request, res: Response, next: (err?: unknown) => void) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (req.headers.authorization || typeof body.exchange_id !== 'string') return next('route');
    routeInput(api.setupVerification, req);
    const userId = await enrollment.userOfExchange(body.exchange_id, String(req.params.method));
    const user = userId ? await deps.users.findById(userId) : null;
    if (!user || user.status !== 'active')
      throw verificationError('EXCHANGE_INVALID', 'no such setup in progress for this method');
    const { exchange_id: _handle, sub: _sub, ...fields } = body;
    ok(res, await enrollment.step('verification', String(req.params.method), user, fields, requestFacts(req), req.log));
  };
  const multipart = multipartFor(verification);
  for (const step of ['initiation', 'scan', 'verification'] as const) {
    const path = `/verification-actions-srv/setup/:method/${step}`;
    if (step === 'verification') router.post(path, json, form, confirmByExchange);
    router.post(path, enrollmentAuth, json, form, multipart, enrollmentStep(step));
  }
  // Setting a method up during a login (cidaas-style): the track id came to the UI with `sub`.
  // It travels in a URL, so it needs a second thing only the login's own parties hold: the
  // browser's flow cookie (a same-site UI's XHR with credentials: 'include'), or the app's own
  // client authentication (its back end calls for a UI on another site, where the cookie is a
  // third-party cookie that browsers may drop).
  router.post('/verification-actions-srv/setup/:method/initiation/:trackId', json, form, async (req, res) => {
    const method = String(req.params.method);
    const facts = requestFacts(req);
    const { params, body: input } = routeInput(api.loginSetup, req);
    const { sub: _sub, client_id, client_secret, client_assertion, client_assertion_type, ...body } = input;
    const backEnd = await appBackEnd(
      req,
      { client_id, client_secret, client_assertion, client_assertion_type },
      facts.ip,
    );
    const user = await deps.loginSetup.userFor(params.trackId, method, facts, req.log, (flow) =>
      backEnd ? backEnd.clientId === flow.clientId : deps.binding.isBound(req, flow),
    );
    ok(res, await enrollment.step('initiation', method, user, body, facts, req.log));
  });
  // What an app shows on its account page: the app's methods and this user's state of each.
  router.get('/verification-actions-srv/config', enrollmentAuth, async (req, res) => {
    const { query } = routeInput(api.accountConfig, req);
    const user = await userOf(query.sub, res);
    const clientId = (res.locals.tokenClient as string | undefined) ?? query.client_id;
    if (typeof clientId !== 'string' || !verification.app(clientId)) {
      throw verificationError('INVALID_FIELD', 'client_id names no app', { fields: ['client_id'] });
    }
    ok(res, await enrollment.overview(user, verification.app(clientId)!, requestFacts(req), req.log));
  });
  // cidaas's way to name a credential just set up; the track id is the credential's id.
  router.put(
    '/verification-actions-srv/setup/users/friendlyname/:method/:trackId',
    enrollmentAuth,
    json,
    form,
    async (req, res) => {
      const user = await userOf((req.body as Record<string, unknown> | undefined)?.sub, res);
      const label = routeInput(api.friendlyName, req).body.friendly_name;
      const credentialId = String(req.params.trackId);
      await enrollment.rename(user, String(req.params.method), credentialId, label);
      ok(res, { id: credentialId, friendly_name: label });
    },
  );
  router.get('/verification-actions-srv/setup/users/:sub/methods', enrollmentAuth, async (req, res) => {
    const user = await userOf(routeInput(api.listMethods, req).params.sub, res);
    ok(res, await enrollment.list(user, requestFacts(req), req.log));
  });
  // Renaming one credential (a passkey, a phone): only its label changes.
  router.patch(
    '/verification-actions-srv/setup/users/:sub/methods/:method/:credentialId',
    enrollmentAuth,
    json,
    async (req, res) => {
      const user = await userOf(req.params.sub, res);
      const label = routeInput(api.renameCredential, req).body.name;
      const credentialId = String(req.params.credentialId);
      await enrollment.rename(user, String(req.params.method), credentialId, label);
      ok(res, { id: credentialId, name: label });
    },
  );
  router.delete(
    '/verification-actions-srv/setup/users/:sub/methods/:method{/:credentialId}',
    enrollmentAuth,
    async (req, res) => {
      const { params } = routeInput(api.removeMethod, req);
      const user = await userOf(params.sub, res);
      const credentialId = params.credentialId;
      ok(res, { removed: await enrollment.remove(user, String(req.params.method), credentialId) });
    },
  );
  return router;
}
