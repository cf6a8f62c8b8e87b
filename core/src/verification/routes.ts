import type { LoginFlowsApi, RequestFacts, UploadedFile } from '@gatehouse-auth/plugin-api';
import express, { type Request, type RequestHandler, type Router } from 'express';
import multer from 'multer';
import { ok, success } from '../http/envelope.js';
import { bodyLimit, formBody, jsonBody } from '../http/parsers.js';
import { multipartError } from '../http/multipart-errors.js';
import type { DeviceCookie } from '../http/device.js';
import type { GatehouseConfig } from '../config/schema.js';
import { withRequestId } from '../oauth/authorize/hosted-login.js';
import type { Logger } from 'pino';
import type { IncomingMessage } from 'node:http';
import { PROOF_HEADER } from '../devices/proof.js';
import { isPlainJson, readJson } from '../http/body.js';
import type { FastRoute } from '../http/fast-routes.js';
import { lazyLogger } from '../http/logging.js';
import { requestFacts, stringFields } from './context.js';
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
export function multipartFor(verification: VerificationService): RequestHandler {
  return (req, res, next) => {
    if (!req.is('multipart/form-data')) return next();
    // A route of no method (the setup API's list) takes no files: said as for a method without them.
    const id = req.params.method;
    if (typeof id !== 'string')
      return next(verificationError('INVALID_FIELD', 'this call does not take multipart bodies'));
    const method = verification.method(id);
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

export function uploadedFiles(req: IncomingMessage): UploadedFile[] {
  const files = ((req as Request).files ?? {}) as Record<string, Express.Multer.File[]>;
  return Object.values(files)
    .flat()
    .map((f) => ({ fieldName: f.fieldname, mimeType: f.mimetype, size: f.size, buffer: f.buffer }));
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
    fast(api.initiate, (method, body, request, logger) =>
      verification.initiate(method, { fields: stringFields(body).fields, request, logger }),
    ),
    fast(api.verify, (method, body, request, logger, req) => {
      const device = { proof: proofHeader(req), path: issuerPath + (req.url ?? '').split('?')[0]! };
      return verification.verify(method, { ...stringFields(body), files: [], request, logger, device });
    }),
  ];
}

/** What the verification and continuation routes use (the container's cradle provides it). */
export interface VerificationRouteDeps {
  config: GatehouseConfig;
  verification: VerificationService;
  /** The hosted page's device cookie, read into the facts FDS rules see. */
  device: DeviceCookie;
  /** The issuer's path: device proofs name the public path of the call. */
  issuerPath: string;
  /** The hosted page's continuation: the binding, the Origin check, the next stage. */
  loginFlows: LoginFlowsApi;
}

/** `?wait=N&state=S`: hold the answer up to N seconds (at most 30) while the state is S. */
function longPoll(query: Request['query']): { known: string; seconds: number } | undefined {
  const seconds = Number(query.wait);
  const known = typeof query.state === 'string' ? query.state : '';
  if (!known || !Number.isFinite(seconds) || seconds <= 0) return undefined;
  return { known, seconds: Math.min(seconds, 30) };
}

export function verificationRoutes(deps: VerificationRouteDeps): Router {
  const { verification } = deps;
  const router = express.Router();
  const api = verificationApi(verification.methods());

  // Initiation and verification: the service's same calls as on the fast path (JSON, see
  // verificationFastRoutes), for forms and multipart bodies.
  router.post(api.initiate.path, json, form, async (req, res) => {
    const { fields } = stringFields(routeInput(api.initiate, req).body);
    const request = requestFacts(req, undefined, deps.device);
    ok(res, await verification.initiate(String(req.params.method), { fields, request, logger: req.log }));
  });

  router.post(api.verify.path, json, form, multipartFor(verification), async (req, res) => {
    const body = stringFields(routeInput(api.verify, req).body);
    const files = uploadedFiles(req);
    const request = requestFacts(req, undefined, deps.device);
    const device = { proof: proofHeader(req), path: deps.issuerPath + req.path };
    ok(res, await verification.verify(String(req.params.method), { ...body, files, request, logger: req.log, device }));
  });

  router.get(api.status.path, async (req, res) => {
    res.set('Cache-Control', 'no-store');
    const { params, query } = routeInput(api.status, req);
    ok(res, await verification.status(params.statusId, longPoll(query)));
  });
  // The same poll as cidaas's notification-status call makes it.
  router.post(api.notificationStatus.path, json, form, async (req, res) => {
    ok(res, await verification.status(routeInput(api.notificationStatus, req).params.statusId));
  });

  router.post(api.cancel.path, json, form, async (req, res) => {
    const { fields, keys } = stringFields(routeInput(api.cancel, req).body);
    ok(res, await verification.cancel(String(req.params.method), fields, keys, requestFacts(req), req.log));
  });

  // The hosted page continues the login here (decision 40: the cidaas-style
  // /login-srv/verification/login is the compat-cidaas plugin's, on the same login flows API).
  router.post(api.continueLogin.path, json, form, async (req, res) => {
    const { fields } = stringFields(routeInput(api.continueLogin, req).body);
    await deps.loginFlows.admit(req, res, fields.requestId);
    const result = await deps.loginFlows.continue(req, fields);
    if (req.accepts(['html', 'json']) === 'json') {
      ok(res, {
        request_id: result.flow.id,
        completed: result.completed,
        stage: result.flow.stage,
        next_methods: result.nextMethods,
        redirect_to: result.location,
      });
    } else {
      // 303 so the browser follows with GET and never re-posts the credential (RFC 9700 §4.12).
      res.redirect(303, result.location);
    }
  });

  return router;
}
