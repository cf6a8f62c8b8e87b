import { OAuthError, z, type OAuthClient } from '@gatehouse-auth/core';
import {
  createLocalJWKSet,
  decodeJwt,
  errors as joseErrors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
} from 'jose';

/** Signature algorithms an assertion may use: asymmetric only, never `none` or HMAC (RFC 7523 §3 item 9). */
export const ASSERTION_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

/** Allowed clock skew between the assertion's issuer and this server, in seconds. */
export const CLOCK_TOLERANCE_SECONDS = 30;

/** Longest an assertion may still be valid when presented (`exp` − now), in seconds. */
export const MAX_ASSERTION_LIFETIME_SECONDS = 3600;

/** What a verified assertion says. */
export interface VerifiedAssertion {
  issuer: string;
  /** `sub`: the user the client acts for (an id or an identifier). */
  subject: string;
  jti: string;
  /** When the assertion stops passing the `exp` check here (exp + clock tolerance). */
  usableUntil: Date;
}

/** `apps[i].assertion_issuers`: the JWT issuers an app trusts, each with its public keys (a key this plugin adds to apps). */
export const assertionIssuersConfig = z
  .array(
    z.strictObject({
      issuer: z.string().min(1),
      jwks: z.strictObject({
        keys: z
          .array(z.looseObject({ kty: z.string(), kid: z.string().optional(), alg: z.string().optional() }))
          .min(1),
      }),
    }),
  )
  .default([]);

export type AssertionIssuer = { issuer: string; jwks: JSONWebKeySet };

/** The client's trusted assertion issuers (none when its app names none). */
export function assertionIssuersOf(client: OAuthClient): AssertionIssuer[] {
  return (client.settings.assertion_issuers as AssertionIssuer[] | undefined) ?? [];
}

export interface AssertionCheck {
  /** The issuers the authenticated client trusts. */
  issuers: AssertionIssuer[];
  /** Acceptable `aud` values: the issuer and the token endpoint URLs. */
  audiences: string[];
  now: Date;
}

const invalidGrant = (why: string) => new OAuthError('invalid_grant', why);

// Key sets are per config entry; caching them keeps jose's imported keys across requests.
const keySets = new WeakMap<JSONWebKeySet, ReturnType<typeof createLocalJWKSet>>();

function keySetOf(jwks: JSONWebKeySet): ReturnType<typeof createLocalJWKSet> {
  let keySet = keySets.get(jwks);
  if (!keySet) {
    keySet = createLocalJWKSet(jwks);
    keySets.set(jwks, keySet);
  }
  return keySet;
}

/** A client-facing reason for a jose failure; the assertion itself is never echoed. */
function describeFailure(err: joseErrors.JOSEError): string {
  if (err instanceof joseErrors.JWTExpired) return 'assertion has expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.reason === 'missing') return `assertion lacks the ${err.claim} claim`;
    if (err.claim === 'aud') return 'assertion audience does not name this server';
    if (err.claim === 'nbf') return 'assertion is not yet valid';
    return `assertion ${err.claim} claim is invalid`;
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'assertion signature algorithm is not allowed';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed || err instanceof joseErrors.JWKSNoMatchingKey) {
    return 'assertion signature is invalid';
  }
  return 'assertion is invalid';
}

const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/**
 * Verifies a JWT bearer assertion (RFC 7523 §3): a trusted `iss`, a signature by that issuer's
 * keys with an asymmetric algorithm, `aud` naming this server, `exp` in the future but at most an
 * hour ahead, `nbf`/`iat` not in the future, and `sub` and `jti` present. Every failure is
 * invalid_grant. Single use of `jti` is left to the caller.
 */
export async function verifyAssertion(assertion: string, check: AssertionCheck): Promise<VerifiedAssertion> {
  let unverified: JWTPayload;
  try {
    unverified = decodeJwt(assertion);
  } catch {
    throw invalidGrant('assertion is not a JWT');
  }
  const trusted = check.issuers.find((entry) => entry.issuer === unverified.iss);
  if (!trusted) throw invalidGrant('assertion issuer is not trusted by this client');

  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(assertion, keySetOf(trusted.jwks), {
      algorithms: ASSERTION_ALGORITHMS,
      issuer: trusted.issuer,
      audience: check.audiences,
      requiredClaims: ['exp', 'sub', 'jti'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: check.now,
    }));
  } catch (err) {
    if (err instanceof joseErrors.JOSEError) throw invalidGrant(describeFailure(err));
    throw err;
  }

  const nowSeconds = check.now.getTime() / 1000;
  // jose checks iat only together with maxTokenAge; a future iat is refused here.
  if (payload.iat !== undefined && payload.iat > nowSeconds + CLOCK_TOLERANCE_SECONDS) {
    throw invalidGrant('assertion was issued in the future');
  }
  const exp = payload.exp!;
  if (exp - nowSeconds > MAX_ASSERTION_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS) {
    throw invalidGrant('assertion expires more than an hour ahead');
  }
  if (!nonEmptyString(payload.sub)) throw invalidGrant('assertion sub claim is invalid');
  if (!nonEmptyString(payload.jti)) throw invalidGrant('assertion jti claim is invalid');
  return {
    issuer: trusted.issuer,
    subject: payload.sub,
    jti: payload.jti,
    usableUntil: new Date((exp + CLOCK_TOLERANCE_SECONDS) * 1000),
  };
}
