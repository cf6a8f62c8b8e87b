import type { Clock, UserRecord } from '@gatehouse-auth/plugin-api';
import type { RequestHandler, Response } from 'express';
import { bearerOf, type AdminGuard } from '../http/admin-guard.js';
import type { TokenService } from '../oauth/tokens.js';
import type { UserService } from '../users/users.js';
import { clientIp, requestFacts } from './context.js';
import type { SetupOffers } from './setup-offers.js';
import { verificationError } from './errors.js';

/** Who a bearer token belongs to and when they last authenticated (for enrollment). */
export type BearerResolver = (
  token: string,
) => Promise<{ userId: string; clientId: string; authTime: number | null; scope: string[]; amr: string[] } | null>;

/** The scope a user's access token needs to manage its own sign-in methods (first-party apps). */
export const MANAGE_METHODS_SCOPE = 'gatehouse.methods';

/** How recent the user's authentication must be to change methods with their own token (ASVS 5 7.5.1). */
const MAX_AUTH_AGE_SECONDS = 900;

/** Who a user's access token belongs to and when they last authenticated. */
function bearerResolver(tokens: TokenService): BearerResolver {
  return async (token) => {
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
  };
}

/**
 * Who may use the setup API (methods and devices): the admin credential with the user named in
 * `sub`, or the user's own access token from a recent login with the `gatehouse.methods` scope
 * (and their second factor, when they have one: a password alone must not change the others).
 */
export function setupAccess(deps: {
  adminGuard: AdminGuard;
  tokens: TokenService;
  users: UserService;
  setupOffers: Pick<SetupOffers, 'hasSecondFactor'>;
  clock: Clock;
}): { requireSetupAccess: RequestHandler; userOf(sub: unknown, res: Response): Promise<UserRecord> } {
  const { adminGuard, users, setupOffers } = deps;
  const resolveBearer = bearerResolver(deps.tokens);

  const requireSetupAccess: RequestHandler = async (req, res, next) => {
    const bearer = bearerOf(req);
    if (!bearer) return adminGuard.require(req, res, next);
    // Any bearer may be a guess at the admin token: a blocked address is refused before it is
    // compared, and one that is neither the admin token nor a live access token counts.
    const ip = clientIp(req);
    adminGuard.refuseIfBlocked(ip);
    if (adminGuard.matches(bearer)) return next();
    const owner = await resolveBearer(bearer);
    if (!owner) {
      await adminGuard.failed(req, ip, 'invalid bearer token');
      return next(verificationError('UNAUTHORIZED', 'the bearer token is not valid'));
    }
    if (!owner.scope.includes(MANAGE_METHODS_SCOPE)) {
      return next(verificationError('INSUFFICIENT_SCOPE', `the token needs the ${MANAGE_METHODS_SCOPE} scope`));
    }
    if (owner.authTime === null || deps.clock.now().getTime() / 1000 - owner.authTime > MAX_AUTH_AGE_SECONDS) {
      return next(verificationError('REAUTHENTICATION_REQUIRED'));
    }
    const user = await users.findById(owner.userId);
    if (
      user &&
      owner.amr.every((v) => v === 'pwd') &&
      (await setupOffers.hasSecondFactor(user, requestFacts(req), req.log))
    ) {
      return next(
        verificationError('REAUTHENTICATION_REQUIRED', 'sign in with your second factor to change sign-in methods'),
      );
    }
    res.locals.tokenUser = owner.userId;
    res.locals.tokenClient = owner.clientId;
    next();
  };

  const userOf = async (sub: unknown, res: Response): Promise<UserRecord> => {
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
  };

  return { requireSetupAccess, userOf };
}
