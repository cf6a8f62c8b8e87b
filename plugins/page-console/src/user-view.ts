import {
  html,
  type DeviceListing,
  type JsonObject,
  type SafeHtml,
  type Session,
  type StoredEvent,
  type UserRecord,
} from '@gatehouse-auth/core';
import { actionForm, csrfField, devicesTable, when, type Messages } from '@gatehouse-auth/site-kit';
import { foldVerdicts, type EventRow } from './events.js';

/** What the console's page of one user shows. */
export interface UserDetailView {
  t: Messages;
  csrf: string;
  /** What the last action did, if anything. */
  notice: SafeHtml;
  /** The user's page (actions are under it). */
  path: string;
  user: UserRecord;
  /** The methods set up or with credentials, as management's `methodSetup.list` gives them. */
  methods: JsonObject[];
  devices: DeviceListing[];
  sessions: Session[];
  /** The apps of each session, in the order of `sessions`. */
  clientsOf: string[][];
  events: StoredEvent[];
  /** A method's name for people. */
  label(id: string): string;
  /** What the user must do at their next sign-in (plugin API 1.3). */
  requiredActions: readonly string[];
  /** Whether an invitation can be sent (the invitations plugin is loaded and the user has an email). */
  canInvite: boolean;
}

/** The actions an admin may require at the next sign-in, in the order the form lists them. */
const REQUIRED = ['change_password', 'second_factor'] as const;

/** What the user must do at their next sign-in, and an invitation by email. */
function nextSignIn(v: UserDetailView): SafeHtml {
  const { t, csrf, path } = v;
  return html`<section class="panel" aria-labelledby="gh-required">
    <h2 id="gh-required">${t.t('console.user.required')}</h2>
    <form method="post" action="${path}/required-actions">
      ${csrfField(csrf)}
      <fieldset>
        <legend>${t.t('console.user.required_legend')}</legend>
        ${REQUIRED.map(
          (action) =>
            html`<label class="choice"
              ><input
                type="checkbox"
                name="actions"
                value="${action}"
                ${v.requiredActions.includes(action) ? html` checked` : ''}
              />
              ${t.t(`console.user.required.${action}`)}</label
            >`,
        )}
      </fieldset>
      <button type="submit">${t.t('console.user.required_save')}</button>
    </form>
    ${
      v.canInvite
        ? html`<p class="note">${t.t('console.user.invite_note')}</p>
            ${actionForm(`${path}/invite`, csrf, t.t('console.user.invite'))}`
        : ''
    }
  </section>`;
}

/** The console's page of one user: account and actions, methods, devices, sessions, events. */
export function userDetail(v: UserDetailView): SafeHtml {
  const { t, csrf, path, user } = v;
  return html`${v.notice}
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
        ${v.sessions.length ? actionForm(`${path}/sessions/end`, csrf, t.t('console.user.end_sessions'), { danger: true }) : ''}
      </div>
    </section>
    ${nextSignIn(v)}
    <section class="panel" aria-labelledby="gh-methods">
      <h2 id="gh-methods">${t.t('console.user.methods')}</h2>
      ${
        v.methods.length
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
                ${v.methods.map((m) => {
                  const id = String(m.method);
                  const creds = m.credentials as JsonObject[];
                  return html`<tr>
                    <th scope="row" id="gh-m-${id}">${v.label(id)}</th>
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
      ${devicesTable(t, v.devices, path, csrf, t.t('console.user.no_devices'), { biometric: true })}
    </section>
    <section class="panel" aria-labelledby="gh-sessions">
      <h2 id="gh-sessions">${t.t('console.user.sessions')}</h2>
      ${
        v.sessions.length
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
                ${v.sessions.map(
                  (s, i) =>
                    html`<tr>
                      <th scope="row" id="gh-s-${i}">${when(s.authTime * 1000)}</th>
                      <td>${s.methods.map((m) => v.label(m.method)).join(', ') || s.amr.join(', ')}</td>
                      <td>${v.clientsOf[i]!.join(', ') || '–'}</td>
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
        v.events.length
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
                ${foldVerdicts(v.events).map(
                  (e) =>
                    html`<tr>
                      <td>${when(e.at)}</td>
                      <td><code>${e.type}</code>${e.count > 1 ? ` ×${e.count}` : ''}${verdictList(t, e)}</td>
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
}

/** The FDS rules' verdicts folded under an event: a disclosure, closed (no script needed). */
function verdictList(t: Messages, e: EventRow): SafeHtml | string {
  if (!e.verdicts.length) return '';
  return html`<details class="verdicts">
    <summary>${t.t('console.user.fds_verdicts', { count: e.verdicts.length })}</summary>
    <ul>
      ${e.verdicts.map(
        (v) =>
          html`<li>
            <code>${String(v.data.rule ?? '?')}</code> ${v.outcome ?? '–'}${v.reason ? `: ${v.reason}` : ''}
          </li>`,
      )}
    </ul>
  </details>`;
}

export function statusBadge(t: Messages, status: UserRecord['status']) {
  return html`<span class="badge ${status === 'active' ? 'ok' : 'bad'}">${t.t(`console.status.${status}`)}</span>`;
}

/** Links to the previous and next page of a list, keeping its query. */
function pager(t: Messages, path: string, q: string, paging: { page: number; more: boolean }) {
  if (paging.page === 1 && !paging.more) return html``;
  const href = (page: number) =>
    `${path}?${new URLSearchParams({ ...(q ? { q } : {}), page: String(page) }).toString()}`;
  return html`<nav class="pager" aria-label="${t.t('console.users.pages')}">
    ${paging.page > 1 ? html`<a href="${href(paging.page - 1)}" rel="prev">${t.t('console.users.previous')}</a>` : ''}
    <span>${t.t('console.users.page', { page: paging.page })}</span>
    ${paging.more ? html`<a href="${href(paging.page + 1)}" rel="next">${t.t('console.users.next')}</a>` : ''}
  </nav>`;
}

export function usersPage(
  view: { t: Messages; csrf: string },
  base: string,
  q: string,
  users: UserRecord[],
  paging: { page: number; more: boolean },
) {
  const { t } = view;
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
        ${csrfField(view.csrf)}
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
