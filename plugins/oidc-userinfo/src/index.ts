import { definePlugin, OAuthError, routeInput } from '@gatehouse-auth/core';
import type { Request, Response } from 'express';
import { USERINFO_PATHS, userinfoRoute } from './routes.js';

export { USERINFO_PATHS, userinfoRoute } from './routes.js';

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/**
 * @gatehouse-auth/oidc-userinfo: the OpenID Connect UserInfo endpoint (OIDC Core §5.3). An app
 * calls `/userinfo` (or `/oauth2/userinfo`), GET or POST, with an access token of the `openid`
 * scope: `Authorization: Bearer`, a form's `access_token`, or `Authorization: DPoP` with a proof
 * for a DPoP-bound token; a certificate-bound token over a connection with its certificate. It
 * answers the user's claims of the token's scopes (§5.4) and those its `claims` parameter named
 * for userinfo (§5.5). Discovery names it (`userinfo_endpoint`). Left out of `plugins:`, the paths
 * answer 404 and discovery has no `userinfo_endpoint`.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/oidc-userinfo'
 */
export default definePlugin({
  name: '@gatehouse-auth/oidc-userinfo',
  apiVersion: '^1.3',
  register(api) {
    const { web, services } = api;
    api.discovery({ userinfo_endpoint: web.url(USERINFO_PATHS[0]) });
    const post = userinfoRoute('post');

    const userinfo = async (req: Request, res: Response) => {
      res.set(NO_STORE);
      // A parameter sent twice is invalid_request, before the token is looked at.
      if (req.method === 'POST') routeInput(post, req);
      const access = await web.protectedResource(req, { scope: 'openid', user: true });
      const claims = await web.userClaims(access);
      if (!claims) throw new OAuthError('invalid_token', 'the subject no longer exists');
      res.json({ ...claims, sub: access.token.subject });
    };

    // At the shared root: the two paths are one endpoint, documented once.
    const router = services.http.createRouter();
    for (const path of USERINFO_PATHS) {
      router.get(path, userinfo);
      router.post(path, services.http.form({ limit: '16kb', fields: 20 }), userinfo);
    }
    api.routes.add({
      path: '/',
      router,
      operations: () => [
        userinfoRoute('get', web.protectedResourceErrors()),
        userinfoRoute('post', web.protectedResourceErrors()),
      ],
    });
    // A single-page app calls it from its own origin: CORS for the apps' allowed_origins.
    api.cors([...USERINFO_PATHS]);
  },
});
