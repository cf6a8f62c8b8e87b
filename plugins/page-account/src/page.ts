import { html, isProtocolError, type JsonObject, type PluginApi, type UserAccounts } from '@gatehouse-auth/core';
import { actionForm, devicesTable, Site, when, type SiteRequest } from '@gatehouse-auth/site-kit';
import { accountActions } from './actions.js';
import { addressRoutes } from './address.js';
import { ActionGuard } from './guard.js';
import { addsMore, setupRoutes } from './setup.js';

/** What one method of a user is, as `UserAccounts.methods` lists it. */
export interface MethodState {
  method: string;
  enrolled: boolean;
  credentials: unknown[];
}

/**
 * The methods whose last credential the user may not remove: without it, some stage of
 * `stages` (the account page's own sign-in) would have no method the user has set up, and the
 * user could not sign in again. A method with several credentials (passkeys) loses one safely.
 */
export function lastWaysIn(methods: MethodState[], stages: string[][]): Set<string> {
  const enrolled = new Set(methods.filter((m) => m.enrolled).map((m) => m.method));
  const needed = new Set<string>();
  for (const m of methods) {
    if (!m.enrolled || m.credentials.length > 1) continue;
    const without = new Set([...enrolled].filter((id) => id !== m.method));
    if (stages.some((stage) => stage.includes(m.method) && !stage.some((id) => without.has(id)))) {
      needed.add(m.method);
    }
  }
  return needed;
}

/** Sign-ins the page lists. */
const RECENT_SIGN_INS = 10;

/**
 * The account page: a signed-in user's methods (backup codes renewed, credentials such as
 * passkeys removed), bound devices, sessions ("sign out everywhere else") and recent sign-ins.
 * Removing a way to sign in ends the user's sessions, as the setup API does: this page's too.
 */
export function accountPage(
  api: PluginApi,
  opts: {
    path: string;
    clientId: string;
    login_stages: string[][];
    session_ttl: number;
    setup_max_age: number;
    add_methods?: string[] | undefined;
    deletion_grace: number;
    deletion_sweep: number;
    address_code_ttl: number;
  },
): void {
  const site = new Site(api, {
    clientId: opts.clientId,
    path: opts.path,
    cookie: 'gh_account',
    ttlSeconds: opts.session_ttl,
    maxAge: null,
    via: 'account',
    titleKey: 'myaccount.title',
    nav: [],
    allowed: () => true,
  });
  // Resolved at request time: the service is built once every plugin registered.
  const accounts = () => api.services.resolve<UserAccounts>('userAccounts');
  const base = site.href;
  const stages = opts.login_stages;
  const guard = new ActionGuard(api, opts.setup_max_age);
  // A sensitive action on an older sign-in: the hosted login again, factors no older than now.
  const freshLogin = (r: SiteRequest) => site.signIn.start(r.req, r.res, `${api.web.base}${r.req.originalUrl}`, 0);
  const { addable } = setupRoutes(api, site, guard, { addMethods: opts.add_methods, freshLogin });
  addressRoutes(api, site, guard, { codeTtlSeconds: opts.address_code_ttl, freshLogin });
  accountActions(api, site, guard, {
    graceSeconds: opts.deletion_grace,
    sweepSeconds: opts.deletion_sweep,
    freshLogin,
  });

  site.get('', '', async (r) => {
    const { user, csrf } = r.session;
    const t = r.t;
    const [methods, devices, sessions, signIns, canAdd] = await Promise.all([
      accounts().methods(user, r.req),
      accounts().devices(user.id),
      accounts().sessions(user.id),
      api.services.history.recent({ types: ['verification.success'], userId: user.id, limit: RECENT_SIGN_INS }),
      addable(r),
    ]);
    const enrolled = new Set(methods.filter((m) => m.enrolled === true).map((m) => String(m.method)));
    const mine = methods.filter((m) => m.enrolled || (m.credentials as JsonObject[]).length > 0);
    const needed = lastWaysIn(methods as unknown as MethodState[], stages);
    const others = sessions.filter((s) => s.sid !== r.session.sid);
    const label = (id: string) => accounts().method(id, r.req)?.label ?? id;
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
                      const renew = accounts().method(id, r.req)?.renew;
                      if (renew) {
                        return html`<tr>
                          <th scope="row" id="gh-m-${id}">${label(id)}</th>
                          <td>
                            ${t.t('myaccount.unused', { left: creds.filter((c) => !c.used).length, all: creds.length })}
                          </td>
                          <td>
                            <p class="muted" id="gh-m-${id}-text">${renew.text}</p>
                            ${actionForm(`${base}/methods/${encodeURIComponent(id)}/renew`, csrf, renew.button, { describedBy: `gh-m-${id}-text` })}
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
      <section class="panel" aria-labelledby="gh-add">
        <h2 id="gh-add">${t.t('myaccount.add.title')}</h2>
        <p class="muted">${t.t('myaccount.add.note')}</p>
        <ul class="links">
          ${canAdd
            .filter((m) => addsMore(m) || !enrolled.has(m.id))
            .map(
              (m) =>
                html`<li>
                  <a href="${base}/add/${encodeURIComponent(m.id)}" id="gh-add-${m.id}"
                    >${t.t('myaccount.add.link', { method: label(m.id) })}</a
                  >
                </li>`,
            )}
        </ul>
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
      </section>
      <section class="panel" aria-labelledby="gh-account">
        <h2 id="gh-account">${t.t('myaccount.account')}</h2>
        <ul class="links">
          <li><a href="${base}/password" id="gh-password">${t.t('myaccount.password.link')}</a></li>
          <li>
            <a href="${base}/address/email" id="gh-email">${t.t('myaccount.address.link_email')}</a>
            <span class="muted">${user.email ?? '–'}</span>
          </li>
          <li>
            <a href="${base}/address/phone" id="gh-phone">${t.t('myaccount.address.link_phone')}</a>
            <span class="muted">${user.phone ?? '–'}</span>
          </li>
          <li><a href="${base}/delete" id="gh-delete-link">${t.t('myaccount.delete.link')}</a></li>
        </ul>
      </section>`;
    site.render(r, t.t('myaccount.heading', { name: user.username }), body);
  });

  site.post('/methods/:method/renew', '', async (r) => {
    const id = String(r.req.params.method);
    const method = accounts().method(id, r.req);
    if (!method?.renew) return site.refuse(r, 404, r.t.t('console.user.no_such_method'));
    const answer = await accounts().renew(r.actor, r.session.user, id, r.req);
    const codes = Array.isArray(answer.codes) ? answer.codes.filter((c): c is string => typeof c === 'string') : [];
    site.render(
      r,
      method.label,
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
    if (!accounts().method(method, r.req) || !credential || credential.length > 100) {
      return site.refuse(r, 404, r.t.t('myaccount.no_such_credential'));
    }
    const methods = await accounts().methods(r.session.user, r.req);
    if (lastWaysIn(methods as unknown as MethodState[], stages).has(method)) {
      return site.refuse(r, 409, r.t.t('myaccount.needed_text'));
    }
    try {
      await accounts().removeCredential(r.actor, r.session.user, method, credential);
    } catch (err) {
      // isProtocolError, not instanceof: the error may come from another copy of the core.
      if (isProtocolError(err) && err.status === 404) return site.refuse(r, 404, r.t.t('myaccount.no_such_credential'));
      throw err;
    }
    // The removal ended this browser's session too: the page asks for a sign-in, then says so.
    site.done(r, '', 'credential_removed');
  });

  site.post('/devices/:device/remove', '', async (r) => {
    if (!(await accounts().removeDevice(r.actor, r.session.user, String(r.req.params.device)))) {
      return site.refuse(r, 404, r.t.t('console.user.no_such_device'));
    }
    site.done(r, '', 'device_removed');
  });

  site.post('/sessions/end-others', '', async (r) => {
    const live = (await accounts().sessions(r.session.user.id)).map((s) => s.sid);
    const ended = await accounts().endSessions(r.actor, r.session.user, live, r.session.sid);
    site.done(r, '', ended ? 'others_ended' : 'no_others');
  });
}
