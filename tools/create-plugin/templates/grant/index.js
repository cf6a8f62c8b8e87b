// @ts-check
/**
 * Grant __GRANT_TYPE__: a confidential client gets an access token for itself, limited to the
 * scopes its app lists (a starting point: replace the checks with what your grant proves).
 */
import { definePlugin, OAuthError, z } from '@gatehouse-auth/core';

export const GRANT_TYPE = '__GRANT_TYPE__';

export default definePlugin({
  name: '__NAME__',
  apiVersion: '^1',
  options: z.strictObject({}).prefault({}),
  register(api) {
    api.grants.add({
      grantType: GRANT_TYPE,
      // The only request parameters the core passes on (besides grant_type and client_id).
      parameters: ['scope'],
      async handle(ctx) {
        const { client, params, oauth } = ctx;
        if (client.isPublic) throw new OAuthError('unauthorized_client', 'public clients may not use this grant');
        const scope = oauth.resolveScope(params.scope, client.scopes, client.scopes);
        return oauth.issue({ client, subject: null, scope, grantType: GRANT_TYPE, refreshToken: false });
      },
    });
  },
});
