import express, { type RequestHandler, type Router } from 'express';
import { formBody } from '../../http/parsers.js';
import { cancelAuthorization } from './cancel.js';
import { AUTHORIZE_PATHS, CANCEL_PATH, RESUME_PATH, type AuthorizeContext } from './context.js';
import { resumeAuthorization } from './resume.js';
import { startAuthorization } from './start.js';

export { AuthorizeContext, RESUME_PATH } from './context.js';
export { AuthorizeChoices } from './choices.js';
export { browserBinding, MAX_FLOW_COOKIES, type BrowserBinding } from './browser.js';

/**
 * The authorization endpoint and the steps of the browser's way back to the client, one module
 * each: start (validate, single sign-on or a login flow), resume (session, consent?, answer) and
 * cancel. The consent and the account choice are a plugin's pages on `web.authorize` (decision 75).
 */
export function authorizeRoutes(ctx: AuthorizeContext): Router {
  const router = express.Router();
  // An ErrorPage an action throws is shown as a page: no redirect URI is trusted for it.
  const action =
    (handler: RequestHandler): RequestHandler =>
    async (req, res, next) => {
      await ctx.shown(res, async () => handler(req, res, next));
    };
  router.get(AUTHORIZE_PATHS, action(startAuthorization(ctx)));
  router.get(RESUME_PATH, action(resumeAuthorization(ctx)));
  router.post(CANCEL_PATH, formBody('8kb', 20), action(cancelAuthorization(ctx)));
  return router;
}
