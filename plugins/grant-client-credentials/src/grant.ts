import {
  OAuthError,
  type GrantContext,
  type GrantHandler,
  type JsonObject,
  type TokenResponse,
} from '@gatehouse-auth/core';
import { serviceSubjectOf } from './subject.js';

export const CLIENT_CREDENTIALS = 'client_credentials';

/** Scopes that only make sense with an end user's authentication. */
const USER_ONLY_SCOPES = ['openid', 'offline_access'];

/**
 * The client_credentials grant (RFC 6749 §4.4): a confidential client gets an access token for
 * itself, or for an enterprise or user it was configured to act for. No refresh token, no ID
 * token (RFC 6749 §4.4.3).
 */
export function clientCredentialsGrant(): GrantHandler {
  return {
    grantType: CLIENT_CREDENTIALS,
    parameters: ['scope', 'service_subject_type', 'service_subject_id'],
    // Introspection tells a resource server whom a client-credentials token acts for.
    introspectionClaims: (token): JsonObject =>
      typeof token.data.service_subject_type === 'string'
        ? {
            service_subject_type: token.data.service_subject_type,
            service_subject_id: token.data.service_subject_id ?? null,
          }
        : {},
    async handle(ctx: GrantContext): Promise<TokenResponse> {
      const { client, params, oauth } = ctx;
      if (client.isPublic) throw new OAuthError('unauthorized_client', 'public clients may not use client_credentials');
      const allowed = client.scopes.filter((s) => !USER_ONLY_SCOPES.includes(s));
      const scope = oauth.resolveScope(params.scope, allowed, allowed);
      const subject = serviceSubjectOf(client, params);
      if (subject?.type === 'user') {
        const user = await oauth.users.findById(subject.id);
        if (!user || user.status !== 'active')
          throw new OAuthError('invalid_request', 'service_subject_id names no active user');
      }
      return oauth.issue({
        client,
        // A user subject becomes `sub`; for an enterprise (or none) `sub` is the client itself.
        subject: subject?.type === 'user' ? subject.id : null,
        scope,
        grantType: CLIENT_CREDENTIALS,
        refreshToken: false,
        ...(subject ? { claims: { service_subject_type: subject.type, service_subject_id: subject.id } } : {}),
      });
    },
  };
}
