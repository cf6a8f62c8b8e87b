import {
  unprovenBinding,
  OAuthError,
  type Clock,
  type GrantRecord,
  type JsonValue,
  type OAuthClient,
  type OAuthServices,
  type StoredToken,
} from '@gatehouse-auth/core';

/** An active access token this client may exchange, with what the new token inherits. */
export interface SubjectToken {
  token: StoredToken;
  /** Present when the token belongs to a grant row; the new token joins it. */
  grant?: GrantRecord;
  /** Whole seconds the subject token has left: the new token may not outlive it. */
  remainingSeconds: number;
}

// One description for every failure: like introspection, it does not tell a foreign token from
// an unknown one. RFC 8693 §2.2.2 says invalid_request for an invalid or unacceptable token.
const invalidSubject = () =>
  new OAuthError('invalid_request', 'the subject_token is invalid, inactive, or not issued to or for this client');

const audienceOf = (value: JsonValue | undefined): string[] =>
  typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v) => typeof v === 'string') : [];

/**
 * Whether this client may exchange the token: it was issued to the client, or it names the client
 * in `aud` (the client is a resource server the token was meant for). A token with no subject
 * (a client acting for itself) only to its own client, since the new token's `sub` would
 * otherwise become the exchanging client.
 */
function isBoundTo(token: StoredToken, client: OAuthClient): boolean {
  if (token.clientId === client.clientId) return true;
  return token.subject !== null && audienceOf(token.data.aud).includes(client.clientId);
}

/** Looks the subject token up and checks it: an active access token of or for this client, of an active user. */
export async function acceptSubjectToken(
  oauth: OAuthServices,
  clock: Clock,
  client: OAuthClient,
  value: string,
): Promise<SubjectToken> {
  const info = await oauth.inspect(value);
  const token = info.token;
  if (!info.active || !token || token.kind !== 'access' || !isBoundTo(token, client)) throw invalidSubject();
  // A bound token (DPoP key, client certificate) is exchanged by its own client only with its
  // proof: a copy of it must not buy an unbound one. A resource server in its `aud` received it as such.
  if (token.clientId === client.clientId && unprovenBinding(token, oauth.confirmation)) throw invalidSubject();
  const remainingSeconds = Math.floor((token.expiresAt.getTime() - clock.now().getTime()) / 1000);
  if (remainingSeconds < 1) throw invalidSubject();
  if (token.subject !== null) {
    const user = await oauth.users.findById(token.subject);
    if (!user || user.status !== 'active') throw invalidSubject();
  }
  return { token, ...(info.grant ? { grant: info.grant } : {}), remainingSeconds };
}
