import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { OAuthError, type OAuthClient, type RecordStore, type Services, type WebApi } from '@gatehouse-auth/core';

/** What a request object may be signed with: asymmetric only (the core keeps no client secret in clear). */
export const REQUEST_OBJECT_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'EdDSA'];

/** RFC 9101 §10.8's explicit type, and the untyped JWTs most libraries still send. */
const ACCEPTED_TYPES = [undefined, 'JWT', 'oauth-authz-req+jwt'];

/** JWT claims that describe the object itself, not the authorization request (RFC 9101 §4). */
const ENVELOPE_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'jti', 'sub']);

export interface VerifierOptions {
  algorithms: string[];
  /** The longest an object may live from now (its `exp`), in seconds. */
  maxLifetime: number;
  /** A `jti` once seen is refused until the object expires. */
  oneTimeJti: boolean;
}

const refuse = (description: string) => new OAuthError('invalid_request_object', description);

/**
 * Verifies a request object of `client` (RFC 9101 §6): a JWS (a JWE is refused: this server
 * holds no key to decrypt it) signed by one of the app's keys with an allowed algorithm, issued
 * by the app for this issuer, with an `exp` no further ahead than `maxLifetime`. Answers its
 * claims as authorization parameters (objects such as `claims` as JSON, numbers as text).
 */
export function requestObjectVerifier(
  web: Pick<WebApi, 'issuer' | 'clientKeys'>,
  records: Pick<RecordStore, 'add'>,
  services: Pick<Services, 'clock' | 'crypto'>,
  options: VerifierOptions,
) {
  return async ({ client, request }: { client: OAuthClient; request: string }): Promise<Record<string, string>> => {
    const parts = request.split('.').length;
    if (parts === 5) throw refuse('encrypted request objects are not supported; sign it (JWS) instead');
    if (parts !== 3) throw refuse('the request object is not a JWT');
    let alg: unknown;
    let typ: unknown;
    try {
      ({ alg, typ } = decodeProtectedHeader(request));
    } catch {
      throw refuse('the request object is not a JWT');
    }
    // Unsigned request objects (alg none) stay refused: anyone could have written one.
    if (alg === 'none') throw refuse('unsigned request objects (alg none) are refused');
    if (typeof alg !== 'string' || !options.algorithms.includes(alg)) {
      throw refuse(`the request object's alg must be one of ${options.algorithms.join(', ')}`);
    }
    if (!ACCEPTED_TYPES.includes(typ as string | undefined)) {
      throw refuse('the request object must be typed oauth-authz-req+jwt (or JWT)');
    }
    const keys = web.clientKeys(client);
    if (!keys) throw refuse('the app has no keys (jwks or jwks_uri) to verify its request objects with');
    const now = services.clock.now();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(request, keys, {
        issuer: client.clientId,
        // The issuer as published or without its trailing slash (`web.issuer` never has one),
        // as the core's own client assertions are read.
        audience: [web.issuer, `${web.issuer}/`],
        algorithms: options.algorithms,
        requiredClaims: ['exp'],
        clockTolerance: 30,
        currentDate: now,
      }));
    } catch (err) {
      throw refuse(`the request object was rejected: ${err instanceof joseErrors.JOSEError ? err.message : 'invalid'}`);
    }
    const lifetime = payload.exp! - Math.floor(now.getTime() / 1000);
    if (lifetime > options.maxLifetime)
      throw refuse(`the request object expires more than ${options.maxLifetime} s ahead`);
    if (options.oneTimeJti && typeof payload.jti === 'string') {
      const key = `jti:${services.crypto.sha256(`${client.clientId}\n${payload.jti}`)}`;
      // `add` lets one of racing requests win, on every node: a replayed object is refused.
      if (!(await records.add(key, {}, { ttlSeconds: Math.max(lifetime, 0) + 60 }))) {
        throw refuse('the request object was already used (jti)');
      }
    }
    return parametersOf(payload, client);
  };
}

/** The authorization parameters a verified object carries. */
function parametersOf(payload: JWTPayload, client: OAuthClient): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(payload)) {
    if (ENVELOPE_CLAIMS.has(name) || value === null || value === undefined) continue;
    params[name] =
      typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  // RFC 9101 §5: the query's client_id is the app's; one the object names must be the same (the core checks).
  params.client_id ??= client.clientId;
  return params;
}
