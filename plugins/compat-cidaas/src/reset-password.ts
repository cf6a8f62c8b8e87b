import type { IncomingMessage } from 'node:http';
import {
  ApiError,
  isProtocolError,
  routeInput,
  type LoginFlowView,
  type RouteSpec,
  answerSuccess,
  textFields,
} from '@gatehouse-auth/core';
import { CIDAAS_API } from './api.js';
import type { Request, Response } from 'express';
import type { RouteGroupInput } from './http.js';

/**
 * The part of the `passwordRecovery` service (@gatehouse-auth/account-recovery) these calls use.
 * Every step refuses with an ApiError (status and code).
 */
interface PasswordRecoveryService {
  initiate(
    req: IncomingMessage,
    input: { identifier: string; medium?: 'email' | 'sms' | null },
  ): Promise<{ resetRequestId: string }>;
  validateCode(
    req: IncomingMessage,
    input: { resetRequestId: unknown; code: unknown },
  ): Promise<{ exchangeId: string }>;
  acceptReset(
    req: IncomingMessage,
    input: { resetRequestId: unknown; exchangeId: unknown; password: unknown; confirmPassword: unknown },
  ): Promise<{ sub: string }>;
}

const MEDIA: Record<string, 'email' | 'sms'> = { EMAIL: 'email', SMS: 'sms' };

/**
 * `POST /password-srv/resetpassword?action=initiatereset|validatecode|acceptreset`, as the cidaas
 * SDK's UserService sends them, on the `passwordRecovery` service of the account-recovery plugin
 * (404 RECOVERY_NOT_ENABLED without it). The same answer for every identifier; a code spent once;
 * a user with a second factor is sent to the hosted reset, which asks for it
 * (403 SECOND_FACTOR_REQUIRED). `initiatereset` answers JSON; `validatecode` and `acceptreset`
 * answer JSON when the request is JSON (or asks for it), else, as the SDK's form posts expect, a
 * redirect to the app's login UI (of the flow `requestId` names) with the result in the query:
 * `exchangeId` alone, never `resetRequestId`, so the URL never carries all a reset needs.
 */
export function resetPasswordRoutes({ api, router }: RouteGroupInput): RouteSpec[] {
  const { services, web } = api;

  const recovery = (): PasswordRecoveryService => {
    try {
      return services.resolve<PasswordRecoveryService>('passwordRecovery');
    } catch {
      throw new ApiError(
        404,
        'RECOVERY_NOT_ENABLED',
        'password reset is not enabled on this server (plugin @gatehouse-auth/account-recovery)',
      );
    }
  };

  /** The login UI a form post goes back to: of the flow `requestId` names, if that app has one. */
  const loginUiOf = async (requestId: string | undefined, extra: Record<string, string>) => {
    const flow: LoginFlowView | null = requestId ? await web.loginFlows.get(requestId) : null;
    return flow ? web.loginFlows.loginUiUrl(flow, extra) : null;
  };

  const wantsJson = (req: Request) =>
    req.is('application/json') === 'application/json' || req.accepts(['html', 'json']) === 'json';

  /** A form step: its answer as a redirect to the login UI when there is one, else JSON; errors alike. */
  async function formStep(
    req: Request,
    res: Response,
    fields: Record<string, string>,
    step: () => Promise<{ data: Record<string, unknown>; query: Record<string, string> }>,
  ): Promise<void> {
    const json = wantsJson(req);
    try {
      const { data, query } = await step();
      const back = json ? null : await loginUiOf(fields.requestId, query);
      if (back) return res.redirect(303, back);
      answerSuccess(res, data);
    } catch (err) {
      if (!isProtocolError(err) || json) throw err;
      const back = await loginUiOf(fields.requestId, { error: err.code, error_description: err.message });
      if (!back) throw err;
      res.redirect(303, back);
    }
  }

  router.post(CIDAAS_API.resetPassword.path, services.http.json(), services.http.form(), async (req, res) => {
    const input = routeInput(CIDAAS_API.resetPassword, req);
    const fields = textFields(input.body);
    const action = input.query.action;
    if (action === 'initiatereset') {
      const service = recovery();
      const identifier = fields.email ?? fields.mobile ?? fields.phone ?? fields.username ?? '';
      const medium = MEDIA[(fields.resetMedium ?? '').toUpperCase()] ?? null;
      try {
        const { resetRequestId } = await service.initiate(req, { identifier, medium });
        return answerSuccess(res, { reset_initiated: true, rprq: resetRequestId });
      } catch (err) {
        const retry = isProtocolError(err) ? (err as ApiError).details?.retry_after : undefined;
        if (retry !== undefined) res.set('Retry-After', String(retry));
        throw err;
      }
    }
    if (action === 'validatecode') {
      const service = recovery();
      return formStep(req, res, fields, async () => {
        const { exchangeId } = await service.validateCode(req, {
          resetRequestId: fields.resetRequestId,
          code: fields.code,
        });
        return {
          data: { exchangeId, resetRequestId: fields.resetRequestId },
          query: { exchangeId },
        };
      });
    }
    if (action === 'acceptreset') {
      const service = recovery();
      return formStep(req, res, fields, async () => {
        await service.acceptReset(req, {
          resetRequestId: fields.resetRequestId,
          exchangeId: fields.exchangeId,
          password: fields.password,
          confirmPassword: fields.confirmPassword,
        });
        return { data: { reseted: true }, query: { reset: 'done' } };
      });
    }
    throw new ApiError(400, 'INVALID_FIELD', 'action must be initiatereset, validatecode or acceptreset');
  });
  return [CIDAAS_API.resetPassword];
}
