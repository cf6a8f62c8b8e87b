import type { Router } from 'express';
import type { GatehouseConfig } from '../config/schema.js';
import type { DeviceStore } from '../devices/store.js';
import { ApiError } from '../errors.js';
import type { DeviceCookie } from '../http/device.js';
import type { Locales } from '../i18n/locales.js';
import { html } from '../login/html.js';
import type { ClientRegistry } from '../oauth/clients.js';
import type { SessionStore } from '../oauth/sessions.js';
import type { JsonObject, UserRecord } from '../plugins/extensions.js';
import type { Extensions } from '../plugins/loader.js';
import type { EventStore } from '../storage/stores.js';
import type { UserService } from '../users/users.js';
import { requestFacts } from '../verification/context.js';
import type { EnrollmentService } from '../verification/enrollment.js';
import type { AccountActions } from './actions.js';
import { notice } from './layout.js';
import { appsBody, pluginsBody, type OverviewDeps } from './overview.js';
import type { SiteSignIn } from './signin.js';
import { methodLabel, Site, type SiteRequest } from './site.js';
import { userDetail, usersPage } from './user-view.js';

/** What the console uses (the container's cradle provides it). */
export interface ConsoleDeps extends OverviewDeps {
  config: GatehouseConfig;
  issuerPath: string;
  locales: Locales;
  consoleSignIn: SiteSignIn;
  accountActions: AccountActions;
  users: UserService;
  sessions: SessionStore;
  devices: DeviceStore;
  enrollment: EnrollmentService;
  events: EventStore;
  clients: ClientRegistry;
  extensions: Extensions;
  device: DeviceCookie;
}

const NAV: [string, string][] = [
  ['/users', 'console.nav.users'],
  ['/apps', 'console.nav.apps'],
  ['/plugins', 'console.nav.plugins'],
];

/** Users a page of the list shows. */
const USERS_PAGE = 50;

/**
 * The admin console (decision 27): users (search, create, disable, unlock, reset factors, end
 * sessions), their methods, devices, sessions and recent events; apps; plugins and health.
 * Server-rendered, no script, every change a POST form with the sign-in's CSRF token.
 */
export function consoleRoutes(deps: ConsoleDeps): Router {
  const isAdmin = adminCheck(deps.config.console.admins);
  const site = new Site({
    signIn: deps.consoleSignIn,
    locales: deps.locales,
    issuerPath: deps.issuerPath,
    via: 'console',
    titleKey: 'console.title',
    nav: NAV,
    // Checked on every request: an admin taken off the list loses the console at once.
    allowed: (s) => isAdmin(s.user),
  });
  const actions = deps.accountActions;
  const base = site.href;

  site.get('', '/users', async (r) => r.res.redirect(303, `${base}/users`));
  site.get('/', '/users', async (r) => r.res.redirect(303, `${base}/users`));

  // ─── users ───

  site.get('/users', '/users', async (r) => {
    const q = typeof r.req.query.q === 'string' ? r.req.query.q.slice(0, 255) : '';
    const asked = Number(r.req.query.page ?? 1);
    const page = Number.isInteger(asked) && asked >= 1 && asked <= 10_000 ? asked : 1;
    // One more than a page: whether there is a next one.
    const users = await deps.users.search(q, USERS_PAGE + 1, (page - 1) * USERS_PAGE);
    site.render(
      r,
      r.t.t('console.users.title'),
      usersPage({ t: r.t, csrf: r.session.csrf }, base, q, users.slice(0, USERS_PAGE), {
        page,
        more: users.length > USERS_PAGE,
      }),
    );
  });

  site.post('/users', '/users', async (r) => {
    const body = r.req.body as Record<string, unknown>;
    const field = (name: string) => (typeof body[name] === 'string' && body[name] ? (body[name] as string) : undefined);
    try {
      const user = await actions.createUser(r.actor, {
        username: field('username') ?? '',
        ...(field('email') ? { email: field('email')! } : {}),
        ...(field('phone') ? { phone: field('phone')! } : {}),
      });
      site.done(r, `/users/${encodeURIComponent(user.id)}`, 'created');
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      const users = await deps.users.search('', USERS_PAGE + 1);
      site.render(
        r,
        r.t.t('console.users.title'),
        html`${notice(r.t.t(`console.users.create_failed.${err.code === 'USER_EXISTS' ? 'exists' : 'invalid'}`), true)}
        ${usersPage({ t: r.t, csrf: r.session.csrf }, base, '', users.slice(0, USERS_PAGE), { page: 1, more: users.length > USERS_PAGE })}`,
        err.status,
      );
    }
  });

  /** The user of `:id`, or null once a 404 page said so. */
  const userOf = async (r: SiteRequest): Promise<UserRecord | null> => {
    const id = String(r.req.params.id);
    const user = id.length <= 100 ? await deps.users.findById(id) : null;
    if (!user) site.refuse(r, 404, r.t.t('console.user.not_found'));
    return user;
  };
  const facts = (r: SiteRequest) => requestFacts(r.req, undefined, deps.device);

  site.get('/users/:id', '/users', async (r) => {
    const user = await userOf(r);
    if (!user) return;
    const [methods, devices, sessions, events] = await Promise.all([
      deps.enrollment.list(user, facts(r), r.req.log),
      deps.devices.ofUser(user.id),
      deps.sessions.ofUser(user.id),
      deps.events.recent({ userId: user.id, limit: 25 }),
    ]);
    const clientsOf = await Promise.all(sessions.map((s) => deps.sessions.clientsOf(s.sid)));
    const body = userDetail({
      t: r.t,
      csrf: r.session.csrf,
      notice: site.doneNotice(r, 'console'),
      path: `${base}/users/${encodeURIComponent(user.id)}`,
      user,
      methods: methods.filter((m) => m.enrolled || (m.credentials as JsonObject[]).length > 0),
      devices,
      sessions,
      clientsOf,
      events,
      label: (id) => methodLabel(r.t, deps.extensions.methods.get(id), id),
    });
    site.render(r, user.username, body);
  });

  // ─── user actions: each a POST with the CSRF token, each an event ───

  const back = (r: SiteRequest, user: UserRecord, done: string) =>
    site.done(r, `/users/${encodeURIComponent(user.id)}`, done);

  site.post('/users/:id/disable', '/users', async (r) => {
    const user = await userOf(r);
    if (!user) return;
    if (user.id === r.session.user.id) return site.refuse(r, 409, r.t.t('console.user.not_yourself'));
    await actions.disable(r.actor, user);
    back(r, user, 'disabled');
  });
  site.post('/users/:id/enable', '/users', async (r) => {
    const user = await userOf(r);
    if (!user) return;
    await actions.enable(r.actor, user);
    back(r, user, 'enabled');
  });
  /** A method id of the registry, or null once a 404 page said so. */
  const methodOf = (r: SiteRequest): string | null => {
    const id = String(r.req.params.method);
    if (deps.extensions.methods.has(id)) return id;
    site.refuse(r, 404, r.t.t('console.user.no_such_method'));
    return null;
  };
  site.post('/users/:id/factors/:method/unlock', '/users', async (r) => {
    const user = await userOf(r);
    const method = user && methodOf(r);
    if (!user || !method) return;
    await actions.unlockFactor(r.actor, user, method);
    back(r, user, 'factor_unlocked');
  });
  site.post('/users/:id/factors/:method/reset', '/users', async (r) => {
    const user = await userOf(r);
    const method = user && methodOf(r);
    if (!user || !method) return;
    await actions.resetFactor(r.actor, user, method);
    back(r, user, 'factor_reset');
  });
  site.post('/users/:id/devices/:device/remove', '/users', async (r) => {
    const user = await userOf(r);
    if (!user) return;
    if (!(await actions.removeDevice(r.actor, user, String(r.req.params.device)))) {
      return site.refuse(r, 404, r.t.t('console.user.no_such_device'));
    }
    back(r, user, 'device_removed');
  });
  site.post('/users/:id/sessions/end', '/users', async (r) => {
    const user = await userOf(r);
    if (!user) return;
    const live = (await deps.sessions.ofUser(user.id)).map((s) => s.sid);
    const sid = (r.req.body as Record<string, unknown>).sid;
    if (sid === undefined) {
      await actions.endSessions(r.actor, user, live);
      return back(r, user, 'sessions_ended');
    }
    if (typeof sid !== 'string' || !(await actions.endSession(r.actor, user, sid, live))) {
      return site.refuse(r, 404, r.t.t('console.user.no_such_session'));
    }
    back(r, user, 'session_ended');
  });

  // ─── apps, plugins and health ───

  site.get('/apps', '/apps', async (r) => {
    site.render(r, r.t.t('console.apps.title'), appsBody(r.t, deps.clients.all()));
  });

  site.get('/plugins', '/plugins', async (r) => {
    site.render(r, r.t.t('console.plugins.title'), await pluginsBody(r.t, deps, r.req.log));
  });

  return site.router;
}

const USER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Who `console.admins` names: an entry shaped like a user id matches that id only, any other
 * entry a username. A username shaped like an id never matches, so nobody becomes an admin by
 * taking an admin's id as their username.
 */
export function adminCheck(admins: readonly string[]): (user: UserRecord) => boolean {
  const ids = new Set(admins.filter((a) => USER_ID.test(a)).map((a) => a.toLowerCase()));
  const names = new Set(admins.filter((a) => !USER_ID.test(a)));
  return (user) => ids.has(user.id.toLowerCase()) || (names.has(user.username) && !USER_ID.test(user.username));
}
