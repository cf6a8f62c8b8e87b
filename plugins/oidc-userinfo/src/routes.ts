import { defineRoute, OAuthError, z, type ErrorRef } from '@gatehouse-auth/core';

/** Where userinfo answers (OIDC Core §5.3; the second path is cidaas's). */
export const USERINFO_PATHS = ['/userinfo', '/oauth2/userinfo'] as const;

/** GET or POST userinfo, as /openapi.json shows it; `errors`: those of `web.protectedResource`. */
export const userinfoRoute = (method: 'get' | 'post', errors: readonly ErrorRef[] = []) =>
  defineRoute({
    id: method === 'get' ? 'userinfo' : 'userinfoPost',
    method,
    path: USERINFO_PATHS[0],
    also: USERINFO_PATHS.slice(1),
    tag: 'oauth',
    errorStyle: 'oauth',
    // Every value of a form is text: a failure is a parameter sent twice.
    invalid: (_message, names) => new OAuthError('invalid_request', `${names[0]} is required`),
    summary: 'The signed-in user’s claims (OIDC Core §5.3)',
    security: ['accessToken'],
    ...(method === 'post'
      ? {
          body: z
            .object({
              access_token: z
                .string()
                .optional()
                .meta({ description: 'the access token, when not in the Authorization header' }),
            })
            .catchall(z.string()),
          bodyTypes: ['application/x-www-form-urlencoded'],
        }
      : {}),
    response: {
      description: 'the claims of the token’s scopes and of its `claims` request',
      schema: z.object({ sub: z.string() }).catchall(z.unknown()),
    },
    errors: [...errors, ...(method === 'post' ? ['invalid_request'] : [])],
  });
