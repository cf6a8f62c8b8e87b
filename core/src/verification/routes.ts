import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import multer from 'multer';
import { ok, success } from '../http/envelope.js';
import { requireAdmin } from '../http/admin.js';
import { bodyLimit, formBody, jsonBody } from '../http/parsers.js';
import type { DeviceCookie } from '../http/device.js';
import type { GatehouseConfig } from '../config/schema.js';
import type { TokenService } from '../oauth/tokens.js';
import type { Clock } from '../services.js';
import type { LoginFlowStore } from './flows.js';
import type { Logger } from 'pino';
import { isPlainJson, readJson } from '../http/body.js';
import type { FastRoute } from '../http/fast-routes.js';
import { lazyLogger } from '../http/logging.js';
import type { RequestFacts, UploadedFile, UserRecord } from '../plugins/extensions.js';
import type { UserService } from '../users/users.js';
import { safeEqual } from '../util/crypto.js';
import { requestFacts, stringFields } from './context.js';
import type { EnrollmentService, EnrollmentStep } from './enrollment.js';
import { verificationError } from './errors.js';
import type { LoginFlow } from './flows.js';
import type { VerificationService } from './service.js';

/** Where the browser goes after a stage: the hosted login page, or back to the client. */
export interface LoginRedirects {
  nextStage(flow: LoginFlow): string;
  completed(flow: LoginFlow): string;
}

export const defaultRedirects: LoginRedirects = {
  nextStage: (flow) => `/login?request_id=${encodeURIComponent(flow.id)}`,
  completed: (flow) =>
    typeof flow.params.return_to === 'string'
      ? flow.params.return_to
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
      limits: {
        fileSize: Math.max(...files.map((f) => f.maxBytes)),
        files: files.length,
        fields: 50,
        fieldSize: 16_384,
      },
    }).fields(files.map((f) => ({ name: f.name, maxCount: 1 })));
    // Every file at its limit plus room for the text fields: more is refused from the header.
    const most = files.reduce((sum, f) => sum + f.maxBytes, 0) + 64 * 1024;
    bodyLimit(most)(req, res, (err?: unknown) => (err ? next(err) : upload(req, res, next)));
  };
}

function uploadedFiles(req: Request): UploadedFile[] {
  const files = (req.files ?? {}) as Record<string, Express.Multer.File[]>;
  return Object.values(files)
    .flat()
    .map((f) => ({ fieldName: f.fieldname, mimeType: f.mimetype, size: f.size, buffer: f.buffer }));
}

const INITIATION_PATH = '/verification-srv/authentication/:method/initiation';
const VERIFICATION_PATH = '/verification-srv/authentication/:method/verification';

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
) {
  const { fields, malformed, keys } = stringFields(body);
  return verification.verify(method, { fields, malformed, keys, files, request, logger });
}

/**
 * Initiation and verification with a JSON body, outside express (decision 11): the hot
 * requests of a login. Forms and multipart bodies still go through express.
 */
export function verificationFastRoutes(verification: VerificationService, device?: DeviceCookie): FastRoute[] {
  const fast = (
    path: string,
    handle: (method: string, body: unknown, request: RequestFacts, logger: Logger) => Promise<unknown>,
  ): FastRoute => ({
    method: 'POST',
    path,
    accepts: isPlainJson,
    endpoint: async (req, ip, params) =>
      success(
        await handle(
          params.method!,
          await readJson(req),
          requestFacts(req, ip, device),
          lazyLogger(() => req.log),
        ),
      ),
  });
  return [
    fast(INITIATION_PATH, (method, body, request, logger) => initiation(verification, method, body, request, logger)),
    fast(VERIFICATION_PATH, (method, body, request, logger) =>
      verificationStep(verification, method, body, [], request, logger),
    ),
  ];
}

/** Who a bearer token belongs to and when they last authenticated (for enrollment). */
export type BearerResolver = (
  token: string,
) => Promise<{ userId: string; authTime: number | null; scope: string[]; amr: string[] } | null>;

/** The scope a user's access token needs to manage its own sign-in methods (first-party apps). */
export const MANAGE_METHODS_SCOPE = 'gatehouse.methods';

/** What the verification, continuation and setup routes use (the container's cradle provides it). */
export interface VerificationRouteDeps {
  config: GatehouseConfig;
  verification: VerificationService;
  enrollment: EnrollmentService;
  users: UserService;
  /** A user's own access token may manage their methods (recently authenticated). */
  tokens: TokenService;
  flows: LoginFlowStore;
  clock: Clock;
  /** Whether this browser may continue a login flow (the OAuth flow's cookie binding). */
  binding: { isBound(req: Request, flow: LoginFlow): boolean };
  /** The hosted page's device cookie, read into the facts FDS rules see. */
  device: DeviceCookie;
  /** Where the browser goes after a stage. */
  loginRedirects: LoginRedirects;
}

/** How recent the user's authentication must be to change methods with their own token (ASVS 5 7.5.1). */
const MAX_AUTH_AGE_SECONDS = 900;

/** Who a user's access token belongs to and when they last authenticated. */
function bearerResolver(tokens: TokenService): BearerResolver {
  return async (token) => {
    const info = await tokens.inspect(token);
    if (!info.active || info.token?.kind !== 'access' || !info.token.subject) return null;
    const authTime = info.token.data.auth_time ?? info.grant?.data.auth_time;
    const amr = info.token.data.amr ?? info.grant?.data.amr;
    return {
      userId: info.token.subject,
      authTime: typeof authTime === 'number' ? authTime : null,
      scope: info.token.scope,
      amr: Array.isArray(amr) ? amr.filter((v): v is string => typeof v === 'string') : [],
    };
  };
}

export function verificationRoutes(deps: VerificationRouteDeps): Router {
  const adminToken = deps.config.admin.token;
  const resolveBearer = bearerResolver(deps.tokens);
  const now = () => deps.clock.now();
  const mayContinue = async (req: Request, requestId: string) => {
    const flow = await deps.flows.get(requestId);
    return !flow || deps.binding.isBound(req, flow);
  };
  const { verification, enrollment, users } = deps;
  const redirects = deps.loginRedirects;
  const router = express.Router();

  // Initiation and verification: the same functions serve express (forms, multipart) and the
  // fast path (JSON, see verificationFastRoutes).
  router.post(INITIATION_PATH, json, form, async (req, res) =>
    ok(
      res,
      await initiation(
        verification,
        String(req.params.method),
        req.body,
        requestFacts(req, undefined, deps.device),
        req.log,
      ),
    ),
  );

  router.post(VERIFICATION_PATH, json, form, multipartFor(verification), async (req, res) =>
    ok(
      res,
      await verificationStep(
        verification,
        String(req.params.method),
        req.body,
        uploadedFiles(req),
        requestFacts(req, undefined, deps.device),
        req.log,
      ),
    ),
  );

  router.get('/verification-srv/verificationstatus/:statusId', async (req, res) => {
    res.set('Cache-Control', 'no-store');
    ok(res, await verification.status(String(req.params.statusId)));
  });

  router.post('/login-srv/verification/login', json, form, async (req, res) => {
    const { fields } = stringFields(req.body);
    if (fields.requestId && !(await mayContinue(req, fields.requestId))) {
      throw verificationError('FLOW_NOT_BOUND');
    }
    const result = await verification.continueLogin(fields, req.log);
    const location = result.completed ? redirects.completed(result.flow) : redirects.nextStage(result.flow);
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
  });

  // Enrollment: the admin credential with the user named in `sub`, or the user's own access
  // token from a recent login (changing methods needs a fresh authentication).
  const adminGuard = requireAdmin(adminToken);
  const enrollmentAuth: RequestHandler = async (req, res, next) => {
    const header = req.headers.authorization ?? '';
    const bearer = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (!bearer || (adminToken && safeEqual(bearer, adminToken))) {
      return adminGuard(req, res, next);
    }
    const owner = await resolveBearer(bearer);
    if (!owner) return next(verificationError('UNAUTHORIZED', 'the bearer token is not valid'));
    const maxAge = MAX_AUTH_AGE_SECONDS;
    if (!owner.scope.includes(MANAGE_METHODS_SCOPE)) {
      return next(verificationError('INSUFFICIENT_SCOPE', `the token needs the ${MANAGE_METHODS_SCOPE} scope`));
    }
    if (owner.authTime === null || now().getTime() / 1000 - owner.authTime > maxAge) {
      return next(verificationError('REAUTHENTICATION_REQUIRED'));
    }
    // A password alone must not change the factors of an account that has a second one.
    const user = await users.findById(owner.userId);
    if (
      user &&
      owner.amr.every((v) => v === 'pwd') &&
      (await enrollment.hasSecondFactor(user, requestFacts(req), req.log))
    ) {
      return next(
        verificationError('REAUTHENTICATION_REQUIRED', 'sign in with your second factor to change sign-in methods'),
      );
    }
    res.locals.tokenUser = owner.userId;
    next();
  };
  const userOf = async (sub: unknown, res: Response): Promise<UserRecord> => {
    const tokenUser = res.locals.tokenUser as string | undefined;
    if (tokenUser) {
      // A user's own token acts only for that user.
      if (sub !== undefined && sub !== tokenUser)
        throw verificationError('UNAUTHORIZED', 'the token belongs to another user');
      const user = await users.findById(tokenUser);
      if (!user) throw verificationError('USER_NOT_FOUND');
      return user;
    }
    if (typeof sub !== 'string' || !sub) throw verificationError('FIELD_MISSING', 'missing: sub', { fields: ['sub'] });
    const user = (await users.findById(sub)) ?? (await users.findByIdentifier(sub));
    if (!user) throw verificationError('USER_NOT_FOUND');
    return user;
  };
  const enrollmentStep = (step: EnrollmentStep) => async (req: Request, res: Response) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const user = await userOf(body.sub, res);
    ok(res, await enrollment.step(step, req.params.method as string, user, body, requestFacts(req), req.log));
  };
  for (const step of ['initiation', 'scan', 'verification'] as const) {
    router.post(`/verification-actions-srv/setup/:method/${step}`, enrollmentAuth, json, form, enrollmentStep(step));
  }
  router.get('/verification-actions-srv/setup/users/:sub/methods', enrollmentAuth, async (req, res) => {
    const user = await userOf(req.params.sub, res);
    ok(res, await enrollment.list(user, requestFacts(req), req.log));
  });
  router.delete(
    '/verification-actions-srv/setup/users/:sub/methods/:method{/:credentialId}',
    enrollmentAuth,
    async (req, res) => {
      const user = await userOf(req.params.sub, res);
      const credentialId = req.params.credentialId as string | undefined;
      ok(res, { removed: await enrollment.remove(user, String(req.params.method), credentialId) });
    },
  );
  return router;
}
