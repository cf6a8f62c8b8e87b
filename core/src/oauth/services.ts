import {
  boundToAnother,
  type Clock,
  type Confirmation,
  type JsonObject,
  type OAuthServices,
  type RequestFacts,
  SIGNING_ALGS,
  type StoredToken,
  unprovenBinding,
} from '@gatehouse-auth/plugin-api';
import type { Logger } from 'pino';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { KeyStore } from './keys.js';
import type { VerificationService } from '../verification/service.js';
import type { AssertionReplayStore } from './assertions.js';
import { OAuthError } from './errors.js';
import type { TokenService } from './tokens.js';

/** Scope strings: space-separated printable ASCII without `"` or `\` (RFC 6749 §3.3). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** A bound refresh token refreshes only with proof of what it is bound to (RFC 9449 §5, RFC 8705 §3). */
function refusedWithoutItsKey(token: StoredToken, proven: Confirmation | null): void {
  const unproven = unprovenBinding(token, proven);
  if (unproven) throw new OAuthError('invalid_grant', boundToAnother(unproven));
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
  /** What the request proved (a DPoP key, a client certificate): the tokens are bound to it. */
  confirmation?: Confirmation | null;
}): OAuthServices {
  const { tokens } = deps;
  const confirmation = deps.confirmation ?? null;
  return {
    issuer: deps.issuer,
    tokenEndpoint: deps.tokenEndpoint,
    assertionAudiences: deps.assertionAudiences,
    proofKey: confirmation?.jkt ?? null,
    confirmation,
    issue: (input) => tokens.issue(input, confirmation),
    inspect: (token) => tokens.inspect(token),
    codes: { find: (code) => tokens.findCode(code), consume: (code) => tokens.consumeCode(code) },
    refreshTokens: {
      async rotate(token) {
        refusedWithoutItsKey(token, confirmation);
        return tokens.rotateRefresh(token);
      },
      async rotateAndIssue(token, input) {
        refusedWithoutItsKey(token, confirmation);
        return tokens.issue(input, confirmation, token);
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
