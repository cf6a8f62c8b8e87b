import { OAuthError, type JsonValue, type OAuthClient, type OAuthServices } from '@gatehouse-auth/core';

const invalidActor = () => new OAuthError('invalid_request', 'the actor_token is invalid');

const includesClient = (aud: JsonValue | undefined, clientId: string): boolean =>
  aud === clientId || (Array.isArray(aud) && aud.includes(clientId));

/**
 * The actor of an annotator token: an ID token this server signed (signature, issuer and expiry
 * checked by verifyOwnJwt) for this client (`aud`), of a user who is still active. A JWT access
 * token also verifies, so one is told apart by its RFC 9068 claims (`client_id`, `scope`).
 * Returns the actor's `sub`.
 */
export async function acceptActorToken(oauth: OAuthServices, client: OAuthClient, value: string): Promise<string> {
  const claims = await oauth.verifyOwnJwt(value, { typ: 'JWT' });
  if (!claims || 'client_id' in claims || 'scope' in claims) throw invalidActor();
  const sub = claims.sub;
  if (typeof sub !== 'string' || sub === '' || !includesClient(claims.aud, client.clientId)) throw invalidActor();
  const user = await oauth.users.findById(sub);
  if (!user || user.status !== 'active') throw invalidActor();
  return sub;
}
