import type { Clock, UserRecord } from '@gatehouse-auth/plugin-api';
import type { Request, Response } from 'express';
import { bearerOf, type AdminGuard } from '../http/admin-guard.js';
import type { TokenService } from '../oauth/tokens.js';
import type { UserService } from '../users/users.js';
import { clientIp, requestFacts } from './context.js';
import type { SetupOffers } from './setup-offers.js';
import { verificationError } from './errors.js';

/** What the caller check reads (the container's cradle, at each request). */
export interface SetupAccessDeps {
  adminGuard: AdminGuard;
  tokens: TokenService;
  users: UserService;
  setupOffers: Pick<SetupOffers, 'hasSecondFactor'>;
  clock: Clock;
}

/** The scope a user's access token needs to manage its own sign-in methods (first-party apps). */
const MANAGE_METHODS_SCOPE = 'gatehouse.methods';

/** How recent the user's authentication must be to change methods with their own token (ASVS 5 7.5.1). */
const MAX_AUTH_AGE_SECONDS = 900;

/** Who a user's access token belongs to and when they last authenticated (for enrollment). */
async function tokenOwner(tokens: TokenService, token: string) {
  const info = await tokens.inspect(token);
  if (!info.active || info.token?.kind !== 'access' || !info.token.subject) return null;
  const authTime = info.token.data.auth_time ?? info.grant?.data.auth_time;
  const amr = info.token.data.amr ?? info.grant?.data.amr;
  return {
    userId: info.token.subject,
    clientId: info.token.clientId,
    authTime: typeof authTime === 'number' ? authTime : null,
    scope: info.token.scope,
    amr: Array.isArray(amr) ? amr.filter((v): v is string => typeof v === 'string') : [],
  };
}

/**
 * Who may use the setup API (methods and devices): the admin credential with the user named in
 * `sub`, or the user's own access token from a recent login with the `gatehouse.methods` scope
 * (and their second factor, when they have one: a password alone must not change the others).
 * Throws the refusal; a user's own token leaves its user and app in `res.locals` for `setupUser`.
 */
export async function checkSetupCaller(deps: SetupAccessDeps, req: Request, res: Response): Promise<void> {
  const { adminGuard } = deps;
  const bearer = bearerOf(req);
  if (!bearer) return adminGuard.check(req);
  // Any bearer may be a guess at the admin token: a blocked address is refused before it is
  // compared, and one that is neither the admin token nor a live access token counts.
  const ip = clientIp(req);
  adminGuard.refuseIfBlocked(ip);
  if (adminGuard.matches(bearer)) return;
  const owner = await tokenOwner(deps.tokens, bearer);
  if (!owner) {
    await adminGuard.failed(req, ip, 'invalid bearer token');
    throw verificationError('UNAUTHORIZED', 'the bearer token is not valid');
  }
  if (!owner.scope.includes(MANAGE_METHODS_SCOPE)) {
    throw verificationError('INSUFFICIENT_SCOPE', `the token needs the ${MANAGE_METHODS_SCOPE} scope`);
  }
  if (owner.authTime === null || deps.clock.now().getTime() / 1000 - owner.authTime > MAX_AUTH_AGE_SECONDS) {
    throw verificationError('REAUTHENTICATION_REQUIRED');
  }
  const user = await deps.users.findById(owner.userId);
  if (
    user &&
    owner.amr.every((v) => v === 'pwd') &&
    (await deps.setupOffers.hasSecondFactor(user, requestFacts(req), req.log))
  ) {
    throw verificationError('REAUTHENTICATION_REQUIRED', 'sign in with your second factor to change sign-in methods');
  }
  res.locals.tokenUser = owner.userId;
  res.locals.tokenClient = owner.clientId;
}

/** The user a checked caller acts for: the token's own, or the one the admin names in `sub`. */
export async function setupUser(users: UserService, sub: unknown, res: Response): Promise<UserRecord> {
  const tokenUser = res.locals.tokenUser as string | undefined;
  if (tokenUser) {
    // A user's own token acts only for that user.
    if (sub !== undefined && sub !== tokenUser)
      throw verificationError('UNAUTHORIZED', 'the token belongs to another user');
    const user = await users.findById(tokenUser);
    if (!user) throw verificationError('USER_NOT_FOUND');
    return user;
  }
  if (typeof sub !== 'string' || !sub) throw verificationError('FIELD_MISSING', 'missing: sub', { fields: ['sub'] });
  const user = (await users.findById(sub)) ?? (await users.findByIdentifier(sub));
  if (!user) throw verificationError('USER_NOT_FOUND');
  return user;
}
