import express, { type RequestHandler, type Router } from 'express';
import { formBody } from '../../http/parsers.js';
import { cancelAuthorization } from './cancel.js';
import { AUTHORIZE_PATHS, AuthorizeContext, CANCEL_PATH, RESUME_PATH, type AuthorizeDeps } from './context.js';
import { ErrorPage } from './request.js';
import { resumeAuthorization } from './resume.js';
import { startAuthorization } from './start.js';

export { AUTHORIZE_PATHS, AuthorizeContext, RESUME_PATH, type AuthorizeDeps } from './context.js';
export { AuthorizeChoices } from './choices.js';
export { browserBinding, flowFormToken, MAX_FLOW_COOKIES, sessionCookieName, type BrowserBinding } from './browser.js';
export { authorizeUrlOf, RedirectError, validate, type AuthorizationRequest } from './request.js';

/**
 * The authorization endpoint and the steps of the browser's way back to the client, one module
 * each: start (validate, single sign-on or a login flow), resume (session, consent?, answer) and
 * cancel. The consent and the account choice are a plugin's pages on `web.authorize` (decision 75).
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
  router.post(CANCEL_PATH, formBody('8kb', 20), action(cancelAuthorization(ctx)));
  return router;
}
