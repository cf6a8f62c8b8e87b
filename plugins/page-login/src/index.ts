import { definePlugin, z } from '@gatehouse-auth/core';
import { LOGIN_API } from './api.js';
import { MESSAGES } from './messages.js';
import { loginPageRoutes } from './routes.js';
import { ENROLL_ON_LOGIN } from './setup-pages.js';

export { LOGIN_API } from './api.js';

/**
 * The hosted login page (decision 43): `GET /login?request_id=…` and its method screens, the
 * method picker, the offer of a method to set up after a login, and the page's scripts, on the
 * core's login-flow API (`api.web.loginFlows`). /authorize sends the browser to `/login` for
 * every app without a `login_page_url`; left out of `plugins:`, `/login` answers 404 and such an
 * app stops start-up.
 */
export default definePlugin({
  name: '@gatehouse-auth/page-login',
  apiVersion: '^1.3',
  // userAccounts is that plugin's (decision 0063).
  dependencies: ['@gatehouse-auth/management', '@gatehouse-auth/verification-api'],
  // Off by default: a user who has none of the methods a stage asks for sets one up on the page.
  appConfig: { [ENROLL_ON_LOGIN]: z.boolean().default(false) },
  register(api) {
    api.messages(MESSAGES);
    const router = api.services.http.createRouter();
    loginPageRoutes(api, router);
    api.routes.add({ path: '/login', router, operations: [LOGIN_API.offerSetup, LOGIN_API.enrollSetup] });
  },
});
