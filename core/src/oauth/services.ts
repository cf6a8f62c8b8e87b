import type { Logger } from 'pino';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { JsonObject, RequestFacts } from '../plugins/extensions.js';
import type { Clock } from '../services.js';
import type { KeyStore } from './keys.js';
import { SIGNING_ALGS } from './jws.js';
import type { VerificationService } from '../verification/service.js';
import type { AssertionReplayStore } from './assertions.js';
import { OAuthError } from './errors.js';
import type { TokenService } from './tokens.js';
import { boundKey, type OAuthServices, type StoredToken } from './types.js';

/** Scope strings: space-separated printable ASCII without `"` or `\` (RFC 6749 §3.3). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** A bound refresh token refreshes only with a proof of its key (RFC 9449 §5). */
function refusedWithoutItsKey(token: StoredToken, proofKey: string | null): void {
  if (boundKey(token) && boundKey(token) !== proofKey)
    throw new OAuthError('invalid_grant', 'the refresh token is bound to another key (DPoP)');
}

export function resolveScope(requested: string | undefined, allowed: string[], fallback: string[]): string[] {
  if (requested === undefined) return [...new Set(fallback)];
  const parts = requested.split(' ').filter(Boolean);
  if (parts.length === 0 || parts.some((p) => !SCOPE_TOKEN.test(p)))
    throw new OAuthError('invalid_scope', 'malformed scope');
  const excess = parts.filter((p) => !allowed.includes(p));
  if (excess.length) throw new OAuthError('invalid_scope', `scope not allowed: ${excess.join(' ')}`);
  return [...new Set(parts)];
}

/** The OAuthServices a grant handler receives for one request. */
export function oauthServices(deps: {
  issuer: string;
  tokenEndpoint: string;
  assertionAudiences: string[];
  tokens: TokenService;
  replay: AssertionReplayStore;
  verification: VerificationService;
  users: OAuthServices['users'];
  keys: KeyStore;
  clock: Clock;
  request: RequestFacts;
  logger: Logger;
  /** The key the request's proof showed (DPoP): the tokens are bound to it. */
  proofKey?: string | null;
}): OAuthServices {
  const { tokens } = deps;
  const proofKey = deps.proofKey ?? null;
  return {
    issuer: deps.issuer,
    tokenEndpoint: deps.tokenEndpoint,
    assertionAudiences: deps.assertionAudiences,
    proofKey,
    issue: (input) => tokens.issue(input, proofKey),
    inspect: (token) => tokens.inspect(token),
    codes: { find: (code) => tokens.findCode(code), consume: (code) => tokens.consumeCode(code) },
    refreshTokens: {
      async rotate(token) {
        refusedWithoutItsKey(token, proofKey);
        return tokens.rotateRefresh(token);
      },
      async rotateAndIssue(token, input) {
        refusedWithoutItsKey(token, proofKey);
        return tokens.issue(input, proofKey, token);
      },
    },
    grants: { get: (id) => tokens.getGrant(id), revoke: (id, reason) => tokens.revokeGrant(id, reason) },
    resolveScope,
    async authenticateUser(input) {
      const result = await deps.verification.authenticateDirect({
        ...input,
        request: deps.request,
        logger: deps.logger,
      });
      return result.ok ? { ok: true, userId: result.user.id, amr: result.amr } : result;
    },
    useAssertionId: (namespace, id, expiresAt) => deps.replay.use(namespace, id, expiresAt),
    users: deps.users,
    async verifyOwnJwt(token, opts = {}) {
      try {
        const { payload } = await jwtVerify(token, createLocalJWKSet(await deps.keys.jwks()), {
          issuer: deps.issuer,
          algorithms: [...SIGNING_ALGS],
          currentDate: deps.clock.now(),
          // ID tokens are typ JWT, access tokens at+jwt: the caller says which it accepts.
          ...(opts.typ ? { typ: opts.typ } : {}),
        });
        return payload as JsonObject;
      } catch {
        return null;
      }
    },
  };
}
