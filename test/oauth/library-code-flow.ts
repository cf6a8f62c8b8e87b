/**
 * The authorization code flow's front channel as an off-the-shelf client library (oauth4webapi)
 * runs it: PKCE, state and nonce made by the library, the hosted login in a test browser, the
 * callback validated by the library (iss per RFC 9207, state; throws on an error response).
 */
import * as oauth from 'oauth4webapi';
import { Browser, authorize, locationOf, type OAuthServer, type TestUser } from './support.js';

export async function libraryCodeFlow(
  server: OAuthServer,
  as: oauth.AuthorizationServer,
  user: TestUser,
  client: oauth.Client,
  redirectUri: string,
  scope: string,
): Promise<{ params: URLSearchParams; verifier: string; nonce: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const challenge = await oauth.calculatePKCECodeChallenge(verifier);
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope,
    state,
    nonce,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  const res = await authorize(new Browser(server), server, Object.fromEntries(url.searchParams), user);
  const params = oauth.validateAuthResponse(as, client, locationOf(res, server), state);
  return { params, verifier, nonce };
}
