import express, { type Router } from 'express';
import { z } from 'zod';
import { jsonBody } from './parsers.js';
import { ApiError } from '../errors.js';
import { defineRoute, routeInput, type RouteSpec } from './api-spec.js';
import { profilePatchSchema } from '../users/profile.js';
import { E164, EMAIL, USERNAME } from '../users/users.js';
import type { EventLog } from '../plugins/extensions.js';
import type { GatehouseConfig } from '../config/schema.js';
import type { LogoutService } from '../oauth/logout.js';
import type { SessionStore } from '../oauth/sessions.js';
import type { UserService } from '../users/users.js';
import type { UserProfiles } from '../users/profile.js';
import { ADMIN_THROTTLED, type AdminGuard } from './admin-guard.js';
import { ok } from './envelope.js';

/** What the admin API uses (the container's cradle provides it). */
export interface AdminDeps {
  config: GatehouseConfig;
  users: UserService;
  events: EventLog;
  sessions: SessionStore;
  logout: LogoutService;
  profiles: UserProfiles;
  adminGuard: AdminGuard;
}

// ── the admin API's operations (decision 26: the handlers validate with what the document shows) ──

const ADMIN = {
  tag: 'admin',
  security: ['adminToken'],
  // The users directory names the one field it refuses (details.field).
  invalid: (message: string, fields: string[]) => new ApiError(400, 'INVALID_FIELD', message, { field: fields[0] }),
} as const;
const GUARD_ERRORS = ['UNAUTHORIZED', 'ADMIN_API_DISABLED', ADMIN_THROTTLED] as const;

const userId = z.object({ id: z.string().meta({ description: 'the user id (a UUID)' }) });
const userSchema = z.object({
  id: z.string(),
  username: z.string(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  status: z.enum(['active', 'disabled', 'locked']),
});
/** Empty and absent are the same: no email or phone. */
const optionalMatching = (re: RegExp, what: string) =>
  z.union([z.literal(''), z.null(), z.string().trim().regex(re, what)]).optional();
const profileSchemaOut = z.record(z.string(), z.unknown()).meta({
  description: 'the OIDC standard claims set for this user (name, given_name, address, ...) and updated_at',
});
const sessionSchema = z.object({
  sid: z.string(),
  created_at: z.string().meta({ format: 'date-time' }),
  expires_at: z.string().meta({ format: 'date-time' }),
  auth_time: z.number().int(),
  amr: z.array(z.string()),
  methods: z.array(z.object({ method: z.string(), at: z.number().int() })),
  clients: z.array(z.string()),
});

export const ADMIN_API = {
  createUser: defineRoute({
    ...ADMIN,
    id: 'createUser',
    method: 'post',
    path: '/admin/users',
    summary: 'Create a user',
    body: z.object({
      username: z.string().trim().regex(USERNAME, 'must be 1-255 letters, digits or ._@+-'),
      email: optionalMatching(EMAIL, 'must be an email address'),
      phone: optionalMatching(E164, 'must be an E.164 number such as +15551234567'),
    }),
    response: { status: 201, description: 'the new user', schema: userSchema },
    errors: [...GUARD_ERRORS, 'INVALID_FIELD', 'USER_EXISTS'],
  }),
  listUsers: defineRoute({
    ...ADMIN,
    id: 'listUsers',
    method: 'get',
    path: '/admin/users',
    summary: 'List users, oldest first',
    query: z.object({
      limit: z.coerce.number().int().default(100).meta({ description: 'at most 1000 (clamped)' }),
      offset: z.coerce.number().int().default(0),
    }),
    invalid: () => new ApiError(400, 'INVALID_FIELD', 'limit and offset must be integers'),
    response: { description: 'a page of users', schema: z.array(userSchema) },
    errors: [...GUARD_ERRORS, 'INVALID_FIELD'],
  }),
  getUser: defineRoute({
    ...ADMIN,
    id: 'getUser',
    method: 'get',
    path: '/admin/users/:id',
    summary: 'Get a user',
    params: userId,
    response: { description: 'the user', schema: userSchema },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND'],
  }),
  getProfile: defineRoute({
    ...ADMIN,
    id: 'getUserProfile',
    method: 'get',
    path: '/admin/users/:id/profile',
    summary: "A user's OIDC profile claims",
    params: userId,
    response: { description: 'the claims', schema: profileSchemaOut },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND'],
  }),
  patchProfile: defineRoute({
    ...ADMIN,
    id: 'patchUserProfile',
    method: 'patch',
    path: '/admin/users/:id/profile',
    summary: "Change a user's profile claims (JSON merge patch: null removes a claim)",
    description: 'A bad value refuses the whole patch and changes nothing.',
    params: userId,
    body: profilePatchSchema,
    response: { description: 'the profile after the patch', schema: profileSchemaOut },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND', 'INVALID_FIELD'],
  }),
  listSessions: defineRoute({
    ...ADMIN,
    id: 'listUserSessions',
    method: 'get',
    path: '/admin/users/:id/sessions',
    summary: "A user's live browser sessions: when, how, and which apps they reached",
    params: userId,
    response: { description: 'the sessions', schema: z.array(sessionSchema) },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND'],
  }),
  endSession: defineRoute({
    ...ADMIN,
    id: 'endUserSession',
    method: 'delete',
    path: '/admin/users/:id/sessions/:sid',
    summary: 'End one session: its tokens are revoked, its apps get back-channel logout notices',
    params: userId.extend({ sid: z.string() }),
    response: { description: 'ended', schema: z.object({ ended: z.literal(1) }) },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND', 'SESSION_NOT_FOUND'],
  }),
  endSessions: defineRoute({
    ...ADMIN,
    id: 'endUserSessions',
    method: 'delete',
    path: '/admin/users/:id/sessions',
    summary: 'End every session of a user ("sign out everywhere")',
    params: userId,
    response: { description: 'how many ended', schema: z.object({ ended: z.number().int() }) },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND'],
  }),
  unlockFactor: defineRoute({
    ...ADMIN,
    id: 'unlockFactor',
    method: 'post',
    path: '/admin/users/:id/factors/:method/unlock',
    summary: 'Lift the lockout of one factor once the operator has checked the account',
    params: userId.extend({ method: z.string().meta({ description: 'a method id, e.g. one of the login methods' }) }),
    response: {
      description: 'unlocked',
      schema: z.object({ user_id: z.string(), method: z.string(), unlocked: z.literal(true) }),
    },
    errors: [...GUARD_ERRORS, 'USER_NOT_FOUND'],
  }),
} satisfies Record<string, RouteSpec>;

export function adminRoutes(opts: AdminDeps): Router {
  const router = express.Router();
  router.use('/admin', opts.adminGuard.require, jsonBody('20kb'));
  router.post('/admin/users', async (req, res) => {
    const { body } = routeInput(ADMIN_API.createUser, req);
    const user = await opts.users.create(body);
    ok(res, user, 201);
  });
  router.get('/admin/users', async (req, res) => {
    ok(res, await opts.users.list(routeInput(ADMIN_API.listUsers, req).query));
  });
  router.get('/admin/users/:id', async (req, res) => {
    const { params } = routeInput(ADMIN_API.getUser, req);
    const user = await opts.users.findById(params.id);
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
    const { body } = routeInput(ADMIN_API.patchProfile, req);
    const profile = await opts.profiles.update(user.id, body);
    await opts.events.record({
      type: 'user.profile_updated',
      userId: user.id,
      data: { claims: Object.keys(body) },
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
