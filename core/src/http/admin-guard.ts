import type { Clock, EventLog, History } from '@gatehouse-auth/plugin-api';
import type { Request, RequestHandler } from 'express';
import { ApiError } from '../errors.js';
import { FAILURE_WINDOW_MS, MAX_FAILURES, type ClientBlocks } from '../oauth/client-auth.js';
import { safeEqual, sha256 } from '../util/crypto.js';
import { clientIp } from '../verification/context.js';

/** The event of a bearer refused where the admin token is accepted. */
export const ADMIN_AUTH_FAILURE = 'admin_auth.failure';

/** The token of `Authorization: Bearer <token>`, or '' for none. */
export function bearerOf(req: Request): string {
  const header = req.headers.authorization ?? '';
  return header.startsWith('Bearer ') ? header.slice(7).trim() : '';
}

/**
 * The admin token (`admin.token`), throttled per client address as client authentication is:
 * after 20 wrong tokens from one address within 5 minutes, that address gets 429
 * TOO_MANY_ATTEMPTS with any token, the right one too, until the block ends; answering the right
 * one would tell a blocked guesser which guess was right. Each wrong token is an event (never
 * the token); the count is read from the events only when one fails, and a block reaches every
 * node on the peer bus (decision 30). A request without a token guesses nothing: plain 401.
 */
export class AdminGuard {
  constructor(
    private readonly deps: {
      token: string | undefined;
      events: EventLog;
      history: History;
      clock: Clock;
      /** Shared with client authentication: one map, one peer-bus message kind. */
      blocks: ClientBlocks;
    },
  ) {}

  /** Express middleware for the routes only the admin token opens. */
  readonly require: RequestHandler = async (req, _res, next) => {
    await this.check(req);
    next();
  };

  /** The check of `require` (a plugin's `web.requireAdmin`): throws 403, 401 or 429 as an ApiError. */
  async check(req: Request): Promise<void> {
    if (!this.deps.token)
      throw new ApiError(403, 'ADMIN_API_DISABLED', 'the admin API is disabled (admin.token is not set)');
    const presented = bearerOf(req);
    if (!presented) throw unauthorized();
    const ip = clientIp(req);
    this.refuseIfBlocked(ip);
    if (!this.matches(presented)) {
      await this.failed(req, ip, 'wrong admin token');
      throw unauthorized();
    }
  }

  /** Constant-time comparison with the admin token; false when none is configured. */
  matches(presented: string): boolean {
    const { token } = this.deps;
    return token !== undefined && safeEqual(presented, token);
  }

  /** 429 for an address blocked after too many wrong tokens (nothing to guard without a token). */
  refuseIfBlocked(ip: string): void {
    if (!this.deps.token || this.deps.blocks.empty) return;
    const now = this.deps.clock.now().getTime();
    const until = this.deps.blocks.until(blockKey(ip), now);
    if (until === null) return;
    const err = new ApiError(429, 'TOO_MANY_ATTEMPTS', 'too many wrong admin tokens from this address; retry later');
    err.headers = () => ({ 'Retry-After': String(Math.ceil((until - now) / 1000)) });
    throw err;
  }

  /** Records a refused bearer from `ip` and blocks the address at the limit. */
  async failed(req: Request, ip: string, reason: string): Promise<void> {
    if (!this.deps.token) return;
    const key = blockKey(ip);
    await this.deps.events.record({
      type: ADMIN_AUTH_FAILURE,
      key,
      ip,
      reason,
      data: { method: req.method, path: req.originalUrl.split('?')[0]!.slice(0, 255) },
    });
    const now = this.deps.clock.now().getTime();
    const failures = await this.deps.history.count({
      types: [ADMIN_AUTH_FAILURE],
      key,
      since: new Date(now - FAILURE_WINDOW_MS),
      limit: MAX_FAILURES,
    });
    if (failures >= MAX_FAILURES) await this.deps.blocks.block(key, now + FAILURE_WINDOW_MS, now);
  }
}

const unauthorized = () => new ApiError(401, 'UNAUTHORIZED', 'a valid admin bearer token is required');

/** The address's key, in the events and the blocks: hashed, and unlike a client's (a bare hash). */
function blockKey(ip: string): string {
  return `admin:${sha256(ip)}`;
}
