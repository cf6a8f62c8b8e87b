import {
  boundToAnother,
  type Clock,
  type Confirmation,
  type IssueInput,
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

/** What every token request's OAuthServices share: the server's, not the request's. */
export interface OAuthServicesDeps {
  issuer: string;
  tokenEndpoint: string;
  assertionAudiences: string[];
  tokens: TokenService;
  replay: AssertionReplayStore;
  verification: VerificationService;
  users: OAuthServices['users'];
  keys: KeyStore;
  clock: Clock;
}

type SharedServices = Omit<OAuthServices, 'proofKey' | 'confirmation' | 'issue' | 'refreshTokens' | 'authenticateUser'>;

/**
 * The OAuthServices a grant handler receives, made per request: the members that do not depend on
 * the request are built once and inherited (a grant may still destructure them), so a request
 * allocates only what names its proof, its address and its logger.
 */
export function oauthServicesFactory(deps: OAuthServicesDeps) {
  const { tokens } = deps;
  const shared: SharedServices = {
    issuer: deps.issuer,
    tokenEndpoint: deps.tokenEndpoint,
    assertionAudiences: deps.assertionAudiences,
    inspect: (token) => tokens.inspect(token),
    codes: { find: (code) => tokens.findCode(code), consume: (code) => tokens.consumeCode(code) },
    grants: { get: (id) => tokens.getGrant(id), revoke: (id, reason) => tokens.revokeGrant(id, reason) },
    resolveScope,
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
  /** An unbound request's members (no DPoP key, no certificate): the same for all, inherited too. */
  const unbound: SharedServices = Object.assign(Object.create(shared) as SharedServices, boundTo(tokens, null));
  return (request: RequestFacts, logger: Logger, confirmation: Confirmation | null = null): OAuthServices => {
    const base = confirmation
      ? Object.assign(Object.create(shared) as SharedServices, boundTo(tokens, confirmation))
      : unbound;
    const services = Object.create(base) as OAuthServices;
    services.authenticateUser = async (input) => {
      const result = await deps.verification.authenticateDirect({ ...input, request, logger });
      return result.ok ? { ok: true, userId: result.user.id, amr: result.amr } : result;
    };
    return services;
  };
}

/** The members that issue tokens, bound to what the request proved (or to nothing). */
function boundTo(tokens: TokenService, confirmation: Confirmation | null) {
  return {
    proofKey: confirmation?.jkt ?? null,
    confirmation,
    issue: (input: IssueInput) => tokens.issue(input, confirmation),
    refreshTokens: {
      async rotate(token: StoredToken) {
        refusedWithoutItsKey(token, confirmation);
        return tokens.rotateRefresh(token);
      },
      async rotateAndIssue(token: StoredToken, input: IssueInput) {
        refusedWithoutItsKey(token, confirmation);
        return tokens.issue(input, confirmation, token);
      },
    },
  };
}
