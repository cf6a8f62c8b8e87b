import {
  ApiError,
  definePlugin,
  routeInput,
  z,
  type Actor,
  type ClientAdmin,
  type UserAccounts,
  answerSuccess,
} from '@gatehouse-auth/core';
import type { Request } from 'express';
import { ADMIN_API } from './api.js';

export { ADMIN_API } from './api.js';

/** The request's logger (with its request id). */
type Logged = Request & { log: { info(obj: object, msg: string): void } };

/**
 * The admin REST API (decision 44): `/admin/users` (create, list, get), a user's profile claims,
 * sessions and factor unlock, behind the core's admin token (`admin.token`, throttled per
 * address on every node: `web.requireAdmin`). Left out of `plugins:`, `/admin/*` answers 404;
 * the core's other admin-token endpoints (`/health/dependencies`, `/metrics`, the setup API)
 * stay.
 */
export default definePlugin({
  name: '@gatehouse-auth/admin-api',
  apiVersion: '^1.3',
  // userAccounts and clientAdmin are that plugin's (decision 0063).
  dependencies: ['@gatehouse-auth/management'],
  options: z.strictObject({}),
  register(api) {
    const { web, services } = api;
    const router = services.http.createRouter();
    // Resolved in a handler: the core's services are built after the plugins register.
    const accounts = () => services.resolve<UserAccounts>('userAccounts');
    /** The admin token is no user: its events name it as the actor. */
    const actor = (req: Request): Actor => ({ via: 'admin', userId: 'admin-token', ip: web.clientIp(req) });
    const userOf = async (id: string) => {
      const user = await accounts().findById(id);
      if (!user) throw new ApiError(404, 'USER_NOT_FOUND', 'no such user');
      return user;
    };

    router.use(
      async (req, _res, next) => {
        await web.requireAdmin(req);
        next();
      },
      services.http.json({ limit: '20kb' }),
    );
    router.post('/users', async (req, res) => {
      const { body } = routeInput(ADMIN_API.createUser, req);
      const user = await accounts().createUser(actor(req), {
        username: body.username,
        email: body.email || undefined,
        phone: body.phone || undefined,
      });
      answerSuccess(res, user, 201);
    });
    router.get('/users', async (req, res) => {
      const { limit, offset } = routeInput(ADMIN_API.listUsers, req).query;
      // An empty query lists every user, oldest first (limit clamped to 1..1000).
      answerSuccess(res, await accounts().search('', limit, offset));
    });
    router.get('/users/:id', async (req, res) => {
      const { params } = routeInput(ADMIN_API.getUser, req);
      answerSuccess(res, await userOf(params.id));
    });
    /** A user's OIDC profile claims; PATCH is a JSON merge patch (null removes a claim). */
    router.get('/users/:id/profile', async (req, res) => {
      answerSuccess(res, await accounts().profile((await userOf(req.params.id)).id));
    });
    router.patch('/users/:id/profile', async (req, res) => {
      const user = await userOf(req.params.id);
      const { body } = routeInput(ADMIN_API.patchProfile, req);
      answerSuccess(res, await accounts().updateProfile(user, body));
    });
    /** A user's live browser sessions: when, how, and which apps they reached. */
    router.get('/users/:id/sessions', async (req, res) => {
      const user = await userOf(req.params.id);
      const sessions = await accounts().sessions(user.id);
      answerSuccess(
        res,
        await Promise.all(
          sessions.map(async (s) => ({
            sid: s.sid,
            created_at: s.createdAt.toISOString(),
            expires_at: s.expiresAt.toISOString(),
            auth_time: s.authTime,
            amr: s.amr,
            methods: s.methods.map((m) => ({ method: m.method, at: m.at })),
            clients: await accounts().clientsOf(s.sid),
          })),
        ),
      );
    });
    /** Ends one session: its tokens are revoked and its apps get back-channel logout notices. */
    router.delete('/users/:id/sessions/:sid', async (req, res) => {
      const user = await userOf(req.params.id);
      const live = (await accounts().sessions(user.id)).map((s) => s.sid);
      if (!(await accounts().endSession(actor(req), user, req.params.sid, live))) {
        throw new ApiError(404, 'SESSION_NOT_FOUND', 'no such live session for this user');
      }
      (req as Logged).log.info({ userId: user.id }, 'session ended by admin');
      answerSuccess(res, { ended: 1 });
    });
    /** Ends every session of a user ("sign out everywhere"). */
    router.delete('/users/:id/sessions', async (req, res) => {
      const user = await userOf(req.params.id);
      const live = (await accounts().sessions(user.id)).map((s) => s.sid);
      const ended = await accounts().endSessions(actor(req), user, live);
      (req as Logged).log.info({ userId: user.id, ended }, 'sessions ended by admin');
      answerSuccess(res, { ended });
    });
    /**
     * Lifts a lockout of one factor (e.g. after 100 consecutive failures) once the operator has
     * checked the account; FDS rules read the event `factor.unlocked` as a reset.
     */
    router.post('/users/:id/factors/:method/unlock', async (req, res) => {
      const user = await userOf(req.params.id);
      const method = req.params.method.toUpperCase();
      await accounts().unlockFactor(actor(req), user, method);
      (req as Logged).log.info({ userId: user.id, method }, 'factor unlocked by admin');
      answerSuccess(res, { user_id: user.id, method, unlocked: true });
    });

    /** What the user must do at their next sign-in (the hosted login page asks it of them). */
    router.get('/users/:id/required-actions', async (req, res) => {
      const user = await userOf(routeInput(ADMIN_API.getRequiredActions, req).params.id);
      answerSuccess(res, { actions: await accounts().requiredActions(user.id) });
    });
    router.put('/users/:id/required-actions', async (req, res) => {
      const { params, body } = routeInput(ADMIN_API.setRequiredActions, req);
      const user = await userOf(params.id);
      const actions = await accounts().setRequiredActions(actor(req), user, body.actions);
      (req as Logged).log.info({ userId: user.id, actions }, 'required actions set by admin');
      answerSuccess(res, { actions });
    });

    // ── apps (decision 0051): config apps are listed read-only, database apps are edited ──
    const apps = () => services.resolve<ClientAdmin>('clientAdmin');
    router.get('/apps', async (_req, res) => {
      answerSuccess(res, await apps().list());
    });
    router.post('/apps', async (req, res) => {
      const { body } = routeInput(ADMIN_API.createApp, req);
      const created = await apps().create(actor(req), body);
      (req as Logged).log.info({ clientId: created.app.client_id }, 'app created by admin');
      answerSuccess(res, created, 201);
    });
    router.get('/apps/:client_id', async (req, res) => {
      const { params } = routeInput(ADMIN_API.getApp, req);
      const app = await apps().get(params.client_id);
      if (!app) throw new ApiError(404, 'APP_NOT_FOUND', 'no such app');
      answerSuccess(res, app);
    });
    router.put('/apps/:client_id', async (req, res) => {
      const { params, body } = routeInput(ADMIN_API.replaceApp, req);
      answerSuccess(res, await apps().replace(actor(req), params.client_id, body));
    });
    router.patch('/apps/:client_id', async (req, res) => {
      const { params, body } = routeInput(ADMIN_API.patchApp, req);
      answerSuccess(res, await apps().patch(actor(req), params.client_id, body));
    });
    router.delete('/apps/:client_id', async (req, res) => {
      const { params } = routeInput(ADMIN_API.deleteApp, req);
      const deleted = await apps().delete(actor(req), params.client_id);
      (req as Logged).log.info({ clientId: params.client_id, ...deleted }, 'app deleted by admin');
      answerSuccess(res, deleted);
    });
    router.post('/apps/:client_id/secret', async (req, res) => {
      const { params, body } = routeInput(ADMIN_API.rotateAppSecret, req);
      const rotated = await apps().rotateSecret(actor(req), params.client_id, {
        ...(body.overlap_seconds !== undefined ? { overlapSeconds: body.overlap_seconds } : {}),
      });
      (req as Logged).log.info({ clientId: params.client_id }, 'app secret rotated by admin');
      answerSuccess(res, rotated);
    });

    api.routes.add({ path: '/admin', router, operations: Object.values(ADMIN_API) });
  },
});
