import type { Router } from 'express';
import type { Logger } from 'pino';
import type { GatehouseConfig } from '../config/schema.js';
import { ApiError } from '../errors.js';
import type { DeviceCookie } from '../http/device.js';
import type { Locales } from '../i18n/locales.js';
import { html } from '../login/html.js';
import type { ClientRegistry } from '../oauth/clients.js';
import type { SessionStore } from '../oauth/sessions.js';
import type { JsonObject, UserRecord } from '../plugins/extensions.js';
import type { Extensions, LoadedPluginInfo } from '../plugins/loader.js';
import type { EventStore } from '../storage/stores.js';
import type { DeviceStore } from '../devices/store.js';
import { DELIVERY_JOB } from '../jobs/delivery.js';
import type { UserService } from '../users/users.js';
import type { EnrollmentService } from '../verification/enrollment.js';
import { requestFacts } from '../verification/context.js';
import type { AccountActions } from './actions.js';
import { actionForm, csrfField, notice, when } from './layout.js';
import type { SiteSignIn } from './signin.js';
import { methodLabel, Site, type SiteRequest } from './site.js';

/** What the console uses (the container's cradle provides it). */
export interface ConsoleDeps {
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
  loadedPlugins: LoadedPluginInfo[];
  device: DeviceCookie;
  lifecycle: { draining: boolean };
  sql: { select(sql: string): Promise<unknown> };
  logger: Logger;
}

const NAV: [string, string][] = [
  ['/users', 'console.nav.users'],
  ['/apps', 'console.nav.apps'],
  ['/plugins', 'console.nav.plugins'],
];

/** Users a page of the list shows. */
const USERS_PAGE = 50;

/** Events the health page counts per method and channel, over this window. */
const HEALTH_WINDOW_MS = 24 * 3600 * 1000;

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
      usersPage(r, base, q, users.slice(0, USERS_PAGE), { page, more: users.length > USERS_PAGE }),
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
        ${usersPage(r, base, '', users.slice(0, USERS_PAGE), { page: 1, more: users.length > USERS_PAGE })}`,
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
    const path = `${base}/users/${encodeURIComponent(user.id)}`;
    const csrf = r.session.csrf;
    const t = r.t;
    const shown = methods.filter((m) => m.enrolled || (m.credentials as JsonObject[]).length > 0);
    const body = html`${site.doneNotice(r, 'console')}
      <section class="panel" aria-labelledby="gh-account">
        <h2 id="gh-account">${t.t('console.user.account')}</h2>
        <dl class="facts">
          <dt>${t.t('console.user.username')}</dt>
          <dd>${user.username}</dd>
          <dt>${t.t('console.user.email')}</dt>
          <dd>${user.email ?? '–'}</dd>
          <dt>${t.t('console.user.phone')}</dt>
          <dd>${user.phone ?? '–'}</dd>
          <dt>${t.t('console.user.id')}</dt>
          <dd><code>${user.id}</code></dd>
          <dt>${t.t('console.user.status')}</dt>
          <dd>${statusBadge(t, user.status)}</dd>
        </dl>
        <div class="actions">
          ${
            user.status === 'active'
              ? actionForm(`${path}/disable`, csrf, t.t('console.user.disable'), { danger: true })
              : actionForm(
                  `${path}/enable`,
                  csrf,
                  t.t(user.status === 'locked' ? 'console.user.unlock' : 'console.user.enable'),
                )
          }
          ${sessions.length ? actionForm(`${path}/sessions/end`, csrf, t.t('console.user.end_sessions'), { danger: true }) : ''}
        </div>
      </section>
      <section class="panel" aria-labelledby="gh-methods">
        <h2 id="gh-methods">${t.t('console.user.methods')}</h2>
        ${
          shown.length
            ? html`<table>
                <thead>
                  <tr>
                    <th scope="col">${t.t('console.col.method')}</th>
                    <th scope="col">${t.t('console.col.set_up')}</th>
                    <th scope="col">${t.t('console.col.credentials')}</th>
                    <th scope="col">${t.t('console.col.actions')}</th>
                  </tr>
                </thead>
                <tbody>
                  ${shown.map((m) => {
                    const id = String(m.method);
                    const creds = m.credentials as JsonObject[];
                    return html`<tr>
                      <th scope="row" id="gh-m-${id}">${methodLabel(t, deps.extensions.methods.get(id), id)}</th>
                      <td>${m.enrolled ? t.t('console.yes') : t.t('console.no')}</td>
                      <td>${creds.length}${creds.some((c) => c.used) ? ` (${t.t('console.user.some_used')})` : ''}</td>
                      <td>
                        ${actionForm(`${path}/factors/${encodeURIComponent(id)}/unlock`, csrf, t.t('console.user.unlock_factor'), { describedBy: `gh-m-${id}` })}
                        ${
                          creds.length
                            ? actionForm(
                                `${path}/factors/${encodeURIComponent(id)}/reset`,
                                csrf,
                                t.t('console.user.reset_factor'),
                                { danger: true, describedBy: `gh-m-${id}` },
                              )
                            : ''
                        }
                      </td>
                    </tr>`;
                  })}
                </tbody>
              </table>`
            : html`<p class="empty">${t.t('console.user.no_methods')}</p>`
        }
      </section>
      <section class="panel" aria-labelledby="gh-devices">
        <h2 id="gh-devices">${t.t('console.user.devices')}</h2>
        ${
          devices.length
            ? html`<table>
                <thead>
                  <tr>
                    <th scope="col">${t.t('console.col.name')}</th>
                    <th scope="col">${t.t('console.col.created')}</th>
                    <th scope="col">${t.t('console.col.last_used')}</th>
                    <th scope="col">${t.t('console.col.actions')}</th>
                  </tr>
                </thead>
                <tbody>
                  ${devices.map(
                    (d) =>
                      html`<tr>
                        <th scope="row" id="gh-d-${d.deviceId}">
                          ${d.name}${d.biometric ? html` <span class="badge">${t.t('console.user.biometric')}</span>` : ''}
                        </th>
                        <td>${when(d.createdAt)}</td>
                        <td>${when(d.lastUsedAt)}</td>
                        <td>
                          ${actionForm(`${path}/devices/${encodeURIComponent(d.deviceId)}/remove`, csrf, t.t('console.remove'), { danger: true, describedBy: `gh-d-${d.deviceId}` })}
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
            : html`<p class="empty">${t.t('console.user.no_devices')}</p>`
        }
      </section>
      <section class="panel" aria-labelledby="gh-sessions">
        <h2 id="gh-sessions">${t.t('console.user.sessions')}</h2>
        ${
          sessions.length
            ? html`<table>
                <thead>
                  <tr>
                    <th scope="col">${t.t('console.col.signed_in')}</th>
                    <th scope="col">${t.t('console.col.methods')}</th>
                    <th scope="col">${t.t('console.col.apps')}</th>
                    <th scope="col">${t.t('console.col.expires')}</th>
                    <th scope="col">${t.t('console.col.actions')}</th>
                  </tr>
                </thead>
                <tbody>
                  ${sessions.map(
                    (s, i) =>
                      html`<tr>
                        <th scope="row" id="gh-s-${i}">${when(s.authTime * 1000)}</th>
                        <td>
                          ${s.methods.map((m) => methodLabel(t, deps.extensions.methods.get(m.method), m.method)).join(', ') || s.amr.join(', ')}
                        </td>
                        <td>${clientsOf[i]!.join(', ') || '–'}</td>
                        <td>${when(s.expiresAt)}</td>
                        <td>
                          ${actionForm(`${path}/sessions/end`, csrf, t.t('console.user.end_session'), { danger: true, fields: { sid: s.sid }, describedBy: `gh-s-${i}` })}
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
            : html`<p class="empty">${t.t('console.user.no_sessions')}</p>`
        }
      </section>
      <section class="panel" aria-labelledby="gh-events">
        <h2 id="gh-events">${t.t('console.user.events')}</h2>
        ${
          events.length
            ? html`<table>
                <thead>
                  <tr>
                    <th scope="col">${t.t('console.col.when')}</th>
                    <th scope="col">${t.t('console.col.event')}</th>
                    <th scope="col">${t.t('console.col.method')}</th>
                    <th scope="col">${t.t('console.col.app')}</th>
                    <th scope="col">${t.t('console.col.outcome')}</th>
                    <th scope="col">${t.t('console.col.address')}</th>
                  </tr>
                </thead>
                <tbody>
                  ${events.map(
                    (e) =>
                      html`<tr>
                        <td>${when(e.at)}</td>
                        <td><code>${e.type}</code>${e.count > 1 ? ` ×${e.count}` : ''}</td>
                        <td>${e.method ?? '–'}</td>
                        <td>${e.clientId ?? '–'}</td>
                        <td>${[e.outcome, e.reason].filter(Boolean).join(': ') || '–'}</td>
                        <td>${e.ip ?? '–'}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
            : html`<p class="empty">${t.t('console.user.no_events')}</p>`
        }
      </section>`;
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
    const t = r.t;
    const apps = deps.clients.all();
    site.render(
      r,
      t.t('console.apps.title'),
      html`<section class="panel">
        <table>
          <thead>
            <tr>
              <th scope="col">${t.t('console.col.client_id')}</th>
              <th scope="col">${t.t('console.col.name')}</th>
              <th scope="col">${t.t('console.col.client_type')}</th>
              <th scope="col">${t.t('console.col.grants')}</th>
              <th scope="col">${t.t('console.col.stages')}</th>
              <th scope="col">${t.t('console.col.redirects')}</th>
            </tr>
          </thead>
          <tbody>
            ${apps.map(
              (a) =>
                html`<tr>
                  <th scope="row"><code>${a.clientId}</code></th>
                  <td>${a.name}</td>
                  <td>
                    ${a.isPublic ? t.t('console.apps.public') : t.t('console.apps.confidential', { auth: a.authMethod })}
                  </td>
                  <td>${a.grantTypes.join(', ')}</td>
                  <td>${a.loginStages.map((s) => s.join(' | ')).join(' → ') || '–'}</td>
                  <td>${a.redirectUris.map((u) => html`<div><code>${u}</code></div>`)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </section>`,
    );
  });

  site.get('/plugins', '/plugins', async (r) => {
    const t = r.t;
    const since = new Date(Date.now() - HEALTH_WINDOW_MS);
    let database: string | null = null;
    const started = process.hrtime.bigint();
    try {
      await deps.sql.select('SELECT 1');
    } catch (err) {
      database = (err as Error).message;
      r.req.log.warn({ err }, 'console health: database check failed');
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const count = (types: string[], method: string) => deps.events.count({ types, method, since });
    const methods = await Promise.all(
      deps.extensions.methods.ids().map(async (id) => ({
        id,
        ok: await count(['verification.success'], id),
        failed: await count(['verification.failure'], id),
      })),
    );
    // Deliveries are background jobs: their outcomes are events of every channel together.
    const deliveries = {
      done: await deps.events.count({ types: [`${DELIVERY_JOB}.done`], since }),
      failed: await deps.events.count({ types: [`${DELIVERY_JOB}.failed`], since }),
    };
    const body = html`<section class="panel" aria-labelledby="gh-health">
        <h2 id="gh-health">${t.t('console.health.title')}</h2>
        <dl class="facts">
          <dt>${t.t('console.health.database')}</dt>
          <dd>
            ${
              database === null
                ? html`<span class="badge ok">${t.t('console.health.ok')}</span>
                    ${t.t('console.health.ms', { ms: ms.toFixed(1) })}`
                : html`<span class="badge bad">${t.t('console.health.failing')}</span> ${database}`
            }
          </dd>
          <dt>${t.t('console.health.traffic')}</dt>
          <dd>
            ${
              deps.lifecycle.draining
                ? html`<span class="badge bad">${t.t('console.health.draining')}</span>`
                : html`<span class="badge ok">${t.t('console.health.serving')}</span>`
            }
          </dd>
        </dl>
      </section>
      <section class="panel" aria-labelledby="gh-plugins">
        <h2 id="gh-plugins">${t.t('console.plugins.loaded')}</h2>
        <table>
          <thead>
            <tr>
              <th scope="col">${t.t('console.col.plugin')}</th>
              <th scope="col">${t.t('console.col.version')}</th>
              <th scope="col">${t.t('console.col.contributes')}</th>
            </tr>
          </thead>
          <tbody>
            ${deps.loadedPlugins.map(
              (p) =>
                html`<tr>
                  <th scope="row"><code>${p.name}</code></th>
                  <td>${p.version}</td>
                  <td>
                    ${
                      Object.entries(p.contributes)
                        .filter(([, ids]) => ids.length)
                        .map(([kind, ids]) => `${kind}: ${ids.join(', ')}`)
                        .join('; ') || '–'
                    }
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>
      </section>
      <section class="panel" aria-labelledby="gh-method-health">
        <h2 id="gh-method-health">${t.t('console.health.methods')}</h2>
        <table>
          <thead>
            <tr>
              <th scope="col">${t.t('console.col.method')}</th>
              <th scope="col">${t.t('console.col.succeeded')}</th>
              <th scope="col">${t.t('console.col.failed')}</th>
            </tr>
          </thead>
          <tbody>
            ${methods.map(
              (m) =>
                html`<tr>
                  <th scope="row">${m.id}</th>
                  <td>${m.ok}</td>
                  <td>${m.failed}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        <h2>${t.t('console.health.deliveries')}</h2>
        <dl class="facts">
          <dt>${t.t('console.health.channels')}</dt>
          <dd>${deps.extensions.channels.ids().join(', ') || '–'}</dd>
          <dt>${t.t('console.col.delivered')}</dt>
          <dd>${deliveries.done}</dd>
          <dt>${t.t('console.col.failed')}</dt>
          <dd>${deliveries.failed}</dd>
        </dl>
        <p class="muted">${t.t('console.health.window')}</p>
      </section>`;
    site.render(r, t.t('console.plugins.title'), body);
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

function statusBadge(t: SiteRequest['t'], status: UserRecord['status']) {
  return html`<span class="badge ${status === 'active' ? 'ok' : 'bad'}">${t.t(`console.status.${status}`)}</span>`;
}

/** Links to the previous and next page of a list, keeping its query. */
function pager(t: SiteRequest['t'], path: string, q: string, paging: { page: number; more: boolean }) {
  if (paging.page === 1 && !paging.more) return html``;
  const href = (page: number) =>
    `${path}?${new URLSearchParams({ ...(q ? { q } : {}), page: String(page) }).toString()}`;
  return html`<nav class="pager" aria-label="${t.t('console.users.pages')}">
    ${paging.page > 1 ? html`<a href="${href(paging.page - 1)}" rel="prev">${t.t('console.users.previous')}</a>` : ''}
    <span>${t.t('console.users.page', { page: paging.page })}</span>
    ${paging.more ? html`<a href="${href(paging.page + 1)}" rel="next">${t.t('console.users.next')}</a>` : ''}
  </nav>`;
}

function usersPage(
  r: SiteRequest,
  base: string,
  q: string,
  users: UserRecord[],
  paging: { page: number; more: boolean },
) {
  const t = r.t;
  return html`<section class="panel" aria-labelledby="gh-find">
      <h2 id="gh-find">${t.t('console.users.find')}</h2>
      <form method="get" action="${base}/users" role="search" class="row">
        <div>
          <label for="gh-q">${t.t('console.users.query')}</label>
          <input type="search" id="gh-q" name="q" value="${q}" autocomplete="off" />
        </div>
        <button type="submit" class="primary">${t.t('console.users.search')}</button>
      </form>
    </section>
    <section class="panel" aria-labelledby="gh-list">
      <h2 id="gh-list">${q ? t.t('console.users.results', { q }) : t.t('console.users.all')}</h2>
      ${
        users.length
          ? html`<table>
              <thead>
                <tr>
                  <th scope="col">${t.t('console.user.username')}</th>
                  <th scope="col">${t.t('console.user.email')}</th>
                  <th scope="col">${t.t('console.user.phone')}</th>
                  <th scope="col">${t.t('console.user.status')}</th>
                </tr>
              </thead>
              <tbody>
                ${users.map(
                  (u) =>
                    html`<tr>
                      <th scope="row"><a href="${base}/users/${encodeURIComponent(u.id)}">${u.username}</a></th>
                      <td>${u.email ?? '–'}</td>
                      <td>${u.phone ?? '–'}</td>
                      <td>${statusBadge(t, u.status)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
          : html`<p class="empty">${t.t('console.users.none')}</p>`
      }
      ${pager(t, `${base}/users`, q, paging)}
    </section>
    <section class="panel" aria-labelledby="gh-create">
      <h2 id="gh-create">${t.t('console.users.create')}</h2>
      <form method="post" action="${base}/users" class="row">
        ${csrfField(r.session.csrf)}
        <div>
          <label for="gh-new-username">${t.t('console.user.username')}</label>
          <input
            type="text"
            id="gh-new-username"
            name="username"
            required
            autocomplete="off"
            autocapitalize="off"
            spellcheck="false"
          />
        </div>
        <div>
          <label for="gh-new-email">${t.t('console.user.email')}</label>
          <input type="email" id="gh-new-email" name="email" autocomplete="off" />
        </div>
        <div>
          <label for="gh-new-phone">${t.t('console.user.phone')}</label>
          <input type="tel" id="gh-new-phone" name="phone" autocomplete="off" placeholder="+15551234567" />
        </div>
        <button type="submit" class="primary">${t.t('console.users.create_button')}</button>
      </form>
    </section>`;
}
