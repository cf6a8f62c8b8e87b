import {
  ACCESS_TOKEN_TYPE,
  ID_TOKEN_TYPE,
  OAuthError,
  type Clock,
  type GrantContext,
  type GrantHandler,
  type JsonObject,
  type StoredToken,
  type TokenResponse,
} from '@gatehouse-auth/core';
import { acceptActorToken } from './actor.js';
import { isJsonObject } from './json.js';
import { restrictedObjects, restrictionClaims, restrictionFor } from './restriction.js';
import { resolveExchangeScope } from './scope.js';
import { acceptSubjectToken } from './subject.js';
import { objectsNamed, resolveAudience } from './targets.js';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

const invalidRequest = (description: string) => new OAuthError('invalid_request', description);

/** Checks the token-type parameters (RFC 8693 §2.1) before any token is looked up. */
function checkTokenTypes(params: Record<string, string>): void {
  if (params.subject_token === undefined) throw invalidRequest('subject_token is required');
  if (params.subject_token_type === undefined) throw invalidRequest('subject_token_type is required');
  // The spec's only subject type; a JWT access token is still an access token.
  if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
    throw invalidRequest(`subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
  }
  if ((params.actor_token === undefined) !== (params.actor_token_type === undefined)) {
    throw invalidRequest('actor_token and actor_token_type go together');
  }
  if (params.actor_token_type !== undefined && params.actor_token_type !== ID_TOKEN_TYPE) {
    throw invalidRequest(`actor_token_type must be ${ID_TOKEN_TYPE}`);
  }
  if (params.requested_token_type !== undefined && params.requested_token_type !== ACCESS_TOKEN_TYPE) {
    throw invalidRequest(`requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
  }
}

/**
 * Claims the new token carries over or gains: the subject token's service subject (so a token for
 * an enterprise stays one), and `act` (RFC 8693 §4.1): the new actor, with any earlier actor
 * chain nested under it, or the earlier chain alone. Dropping `act` would turn a delegated token
 * into one that looks like the user's own.
 */
export function exchangedClaims(subject: StoredToken, actorSub: string | undefined): JsonObject {
  const claims: JsonObject = {};
  for (const name of ['service_subject_type', 'service_subject_id']) {
    const value = subject.data[name];
    if (value !== undefined) claims[name] = value;
  }
  const prior = isJsonObject(subject.data.act) ? subject.data.act : undefined;
  if (actorSub !== undefined) claims.act = prior ? { sub: actorSub, act: prior } : { sub: actorSub };
  else if (prior) claims.act = prior;
  return claims;
}

/**
 * The token-exchange grant (RFC 8693) for down-scoped and annotator tokens. Order: parameters and
 * token types, targets, the subject token, the actor token, the objects, scope; then issue.
 * Nothing is written before every check passed.
 */
export function tokenExchangeGrant(clock: Clock): GrantHandler {
  return {
    grantType: TOKEN_EXCHANGE,
    parameters: [
      'subject_token',
      'subject_token_type',
      'actor_token',
      'actor_token_type',
      'resource',
      'audience',
      'scope',
      'requested_token_type',
    ],
    introspectionClaims: restrictionClaims,
    async handle(ctx: GrantContext): Promise<TokenResponse> {
      const { client, params, oauth } = ctx;
      checkTokenTypes(params);
      const audience = resolveAudience(client, params);
      const named = objectsNamed(client, audience ?? []);
      const subject = await acceptSubjectToken(oauth, clock, client, params.subject_token!);
      const actorSub =
        params.actor_token === undefined ? undefined : await acceptActorToken(oauth, client, params.actor_token);
      const objects = restrictedObjects(named, subject.token);
      const scope = resolveExchangeScope(oauth, params.scope, subject.token.scope, objects.length > 0);
      const restrictedTo = restrictionFor(objects, scope);
      const claims = exchangedClaims(subject.token, actorSub);
      // Kept with the token, so introspection, a JWT and a later exchange from it all see it.
      if (restrictedTo.length) claims.restricted_to = restrictedTo;
      const response = await oauth.issue({
        client,
        // The new token may not outlive the one it came from.
        accessTokenTtl: subject.remainingSeconds,
        withoutIdToken: true,
        subject: subject.token.subject,
        scope,
        grantType: TOKEN_EXCHANGE,
        // Joining the subject's grant: revoking that grant (logout, refresh reuse, new password)
        // ends the exchanged token too.
        ...(subject.grant ? { grantId: subject.grant.id } : {}),
        // And derived from the subject token itself: revoking it ends this one (a stand-alone
        // subject token has no grant to join).
        derivedFrom: subject.token.key,
        refreshToken: false,
        ...(audience ? { audience } : {}),
        claims,
      });
      return restrictedTo.length ? { ...response, restricted_to: restrictedTo } : response;
    },
  };
}
