import { OAuthError, type AuthorizationCode, type OAuthClient, type Services } from '@gatehouse-auth/core';

/** RFC 7636 §4.1: 43–128 characters from the unreserved set. */
const VERIFIER_FORMAT = /^[A-Za-z0-9\-._~]{43,128}$/;

/**
 * Checks the `code_verifier` against the code's challenge (RFC 7636 §4.6). Only S256 is accepted.
 * A verifier without an earlier challenge is a downgrade and refused; a public client's code must
 * carry a challenge.
 */
export function checkPkce(
  code: AuthorizationCode,
  client: OAuthClient,
  verifier: string | undefined,
  crypto: Services['crypto'],
): void {
  if (!code.codeChallenge) {
    if (verifier !== undefined) {
      throw new OAuthError('invalid_grant', 'code_verifier sent but the authorization request had no code_challenge');
    }
    if (client.isPublic) throw new OAuthError('invalid_grant', 'PKCE is required for public clients');
    return;
  }
  if (verifier === undefined) throw new OAuthError('invalid_grant', 'code_verifier is required');
  if (!VERIFIER_FORMAT.test(verifier)) {
    throw new OAuthError('invalid_grant', 'code_verifier must be 43 to 128 unreserved characters');
  }
  if (code.codeChallengeMethod !== 'S256') throw new OAuthError('invalid_grant', 'unsupported code_challenge_method');
  // BASE64URL(SHA256(ASCII(verifier))); the verifier is ASCII, so UTF-8 hashing is the same.
  if (!crypto.safeEqual(crypto.sha256(verifier), code.codeChallenge)) {
    throw new OAuthError('invalid_grant', 'PKCE verification failed');
  }
}
