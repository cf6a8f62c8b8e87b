import {
  ApiError,
  routeInput,
  verificationError,
  type Actor,
  type UserAccounts,
  type UserRecord,
  answerSuccess,
  type MethodSetup,
} from '@gatehouse-auth/core';
import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import { logOf, type RouteGroupInput } from './http.js';
import { CIDAAS_USER_API, FIXED_MEMBERS } from './users-api.js';

/** What @gatehouse-auth/page-account provides as `accountDeletion` (the same grace period and sweep). */
interface AccountDeletion {
  schedule(actor: Actor, user: UserRecord, req: IncomingMessage): Promise<Date>;
}

/** The method that takes a password (cidaas's password is Gatehouse's PASSWORD method). */
const PASSWORD = 'PASSWORD';

/** Password changes (right or wrong) per user before the call is refused for the rest of the window. */
const MAX_TRIES = 5;
const TRIES_WINDOW_SECONDS = 900;

/**
 * The cidaas UserService calls for a signed-in user (issue 27): `POST /users-srv/changepassword`,
 * `PUT /users-srv/user/profile/{sub}`, `POST /users-srv/user/unregister/scheduler/schedule/{sub}`
 * and `GET /users-srv/user/communication/status/{sub}`. The caller is checked as the setup API
 * checks it (`web.setup.access`): the user's own access token from a recent login with the
 * `gatehouse.methods` scope (and their second factor when they have one), or the admin token.
 */
export function userRoutes({ api, router }: RouteGroupInput) {
  const { services, web } = api;
  const json = services.http.json();
  const form = services.http.form();
  const accounts = () => services.resolve<UserAccounts>('userAccounts');
  const tries = web.limit('changepassword', MAX_TRIES, TRIES_WINDOW_SECONDS);
  // A single-page app on its own origin calls these with the user's token.
  api.cors(['/users-srv/changepassword', '/users-srv/user/']);
  const actorOf = (req: Request, user: UserRecord): Actor => ({
    via: 'cidaas',
    userId: user.id,
    ip: web.clientIp(req) || null,
  });

  router.post(CIDAAS_USER_API.changePassword.path, json, form, async (req, res) => {
    // Who calls first: a body of any shape from anyone else is refused as unauthorised.
    const { user, clientId } = await web.setup.access(req, res, (req.body as Record<string, unknown> | undefined)?.sub);
    const { body } = routeInput(CIDAAS_USER_API.changePassword, req);
    const missing = (['old_password', 'new_password', 'confirm_password'] as const).filter((name) => !body[name]);
    if (missing.length) throw verificationError('FIELD_MISSING', `missing: ${missing.join(', ')}`, { fields: missing });
    if (body.new_password !== body.confirm_password) {
      throw verificationError('INVALID_FIELD', 'confirm_password is not new_password', {
        fields: ['confirm_password'],
      });
    }
    const method = web.loginFlows.method(PASSWORD);
    // Every try counts, and a blocked user is refused before the password is checked: a guess
    // after the limit is never tested.
    const wait = await tries.hit(user.id);
    if (wait !== null) {
      res.set('Retry-After', String(wait));
      throw verificationError('TOO_MANY_ATTEMPTS', 'too many password changes; try again later');
    }
    // The method's own check of the current password (constant time, a dummy hash without one).
    const proof = await method.verify({
      user,
      credentials: services.credentials(user.id, method.id),
      request: web.requestFacts(req),
      clientId: clientId ?? 'cidaas',
      logger: logOf(req, api),
      fields: { password: body.old_password! },
      files: [],
      state: {},
    });
    if (!proof.ok) throw verificationError('VERIFICATION_FAILED', 'the current password is wrong');
    // The policy is the method's; a replaced password ends every session and token and tells the user.
    await services
      .resolve<MethodSetup>('methodSetup')
      .step('initiation', method.id, user, { password: body.new_password }, req);
    await services.events.record({
      type: 'cidaas.password_changed',
      userId: user.id,
      ip: web.clientIp(req) || null,
      data: { actor: user.id, ...(clientId ? { client_id: clientId } : {}) },
    });
    answerSuccess(res, { changed: true });
  });

  router.put(CIDAAS_USER_API.updateProfile.path, json, form, async (req, res) => {
    const { user } = await web.setup.access(req, res, String(req.params.sub));
    const { body } = routeInput(CIDAAS_USER_API.updateProfile, req);
    const current: Record<string, string | null> = {
      username: user.username,
      email: user.email,
      mobile_number: user.phone,
      phone_number: user.phone,
    };
    const changed = FIXED_MEMBERS.filter(
      (name) => body[name] !== undefined && body[name] !== null && body[name] !== '' && body[name] !== current[name],
    );
    if (changed.length) {
      throw verificationError(
        'INVALID_FIELD',
        `${changed.join(', ')} cannot be changed here: a new address is proven by a code on the account page`,
        { fields: changed },
      );
    }
    const patch = Object.fromEntries(
      Object.entries(body).filter(([name]) => !(FIXED_MEMBERS as readonly string[]).includes(name) && name !== 'sub'),
    );
    const profile = await accounts().updateProfile(user, patch);
    answerSuccess(res, { updated: true, profile });
  });

  router.post(CIDAAS_USER_API.scheduleDeletion.path, json, form, async (req, res) => {
    const { user } = await web.setup.access(req, res, String(req.params.sub));
    let deletion: AccountDeletion;
    try {
      deletion = services.resolve<AccountDeletion>('accountDeletion');
    } catch {
      throw new ApiError(
        404,
        'DELETION_NOT_CONFIGURED',
        'no plugin deletes accounts (add @gatehouse-auth/page-account)',
      );
    }
    const due = await deletion.schedule(actorOf(req, user), user, req);
    answerSuccess(res, { scheduled: true, deletion_at: due.toISOString() });
  });

  router.get(CIDAAS_USER_API.communicationStatus.path, async (req, res) => {
    const { user } = await web.setup.access(req, res, String(req.params.sub));
    const email = await services.accounts.verified(user, 'email');
    const mobile = await services.accounts.verified(user, 'sms');
    answerSuccess(res, {
      sub: user.id,
      EMAIL: email,
      MOBILE: mobile,
      email_verified: email,
      mobile_number_verified: mobile,
    });
  });

  return Object.values(CIDAAS_USER_API);
}
