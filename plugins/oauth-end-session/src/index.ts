import { definePlugin } from '@gatehouse-auth/core';
import { endSession } from './endpoint.js';
import { MESSAGES } from './messages.js';
import { END_SESSION_PATH, MOUNT } from './paths.js';

export { END_SESSION_PATH } from './paths.js';

/**
 * @gatehouse-auth/oauth-end-session: OpenID Connect RP-Initiated Logout 1.0. An app sends the
 * browser to `/session/end_session` (GET or POST) with its `id_token_hint`, a registered
 * `post_logout_redirect_uri` and `state`: the browser's session ends (its apps told by
 * back-channel logout, which the core does for every ended session) and the browser goes back.
 * Without a hint for this browser's user the user confirms first. Discovery names the endpoint
 * (`end_session_endpoint`), and the hosted login page offers "Not you? Sign out" with it. Left out
 * of `plugins:`, the path answers 404 and discovery has no `end_session_endpoint`.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/oauth-end-session'
 * apps:
 *   - client_id: web
 *     post_logout_redirect_uris: [https://app.example/signed-out]
 */
export default definePlugin({
  name: '@gatehouse-auth/oauth-end-session',
  apiVersion: '^1.3',
  register(api) {
    const { web, services } = api;
    api.messages(MESSAGES);
    api.discovery({ end_session_endpoint: web.url(END_SESSION_PATH) });
    const handlers = endSession(api);
    const router = services.http.createRouter();
    const path = END_SESSION_PATH.slice(MOUNT.length);
    router.get(path, handlers.get);
    router.post(path, services.http.form(), handlers.post);
    api.routes.add({ path: MOUNT, router });
  },
});
