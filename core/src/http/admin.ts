import express, { type RequestHandler, type Router } from 'express';
import { jsonBody } from './parsers.js';
import { ApiError } from '../errors.js';
import type { EventLog } from '../plugins/extensions.js';
import type { GatehouseConfig } from '../config/schema.js';
import type { LogoutService } from '../oauth/logout.js';
import type { SessionStore } from '../oauth/sessions.js';
import type { UserService } from '../users/users.js';
import type { UserProfiles } from '../users/profile.js';
import { safeEqual } from '../util/crypto.js';
import { ok } from './envelope.js';

/** Admin API guard: `Authorization: Bearer <admin.token>`, compared in constant time. */
export function requireAdmin(token: string | undefined): RequestHandler {
  return (req, _res, next) => {
    const header = req.headers.authorization ?? '';
    const presented = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (!token)
      return next(new ApiError(403, 'ADMIN_API_DISABLED', 'the admin API is disabled (admin.token is not set)'));
    if (!presented || !safeEqual(presented, token)) {
      return next(new ApiError(401, 'UNAUTHORIZED', 'a valid admin bearer token is required'));
    }
    next();
  };
}

/** What the admin API uses (the container's cradle provides it). */
export interface AdminDeps {
  config: GatehouseConfig;
  users: UserService;
  events: EventLog;
  sessions: SessionStore;
  logout: LogoutService;
  profiles: UserProfiles;
}

export function adminRoutes(opts: AdminDeps): Router {
  const router = express.Router();
  router.use('/admin', requireAdmin(opts.config.admin.token), jsonBody('20kb'));
  router.post('/admin/users', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const user = await opts.users.create({
      username: body.username as string,
      email: body.email as string | undefined,
      phone: body.phone as string | undefined,
    });
    ok(res, user, 201);
  });
  router.get('/admin/users', async (req, res) => {
    const limit = Number(req.query.limit ?? 100);
    const offset = Number(req.query.offset ?? 0);
    if (!Number.isInteger(limit) || !Number.isInteger(offset)) {
      throw new ApiError(400, 'INVALID_FIELD', 'limit and offset must be integers');
    }
    ok(res, await opts.users.list({ limit, offset }));
  });
  router.get('/admin/users/:id', async (req, res) => {
    const user = await opts.users.findById(req.params.id);
    if (!user) throw new ApiError(404, 'USER_NOT_FOUND', 'no such user');
    ok(res, user);
  });
  const userOf = async (id: string) => {
    const user = await opts.users.findById(id);
    if (!user) throw new ApiError(404, 'USER_NOT_FOUND', 'no such user');
    return user;
  };
  /** A user's OIDC profile claims; PATCH is a JSON merge patch (null removes a claim). */
  router.get('/admin/users/:id/profile', async (req, res) => {
    ok(res, await opts.profiles.get((await userOf(req.params.id)).id));
  });
  router.patch('/admin/users/:id/profile', async (req, res) => {
    const user = await userOf(req.params.id);
    const profile = await opts.profiles.update(user.id, req.body);
    await opts.events.record({
      type: 'user.profile_updated',
      userId: user.id,
      data: { claims: Object.keys(req.body as object) },
    });
    ok(res, profile);
  });
  /** A user's live browser sessions: when, how, and which apps they reached. */
  router.get('/admin/users/:id/sessions', async (req, res) => {
    const user = await userOf(req.params.id);
    const sessions = await opts.sessions.ofUser(user.id);
    ok(
      res,
      await Promise.all(
        sessions.map(async (s) => ({
          sid: s.sid,
          created_at: s.createdAt.toISOString(),
          expires_at: s.expiresAt.toISOString(),
          auth_time: s.authTime,
          amr: s.amr,
          methods: s.methods.map((m) => ({ method: m.method, at: m.at })),
          clients: await opts.sessions.clientsOf(s.sid),
        })),
      ),
    );
  });
  /** Ends one session: its tokens are revoked and its apps get back-channel logout notices. */
  router.delete('/admin/users/:id/sessions/:sid', async (req, res) => {
    const user = await userOf(req.params.id);
    const mine = (await opts.sessions.ofUser(user.id)).some((s) => s.sid === req.params.sid);
    if (!mine || !(await opts.logout.endSession(req.params.sid, 'admin'))) {
      throw new ApiError(404, 'SESSION_NOT_FOUND', 'no such live session for this user');
    }
    req.log.info({ userId: user.id }, 'session ended by admin');
    ok(res, { ended: 1 });
  });
  /** Ends every session of a user ("sign out everywhere"). */
  router.delete('/admin/users/:id/sessions', async (req, res) => {
    const user = await userOf(req.params.id);
    const ended = await opts.logout.endUserSessions(user.id, 'admin');
    req.log.info({ userId: user.id, ended }, 'sessions ended by admin');
    ok(res, { ended });
  });
  /**
   * Lifts a lockout of one factor (e.g. after 100 consecutive failures) once the operator has
   * checked the account; FDS rules read the event as a reset.
   */
  router.post('/admin/users/:id/factors/:method/unlock', async (req, res) => {
    const user = await opts.users.findById(req.params.id);
    if (!user) throw new ApiError(404, 'USER_NOT_FOUND', 'no such user');
    const method = req.params.method.toUpperCase();
    await opts.events.record({ type: 'factor.unlocked', userId: user.id, method, ip: req.ip ?? null });
    req.log.info({ userId: user.id, method }, 'factor unlocked by admin');
    ok(res, { user_id: user.id, method, unlocked: true });
  });
  return router;
}
