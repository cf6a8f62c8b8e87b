import {
  html,
  isProtocolError,
  REQUIRED_ACTIONS,
  type RequiredAction,
  type Actor,
  type AppListing,
  type ClientAdmin,
  type SafeHtml,
  type JsonObject,
  type PluginApi,
  type UserAccounts,
  type UserRecord,
} from '@gatehouse-auth/core';
import { notice, Site, type SiteRequest } from '@gatehouse-auth/site-kit';
import { appPage, appsPage, formList } from './apps.js';
import { pluginsBody } from './overview.js';
import { userDetail, usersPage } from './user-view.js';

/** The console's options (`plugins[i].options`). */
export interface ConsoleOptions {
  admins: string[];
  login_stages: string[][];
  session_ttl: number;
}

/** How recent (seconds) the factors of a console sign-in must be. */
const CONSOLE_MAX_AGE = 300;

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
export function consolePages(api: PluginApi, opts: ConsoleOptions & { path: string; clientId: string }): void {
  const isAdmin = adminCheck(opts.admins);
  const site = new Site(api, {
    clientId: opts.clientId,
    path: opts.path,
    cookie: 'gh_console',
    ttlSeconds: opts.session_ttl,
    // An admin proves the factors afresh: a browser session from earlier is not enough.
    maxAge: CONSOLE_MAX_AGE,
    via: 'console',
    titleKey: 'console.title',
    nav: NAV,
    // Checked on every request: an admin taken off the list loses the console at once.
    allowed: (s) => isAdmin(s.user),
  });
  // Resolved at request time: the service is built once every plugin registered.
  const actions = () => api.services.resolve<UserAccounts>('userAccounts');
  const base = site.href;
  /** The invitations plugin's service, when it is loaded. */
  const invitations = () => {
    try {
      return api.services.resolve<{ invite(actor: Actor, input: { email: string }): Promise<unknown> }>('invitations');
    } catch {
      return null;
    }
  };

  site.get('', '/users', async (r) => r.res.redirect(303, `${base}/users`));
  site.get('/', '/users', async (r) => r.res.redirect(303, `${base}/users`));

  // ─── users ───

  site.get('/users', '/users', async (r) => {
    const q = typeof r.req.query.q === 'string' ? r.req.query.q.slice(0, 255) : '';
    const asked = Number(r.req.query.page ?? 1);
    const page = Number.isInteger(asked) && asked >= 1 && asked <= 10_000 ? asked : 1;
    // One more than a page: whether there is a next one.
    const users = await actions().search(q, USERS_PAGE + 1, (page - 1) * USERS_PAGE);
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
      const user = await actions().createUser(r.actor, {
        username: field('username') ?? '',
        ...(field('email') ? { email: field('email')! } : {}),
        ...(field('phone') ? { phone: field('phone')! } : {}),
      });
      site.done(r, `/users/${encodeURIComponent(user.id)}`, 'created');
    } catch (err) {
      if (!isProtocolError(err) || err.status >= 500) throw err;
      const users = await actions().search('', USERS_PAGE + 1);
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
    const user = id.length <= 100 ? await actions().findById(id) : null;
    if (!user) site.refuse(r, 404, r.t.t('console.user.not_found'));
    return user;
  };

  site.get('/users/:id', '/users', async (r) => {
    const user = await userOf(r);
    if (!user) return;
    const [methods, devices, sessions, events] = await Promise.all([
      actions().methods(user, r.req),
      actions().devices(user.id),
      actions().sessions(user.id),
      api.services.history.recent({ userId: user.id, limit: 25 }),
    ]);
    const clientsOf = await Promise.all(sessions.map((s) => actions().clientsOf(s.sid)));
    const requiredActions = await actions().requiredActions(user.id);
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
      label: (id) => actions().method(id, r.req)?.label ?? id,
      requiredActions,
      canInvite: Boolean(user.email) && invitations() !== null,
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
    await actions().disable(r.actor, user);
    back(r, user, 'disabled');
  });
  site.post('/users/:id/enable', '/users', async (r) => {
    const user = await userOf(r);
    if (!user) return;
    await actions().enable(r.actor, user);
    back(r, user, 'enabled');
  });
  /** A method id of the registry, or null once a 404 page said so. */
  const methodOf = (r: SiteRequest): string | null => {
    const id = String(r.req.params.method);
    if (actions().method(id, r.req)) return id;
    site.refuse(r, 404, r.t.t('console.user.no_such_method'));
    return null;
  };
  site.post('/users/:id/factors/:method/unlock', '/users', async (r) => {
    const user = await userOf(r);
    const method = user && methodOf(r);
    if (!user || !method) return;
    await actions().unlockFactor(r.actor, user, method);
    back(r, user, 'factor_unlocked');
  });
  site.post('/users/:id/factors/:method/reset', '/users', async (r) => {
    const user = await userOf(r);
    const method = user && methodOf(r);
    if (!user || !method) return;
    await actions().resetFactor(r.actor, user, method);
    back(r, user, 'factor_reset');
  });
  site.post('/users/:id/devices/:device/remove', '/users', async (r) => {
    const user = await userOf(r);
    if (!user) return;
    if (!(await actions().removeDevice(r.actor, user, String(r.req.params.device)))) {
      return site.refuse(r, 404, r.t.t('console.user.no_such_device'));
    }
    back(r, user, 'device_removed');
  });
  site.post('/users/:id/sessions/end', '/users', async (r) => {
    const user = await userOf(r);
    if (!user) return;
    const live = (await actions().sessions(user.id)).map((s) => s.sid);
    const sid = (r.req.body as Record<string, unknown>).sid;
    if (sid === undefined) {
      await actions().endSessions(r.actor, user, live);
      return back(r, user, 'sessions_ended');
    }
    if (typeof sid !== 'string' || !(await actions().endSession(r.actor, user, sid, live))) {
      return site.refuse(r, 404, r.t.t('console.user.no_such_session'));
    }
    back(r, user, 'session_ended');
  });

  /** What the user must do at their next sign-in: the checked boxes, the others cleared. */
  site.post('/users/:id/required-actions', '/users', async (r) => {
    const user = await userOf(r);
    if (!user) return;
    const given = (r.req.body as Record<string, unknown>).actions;
    const list = (Array.isArray(given) ? given : given === undefined ? [] : [given]).map(String);
    if (!list.every((a): a is RequiredAction => (REQUIRED_ACTIONS as readonly string[]).includes(a))) {
      return site.refuse(r, 400, r.t.t('console.user.required_invalid'));
    }
    await actions().setRequiredActions(r.actor, user, list);
    back(r, user, 'required_set');
  });

  /** An invitation by email (the invitations plugin's service), for a user with an email address. */
  site.post('/users/:id/invite', '/users', async (r) => {
    const user = await userOf(r);
    if (!user) return;
    const service = invitations();
    if (!service || !user.email) return site.refuse(r, 409, r.t.t('console.user.invite_unavailable'));
    try {
      await service.invite(r.actor, { email: user.email });
    } catch (err) {
      // A user with a password already (ALREADY_SET_UP), or one who is disabled.
      if (!isProtocolError(err) || err.status >= 500) throw err;
      return site.refuse(r, err.status, r.t.t('console.user.invite_refused', { reason: err.message }));
    }
    back(r, user, 'invited');
  });

  // ─── apps, plugins and health ───

  // Apps (decision 51): the config's are shown read-only, the database's are edited.
  const apps = () => api.services.resolve<ClientAdmin>('clientAdmin');
  const appsView = (r: SiteRequest, extra: SafeHtml | undefined = undefined) => ({
    t: r.t,
    csrf: r.session.csrf,
    base,
    notice: extra ?? site.doneNotice(r, 'console'),
  });
  /** A refusal of the apps service as a page: the message for its code. */
  const appRefusal = (r: SiteRequest, err: unknown): void => {
    if (!isProtocolError(err) || err.status >= 500) throw err;
    const text =
      err.code === 'APP_NOT_FOUND'
        ? r.t.t('console.apps.not_found')
        : err.code === 'APP_READ_ONLY'
          ? r.t.t('console.apps.read_only')
          : err.code === 'APP_EXISTS'
            ? r.t.t('console.apps.exists')
            : r.t.t('console.apps.invalid', { reason: err.message });
    site.refuse(r, err.status, text);
  };
  const appOf = async (r: SiteRequest): Promise<AppListing | null> => {
    const id = String(r.req.params.client_id);
    const app = id.length <= 255 ? await apps().get(id) : null;
    if (!app) site.refuse(r, 404, r.t.t('console.apps.not_found'));
    return app;
  };
  const form = (r: SiteRequest) => r.req.body as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

  site.get('/apps', '/apps', async (r) => {
    site.render(r, r.t.t('console.apps.title'), appsPage(appsView(r), await apps().list()));
  });
  site.post('/apps', '/apps', async (r) => {
    const body = form(r);
    const entry: Record<string, unknown> = {
      grant_types: formList(body.grant_types),
      redirect_uris: formList(body.redirect_uris, true),
      scopes: formList(body.scopes),
      ...(text(body.client_id) ? { client_id: text(body.client_id) } : {}),
      ...(text(body.name) ? { name: text(body.name) } : {}),
      ...(body.type === 'public' ? { token_endpoint_auth_method: 'none' } : {}),
    };
    try {
      const created = await apps().create(r.actor, entry);
      site.render(r, created.app.name, appPage(appsView(r, html``), created.app, created.client_secret), 201);
    } catch (err) {
      appRefusal(r, err);
    }
  });
  site.get('/apps/:client_id', '/apps', async (r) => {
    const app = await appOf(r);
    if (app) site.render(r, app.name, appPage(appsView(r), app));
  });
  site.post('/apps/:client_id', '/apps', async (r) => {
    const app = await appOf(r);
    if (!app) return;
    const body = form(r);
    try {
      await apps().patch(r.actor, app.client_id, {
        name: text(body.name) || null,
        grant_types: formList(body.grant_types),
        redirect_uris: formList(body.redirect_uris, true),
        scopes: formList(body.scopes),
      });
      site.done(r, `/apps/${encodeURIComponent(app.client_id)}`, 'app_updated');
    } catch (err) {
      appRefusal(r, err);
    }
  });
  site.post('/apps/:client_id/secret', '/apps', async (r) => {
    const app = await appOf(r);
    if (!app) return;
    const hours = Number(text(form(r).overlap_hours) || '24');
    try {
      const rotated = await apps().rotateSecret(r.actor, app.client_id, { overlapSeconds: hours * 3600 });
      site.render(r, app.name, appPage(appsView(r, html``), rotated.app, rotated.client_secret));
    } catch (err) {
      appRefusal(r, err);
    }
  });
  site.post('/apps/:client_id/delete', '/apps', async (r) => {
    const app = await appOf(r);
    if (!app) return;
    try {
      await apps().delete(r.actor, app.client_id);
      site.done(r, '/apps', 'app_deleted');
    } catch (err) {
      appRefusal(r, err);
    }
  });

  site.get('/plugins', '/plugins', async (r) => {
    const deps = { overview: () => actions().overview(), services: api.services };
    site.render(r, r.t.t('console.plugins.title'), await pluginsBody(r.t, deps, r.req.log));
  });
}

const USER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Who the `admins` option names: an entry shaped like a user id matches that id only, any other
 * entry a username. A username shaped like an id never matches, so nobody becomes an admin by
 * taking an admin's id as their username.
 */
export function adminCheck(admins: readonly string[]): (user: UserRecord) => boolean {
  const ids = new Set(admins.filter((a) => USER_ID.test(a)).map((a) => a.toLowerCase()));
  const names = new Set(admins.filter((a) => !USER_ID.test(a)));
  return (user) => ids.has(user.id.toLowerCase()) || (names.has(user.username) && !USER_ID.test(user.username));
}
