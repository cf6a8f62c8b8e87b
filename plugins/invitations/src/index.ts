import { ApiError, definePlugin, routeInput, z, type Actor, answerSuccess } from '@gatehouse-auth/core';
import type { Request } from 'express';
import { INVITATIONS_API } from './api.js';
import { MESSAGES } from './messages.js';
import { invitationPages } from './pages.js';
import { Invitations } from './service.js';

export { INVITATIONS_API } from './api.js';
export { maskEmail, type Invitation, type InvitationsService, type InviteInput } from './service.js';

const options = z.strictObject({
  /** The delivery channel that sends the invitation emails. */
  email_channel: z.string().min(1),
  /** How long a link works. */
  ttl_days: z.number().int().min(1).max(30).default(7),
});

/**
 * Invitations by email: `POST /admin/invitations` (and the console's button) invites a user by
 * address, creating them when there is none; the emailed single-use link (7 days by default)
 * opens `/invitations/accept`, where they choose a first password (the PASSWORD policy), which
 * also proves the address. Then they sign in to their app, where `enroll_on_login` sets up what
 * else it asks for. The service `invitations` answers compat-cidaas's invite-info call.
 */
export default definePlugin({
  name: '@gatehouse-auth/invitations',
  apiVersion: '^1.3',
  // userAccounts is that plugin's (decision 0063).
  dependencies: ['@gatehouse-auth/management'],
  provides: ['invitations'],
  options,
  register(api, opts) {
    const { web, services } = api;
    const invitations = new Invitations(api, opts);
    api.provide('invitations', invitations);
    api.messages(MESSAGES);

    const admin = services.http.createRouter();
    const actor = (req: Request): Actor => ({ via: 'admin', userId: 'admin-token', ip: web.clientIp(req) });
    const found = <T>(value: T | null): T => {
      if (!value) throw new ApiError(404, 'INVITATION_NOT_FOUND', 'no such invitation');
      return value;
    };
    admin.use(
      async (req, _res, next) => {
        await web.requireAdmin(req);
        next();
      },
      services.http.json({ limit: '10kb' }),
    );
    admin.post('/', async (req, res) => {
      const { body } = routeInput(INVITATIONS_API.invite, req);
      answerSuccess(res, await invitations.invite(actor(req), body), 201);
    });
    admin.get('/', async (req, res) => {
      const { query } = routeInput(INVITATIONS_API.ofUser, req);
      answerSuccess(res, await invitations.ofUser(query.user_id));
    });
    admin.get('/:id', async (req, res) => {
      const { params } = routeInput(INVITATIONS_API.get, req);
      answerSuccess(res, found(await invitations.get(params.id)));
    });
    admin.delete('/:id', async (req, res) => {
      const { params } = routeInput(INVITATIONS_API.revoke, req);
      answerSuccess(res, found(await invitations.revoke(actor(req), params.id)));
    });
    api.routes.add({ path: '/admin/invitations', router: admin, operations: Object.values(INVITATIONS_API) });

    const pages = services.http.createRouter();
    invitationPages(api, pages, invitations);
    api.routes.add({ path: '/invitations', router: pages });

    api.check(() => {
      const channel = services.channels.get(opts.email_channel);
      if (!channel) throw new Error(`options.email_channel: no delivery channel "${opts.email_channel}" is registered`);
      if (!channel.kinds.includes('email'))
        throw new Error(`options.email_channel: delivery channel "${opts.email_channel}" does not send email`);
    });
  },
});
