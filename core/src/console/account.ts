import type { Router } from 'express';
import { ACCOUNT_CLIENT_ID } from '../config/schema.js';
import { ApiError } from '../errors.js';
import type { DeviceCookie } from '../http/device.js';
import type { Locales } from '../i18n/locales.js';
import { html } from '../login/html.js';
import type { SessionStore } from '../oauth/sessions.js';
import type { History, JsonObject } from '../plugins/extensions.js';
import type { Extensions } from '../plugins/loader.js';
import type { DeviceStore } from '../devices/store.js';
import type { EnrollmentService } from '../verification/enrollment.js';
import { requestFacts } from '../verification/context.js';
import { lastWaysIn, type AccountActions, type MethodState } from './actions.js';
import { actionForm, when } from './layout.js';
import { devicesTable } from './user-view.js';
import type { SiteSignIn } from './signin.js';
import { methodLabel, Site, type SiteRequest } from './site.js';

/** What the account page uses (the container's cradle provides it). */
export interface AccountPageDeps {
  config: { apps: { client_id: string; login_stages: string[][] }[] };
  issuerPath: string;
  locales: Locales;
  accountSignIn: SiteSignIn;
  accountActions: AccountActions;
  sessions: SessionStore;
  devices: DeviceStore;
  enrollment: EnrollmentService;
  events: History;
  extensions: Extensions;
  device: DeviceCookie;
}

/** Sign-ins the page lists. */
const RECENT_SIGN_INS = 10;

/**
 * The account page: a signed-in user's methods (backup codes renewed, credentials such as
 * passkeys removed), bound devices, sessions ("sign out everywhere else") and recent sign-ins.
 * Removing a way to sign in ends the user's sessions, as the setup API does: this page's too.
 */
export function accountRoutes(deps: AccountPageDeps): Router {
  const site = new Site({
    signIn: deps.accountSignIn,
    locales: deps.locales,
    issuerPath: deps.issuerPath,
    via: 'account',
    titleKey: 'myaccount.title',
    nav: [],
    allowed: () => true,
  });
  const actions = deps.accountActions;
  const base = site.href;
  const facts = (r: SiteRequest) => requestFacts(r.req, undefined, deps.device);
  const stages = deps.config.apps.find((a) => a.client_id === ACCOUNT_CLIENT_ID)?.login_stages ?? [];

  site.get('', '', async (r) => {
    const { user, csrf } = r.session;
    const t = r.t;
    const [methods, devices, sessions, signIns] = await Promise.all([
      deps.enrollment.list(user, facts(r), r.req.log),
      deps.devices.ofUser(user.id),
      deps.sessions.ofUser(user.id),
      deps.events.recent({ types: ['verification.success'], userId: user.id, limit: RECENT_SIGN_INS }),
    ]);
    const mine = methods.filter((m) => m.enrolled || (m.credentials as JsonObject[]).length > 0);
    const needed = lastWaysIn(methods as unknown as MethodState[], stages);
    const others = sessions.filter((s) => s.sid !== r.session.sid);
    const label = (id: string) => methodLabel(t, deps.extensions.methods.get(id), id);
    const body = html`${site.doneNotice(r, 'myaccount')}
      <section class="panel" aria-labelledby="gh-methods">
        <h2 id="gh-methods">${t.t('myaccount.methods')}</h2>
        ${
          mine.length
            ? html`<table>
                  <thead>
                    <tr>
                      <th scope="col">${t.t('console.col.method')}</th>
                      <th scope="col">${t.t('console.col.credentials')}</th>
                      <th scope="col">${t.t('console.col.actions')}</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${mine.map((m) => {
                      const id = String(m.method);
                      const creds = m.credentials as JsonObject[];
                      const renew = deps.extensions.methods.get(id)?.page?.renew;
                      if (renew) {
                        return html`<tr>
                          <th scope="row" id="gh-m-${id}">${label(id)}</th>
                          <td>
                            ${t.t('myaccount.unused', { left: creds.filter((c) => !c.used).length, all: creds.length })}
                          </td>
                          <td>
                            <p class="muted" id="gh-m-${id}-text">${t.or(`method.${id}.renew.text`, renew.text)}</p>
                            ${actionForm(`${base}/methods/${encodeURIComponent(id)}/renew`, csrf, t.or(`method.${id}.renew.button`, renew.button), { describedBy: `gh-m-${id}-text` })}
                          </td>
                        </tr>`;
                      }
                      return creds.map(
                        (c, i) =>
                          html`<tr>
                            ${i === 0 ? html`<th scope="row" rowspan="${creds.length}" id="gh-m-${id}">${label(id)}</th>` : ''}
                            <td id="gh-c-${String(c.id)}">
                              ${c.label ? html`${String(c.label)} ` : ''}<span class="muted"
                                >${t.t('myaccount.added', { when: when(new Date(String(c.created_at))) })}</span
                              >
                            </td>
                            <td>
                              ${
                                needed.has(id)
                                  ? html`<span class="muted">${t.t('myaccount.needed')}</span>`
                                  : actionForm(`${base}/credentials/remove`, csrf, t.t('console.remove'), {
                                      danger: true,
                                      fields: { method: id, credential: String(c.id) },
                                      describedBy: `gh-m-${id} gh-c-${String(c.id)}`,
                                    })
                              }
                            </td>
                          </tr>`,
                      );
                    })}
                  </tbody>
                </table>
                <p class="muted">${t.t('myaccount.remove_note')}</p>`
            : html`<p class="empty">${t.t('myaccount.no_methods')}</p>`
        }
      </section>
      <section class="panel" aria-labelledby="gh-devices">
        <h2 id="gh-devices">${t.t('myaccount.devices')}</h2>
        ${devicesTable(t, devices, base, csrf, t.t('myaccount.no_devices'))}
      </section>
      <section class="panel" aria-labelledby="gh-sessions">
        <h2 id="gh-sessions">${t.t('myaccount.sessions')}</h2>
        <table>
          <thead>
            <tr>
              <th scope="col">${t.t('console.col.signed_in')}</th>
              <th scope="col">${t.t('console.col.methods')}</th>
              <th scope="col">${t.t('console.col.expires')}</th>
            </tr>
          </thead>
          <tbody>
            ${sessions.map(
              (s) =>
                html`<tr>
                  <th scope="row">
                    ${when(s.authTime * 1000)}
                    ${s.sid === r.session.sid ? html` <span class="badge ok">${t.t('myaccount.this_browser')}</span>` : ''}
                  </th>
                  <td>${s.methods.map((m) => label(m.method)).join(', ') || s.amr.join(', ')}</td>
                  <td>${when(s.expiresAt)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${
          others.length
            ? html`<div class="actions">
                ${actionForm(`${base}/sessions/end-others`, csrf, t.t('myaccount.end_others', { count: others.length }), { danger: true })}
              </div>`
            : html`<p class="muted">${t.t('myaccount.no_others')}</p>`
        }
      </section>
      <section class="panel" aria-labelledby="gh-sign-ins">
        <h2 id="gh-sign-ins">${t.t('myaccount.sign_ins')}</h2>
        ${
          signIns.length
            ? html`<table>
                <thead>
                  <tr>
                    <th scope="col">${t.t('console.col.when')}</th>
                    <th scope="col">${t.t('console.col.method')}</th>
                    <th scope="col">${t.t('console.col.app')}</th>
                    <th scope="col">${t.t('console.col.address')}</th>
                  </tr>
                </thead>
                <tbody>
                  ${signIns.map(
                    (e) =>
                      html`<tr>
                        <td>${when(e.at)}</td>
                        <td>${e.method ? label(e.method) : '–'}</td>
                        <td>${e.clientId ?? '–'}</td>
                        <td>${e.ip ?? '–'}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
            : html`<p class="empty">${t.t('myaccount.no_sign_ins')}</p>`
        }
      </section>`;
    site.render(r, t.t('myaccount.heading', { name: user.username }), body);
  });

  site.post('/methods/:method/renew', '', async (r) => {
    const id = String(r.req.params.method);
    const method = deps.extensions.methods.get(id);
    if (!method?.page?.renew) return site.refuse(r, 404, r.t.t('console.user.no_such_method'));
    const answer = await actions.renew(r.actor, r.session.user, id, facts(r), r.req.log);
    const codes = Array.isArray(answer.codes) ? answer.codes.filter((c): c is string => typeof c === 'string') : [];
    site.render(
      r,
      methodLabel(r.t, method, id),
      html`<section class="panel">
        <p role="status">${r.t.t('myaccount.codes_intro')}</p>
        <ol class="codes" id="gh-codes">
          ${codes.map((c) => html`<li><code>${c}</code></li>`)}
        </ol>
        <p><a href="${base}" id="gh-back">${r.t.t('myaccount.codes_saved')}</a></p>
      </section>`,
    );
  });

  site.post('/credentials/remove', '', async (r) => {
    const body = r.req.body as Record<string, unknown>;
    const method = typeof body.method === 'string' ? body.method : '';
    const credential = typeof body.credential === 'string' ? body.credential : '';
    if (!deps.extensions.methods.has(method) || !credential || credential.length > 100) {
      return site.refuse(r, 404, r.t.t('myaccount.no_such_credential'));
    }
    const methods = await deps.enrollment.list(r.session.user, facts(r), r.req.log);
    if (lastWaysIn(methods as unknown as MethodState[], stages).has(method)) {
      return site.refuse(r, 409, r.t.t('myaccount.needed_text'));
    }
    try {
      await actions.removeCredential(r.actor, r.session.user, method, credential);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404)
        return site.refuse(r, 404, r.t.t('myaccount.no_such_credential'));
      throw err;
    }
    // The removal ended this browser's session too: the page asks for a sign-in, then says so.
    site.done(r, '', 'credential_removed');
  });

  site.post('/devices/:device/remove', '', async (r) => {
    if (!(await actions.removeDevice(r.actor, r.session.user, String(r.req.params.device)))) {
      return site.refuse(r, 404, r.t.t('console.user.no_such_device'));
    }
    site.done(r, '', 'device_removed');
  });

  site.post('/sessions/end-others', '', async (r) => {
    const live = (await deps.sessions.ofUser(r.session.user.id)).map((s) => s.sid);
    const ended = await actions.endSessions(r.actor, r.session.user, live, r.session.sid);
    site.done(r, '', ended ? 'others_ended' : 'no_others');
  });

  return site.router;
}
