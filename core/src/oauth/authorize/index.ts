import express, { type RequestHandler, type Router } from 'express';
import { formBody } from '../../http/parsers.js';
import { ACCOUNT_PATH, decideAccount, showAccountChoice } from './account.js';
import { cancelAuthorization } from './cancel.js';
import { decideConsent, showConsent } from './consent.js';
import {
  AUTHORIZE_PATHS,
  AuthorizeContext,
  CANCEL_PATH,
  CONSENT_PATH,
  RESUME_PATH,
  type AuthorizeDeps,
} from './context.js';
import { ErrorPage } from './request.js';
import { resumeAuthorization } from './resume.js';
import { startAuthorization } from './start.js';

export { AUTHORIZE_PATHS, RESUME_PATH, type AuthorizeDeps } from './context.js';
export { browserBinding, flowFormToken, MAX_FLOW_COOKIES, sessionCookieName, type BrowserBinding } from './browser.js';
export { authorizeUrlOf, RedirectError, validate, type AuthorizationRequest } from './request.js';

/**
 * The authorization endpoint and the steps of the browser's way back to the client, one module
 * each: start (validate, single sign-on or a login flow), resume (session, consent?, answer),
 * consent, cancel and the account choice of prompt=select_account.
 */
export function authorizeRoutes(deps: AuthorizeDeps): Router {
  const ctx = new AuthorizeContext(deps);
  const router = express.Router();
  // An ErrorPage an action throws is shown as a page: no redirect URI is trusted for it.
  const action =
    (handler: RequestHandler): RequestHandler =>
    async (req, res, next) => {
      try {
        await handler(req, res, next);
      } catch (err) {
        if (err instanceof ErrorPage) return ctx.showError(res, err);
        throw err;
      }
    };
  router.get(AUTHORIZE_PATHS, action(startAuthorization(ctx)));
  router.get(RESUME_PATH, action(resumeAuthorization(ctx)));
  router.get(CONSENT_PATH, action(showConsent(ctx)));
  router.post(CONSENT_PATH, formBody('8kb', 20), action(decideConsent(ctx)));
  router.post(CANCEL_PATH, formBody('8kb', 20), action(cancelAuthorization(ctx)));
  router.get(ACCOUNT_PATH, action(showAccountChoice(ctx)));
  router.post(ACCOUNT_PATH, formBody('8kb', 20), action(decideAccount(ctx)));
  return router;
}
