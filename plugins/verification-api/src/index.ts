import {
  CONTINUE_ROUTE,
  definePlugin,
  routeInput,
  textFields,
  z,
  type FastJsonRoute,
  type PluginApi,
  answerContinuation,
  answerSuccess,
} from '@gatehouse-auth/core';
import type { Request } from 'express';
import { VERIFICATION_PATHS, verificationApi } from './api.js';

export { VERIFICATION_PATHS, verificationApi } from './api.js';

/**
 * The verification service's routes (docs/verification.md, decision 78): a method's initiation,
 * verification (multipart for methods that take files) and cancellation, a verification's status
 * (long poll) and cidaas's notification-status call, and the hosted page's continuation of the
 * login. Each call is a `web.verification` or `web.loginFlows` operation, which runs every check
 * (the spec's order, FDS, the device's proof, single use): this plugin validates and routes. The
 * JSON initiation and verification are served before express too (`fast`, decision 11). Left out
 * of `plugins:`, the paths answer 404 (a server that only does OAuth).
 */
export default definePlugin({
  name: '@gatehouse-auth/verification-api',
  apiVersion: '^1.3',
  options: z.strictObject({}),
  register(api: PluginApi) {
    const { web } = api;
    // Taken once: the fast path calls them per request.
    const { initiate, verify, status, cancel, admit } = web.verification;
    const router = api.services.http.createRouter();
    const json = api.services.http.json();
    const form = api.services.http.form({ limit: '100kb', fields: 100 });
    // The declarations name the registered methods' fields, files and codes: made once every plugin registered.
    let declared: ReturnType<typeof verificationApi> | undefined;
    const spec = () => (declared ??= verificationApi(web.methods()));
    const method = (req: Request) => String(req.params.method);

    // Initiation and verification: the same operations as on the fast path (JSON, below), for
    // forms and multipart bodies.
    router.post(VERIFICATION_PATHS.initiate, json, form, async (req, res) => {
      answerSuccess(res, await initiate(req, method(req), routeInput(spec().initiate, req).body));
    });
    router.post(VERIFICATION_PATHS.verify, json, form, admit, async (req, res) => {
      answerSuccess(res, await verify(req, method(req), routeInput(spec().verify, req).body));
    });
    router.get(VERIFICATION_PATHS.status, async (req, res) => {
      const { params, query } = routeInput(spec().status, req);
      answerSuccess(res, await status(params.statusId, query));
    });
    // The same poll as cidaas's notification-status call makes it.
    router.post(VERIFICATION_PATHS.notificationStatus, json, form, async (req, res) => {
      answerSuccess(res, await status(routeInput(spec().notificationStatus, req).params.statusId));
    });
    router.post(VERIFICATION_PATHS.cancel, json, form, async (req, res) => {
      answerSuccess(res, await cancel(req, method(req), routeInput(spec().cancel, req).body));
    });

    // The hosted page continues the login here (decision 40: the cidaas-style
    // /login-srv/verification/login is compat-cidaas's, on the same login flows API).
    router.post(CONTINUE_ROUTE.path, json, form, async (req, res) => {
      const fields = textFields(routeInput(spec().continueLogin, req).body);
      await web.loginFlows.admit(req, res, fields.requestId);
      answerContinuation(req, res, await web.loginFlows.continue(req, fields));
    });

    // The hot requests of a login, with a JSON body: answered before express (decision 11).
    const fast: FastJsonRoute[] = [
      {
        method: 'POST',
        path: VERIFICATION_PATHS.initiate,
        handle: (req, params, body, ip) =>
          initiate(req, params.method!, routeInput(spec().initiate, { params, body }).body, ip),
      },
      {
        method: 'POST',
        path: VERIFICATION_PATHS.verify,
        handle: (req, params, body, ip) =>
          verify(req, params.method!, routeInput(spec().verify, { params, body }).body, ip),
      },
    ];
    api.routes.add({ path: '/', router, fast, operations: () => Object.values(spec()) });
  },
});
