import {
  isProtocolError,
  routeInput,
  textFields,
  type ApiError,
  type RouteSpec,
  verificationError,
  answerContinuation,
  answerSuccess,
} from '@gatehouse-auth/core';
import type { Request, Response } from 'express';
import { CIDAAS_API } from './api.js';
import type { RouteGroupInput } from './http.js';

/**
 * What an app's own login UI (apps[i].login_page_url) calls to move a login on, cidaas-style:
 * a request id without a redirect (generate), what the request shows, a password form, and the
 * continuation with a status_id. Every continuation is admitted by the core's login flows first
 * (the form's Origin, the browser binding, the first claim of a generated flow: decision 20).
 */
export function loginRoutes({ api, router }: RouteGroupInput): RouteSpec[] {
  const { services, web } = api;
  const flows = web.loginFlows;
  const json = services.http.json();
  const form = services.http.form();

  /**
   * A form POST from an app's own login UI that fails goes back to that UI with `error` and
   * `error_description`, never to a JSON page the app cannot leave (decision 19).
   */
  const formErrors =
    (handler: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
      try {
        await handler(req, res);
      } catch (err) {
        const requestId = textFields(req.body).requestId;
        const failure = isProtocolError(err) ? (err as ApiError) : null;
        // A form from another site is answered here, never sent on to the app's UI.
        if (failure?.code === 'ORIGIN_NOT_ALLOWED') throw err;
        const flow = requestId && failure ? await flows.get(requestId) : null;
        const back =
          flow && failure && req.accepts(['html', 'json']) !== 'json'
            ? flows.loginUiUrl(flow, { error: failure.code, error_description: failure.message })
            : null;
        if (!back) throw err;
        res.redirect(303, back);
      }
    };

  // A password stage completed by an app's own login UI with a plain form.
  router.post(
    CIDAAS_API.passwordLogin.path,
    form,
    json,
    formErrors(async (req, res) => {
      const fields = textFields(routeInput(CIDAAS_API.passwordLogin, req).body);
      const requestId = fields.requestId ?? '';
      await flows.admit(req, res, requestId);
      const result = await flows.continueWithPassword(req, {
        requestId,
        username: fields.username ?? '',
        password: fields.password ?? '',
      });
      res.redirect(303, result.location);
    }),
  );

  router.post(
    CIDAAS_API.continueLogin.path,
    json,
    form,
    formErrors(async (req, res) => {
      const fields = textFields(routeInput(CIDAAS_API.continueLogin, req).body);
      await flows.admit(req, res, fields.requestId);
      answerContinuation(req, res, await flows.continue(req, fields));
    }),
  );

  // What an app's own login UI shows for a request.
  router.get(CIDAAS_API.requestInfo.path, async (req, res) => {
    const flow = await flows.get(routeInput(CIDAAS_API.requestInfo, req).params.requestId);
    const now = services.clock.now();
    if (!flow || flow.status !== 'active' || flow.expiresAt <= now || flow.stage >= flow.stages.length) {
      throw verificationError('REQUEST_NOT_FOUND');
    }
    const oauth = flow.oauth ?? {};
    answerSuccess(res, {
      requestId: flow.id,
      client_id: flow.clientId,
      client_name: flow.clientName,
      // The methods of the stage to do now, registered ones only (the first stage: how to start).
      allowed_methods: flows.stageMethods(flow).map((m) => m.id),
      stage: flow.stage + 1,
      stages: flow.stages.length,
      ui_locales: typeof oauth.ui_locales === 'string' ? oauth.ui_locales : null,
      login_hint: typeof oauth.login_hint === 'string' && !flow.userId ? oauth.login_hint : null,
    });
  });

  // A request id for an app's own login UI, by XHR, without a redirect: unclaimed until its
  // first continuation from the app's page (decision 20).
  router.post(CIDAAS_API.generate.path, json, form, async (req, res) => {
    const params: Record<string, string> = {};
    for (const [name, value] of Object.entries(routeInput(CIDAAS_API.generate, req).body)) {
      if (value !== undefined) params[name] = String(value);
    }
    const flow = await flows.generate(req, res, params);
    answerSuccess(res, { requestId: flow.id });
  });

  return [CIDAAS_API.passwordLogin, CIDAAS_API.continueLogin, CIDAAS_API.requestInfo, CIDAAS_API.generate];
}
