import { html, type AppListing, type SafeHtml } from '@gatehouse-auth/core';
import { actionForm, csrfField, notice, type Messages } from '@gatehouse-auth/site-kit';

/** What the apps pages show. */
export interface AppsView {
  t: Messages;
  csrf: string;
  /** The console's base path. */
  base: string;
  notice?: SafeHtml;
}

const lines = (values: unknown): string => (Array.isArray(values) ? values.map(String).join('\n') : '');
const words = (values: unknown): string => (Array.isArray(values) ? values.map(String).join(' ') : '');

/** The apps page: every app (the config's read-only), and a form to store a new one. */
export function appsPage(v: AppsView, apps: AppListing[]): SafeHtml {
  const { t, base } = v;
  return html`${v.notice ?? ''}
    <section class="panel">
      <table>
        <thead>
          <tr>
            <th scope="col">${t.t('console.col.client_id')}</th>
            <th scope="col">${t.t('console.col.name')}</th>
            <th scope="col">${t.t('console.col.source')}</th>
            <th scope="col">${t.t('console.col.client_type')}</th>
            <th scope="col">${t.t('console.col.grants')}</th>
            <th scope="col">${t.t('console.col.redirects')}</th>
          </tr>
        </thead>
        <tbody>
          ${apps.map(
            (a) =>
              html`<tr>
                <th scope="row">
                  <a href="${base}/apps/${encodeURIComponent(a.client_id)}"><code>${a.client_id}</code></a>
                </th>
                <td>${a.name}</td>
                <td>${t.t(`console.apps.source.${a.source}`)}</td>
                <td>
                  ${
                    a.token_endpoint_auth_method === 'none'
                      ? t.t('console.apps.public')
                      : t.t('console.apps.confidential', { auth: a.token_endpoint_auth_method })
                  }
                </td>
                <td>${words(a.app.grant_types) || 'authorization_code'}</td>
                <td>
                  ${(a.app.redirect_uris as string[] | undefined)?.map((u) => html`<div><code>${u}</code></div>`) ?? ''}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </section>
    <section class="panel" aria-labelledby="gh-new-app">
      <h2 id="gh-new-app">${t.t('console.apps.create')}</h2>
      <p>${t.t('console.apps.create_hint')}</p>
      <form method="post" action="${base}/apps">
        ${csrfField(v.csrf)}
        <div>
          <label for="gh-app-id">${t.t('console.apps.client_id')}</label>
          <input type="text" id="gh-app-id" name="client_id" autocomplete="off" spellcheck="false" />
        </div>
        <div>
          <label for="gh-app-name">${t.t('console.col.name')}</label>
          <input type="text" id="gh-app-name" name="name" autocomplete="off" />
        </div>
        <div>
          <label for="gh-app-type">${t.t('console.col.client_type')}</label>
          <select id="gh-app-type" name="type">
            <option value="confidential">${t.t('console.apps.type.confidential')}</option>
            <option value="public">${t.t('console.apps.public')}</option>
          </select>
        </div>
        ${entryFields(t, 'gh-app', { grant_types: ['authorization_code'], scopes: ['openid'] })}
        <button type="submit" class="primary">${t.t('console.apps.create_button')}</button>
      </form>
    </section>`;
}

/** The fields both forms have: grant types, redirect URIs (one a line), scopes. */
function entryFields(t: Messages, id: string, entry: Record<string, unknown>): SafeHtml {
  return html`<div>
      <label for="${id}-grants">${t.t('console.col.grants')}</label>
      <input type="text" id="${id}-grants" name="grant_types" value="${words(entry.grant_types)}" spellcheck="false" />
    </div>
    <div>
      <label for="${id}-redirects">${t.t('console.apps.redirect_uris')}</label>
      <textarea id="${id}-redirects" name="redirect_uris" rows="3" spellcheck="false">
${lines(entry.redirect_uris)}</textarea>
    </div>
    <div>
      <label for="${id}-scopes">${t.t('console.apps.scopes')}</label>
      <input type="text" id="${id}-scopes" name="scopes" value="${words(entry.scopes)}" spellcheck="false" />
    </div>`;
}

/**
 * One app: what it is, and for a database app the forms to change it, rotate its secret and
 * delete it. `secret`: a secret just made, shown this once.
 */
export function appPage(v: AppsView, app: AppListing, secret: string | null = null): SafeHtml {
  const { t, base, csrf } = v;
  const path = `${base}/apps/${encodeURIComponent(app.client_id)}`;
  const facts = html`<dl>
    <dt>${t.t('console.col.client_id')}</dt>
    <dd><code>${app.client_id}</code></dd>
    <dt>${t.t('console.col.source')}</dt>
    <dd>${t.t(`console.apps.source.${app.source}`)}</dd>
    <dt>${t.t('console.col.client_type')}</dt>
    <dd>
      ${
        app.token_endpoint_auth_method === 'none'
          ? t.t('console.apps.public')
          : t.t('console.apps.confidential', { auth: app.token_endpoint_auth_method })
      }
    </dd>
    ${
      app.previous_secret_expires_at
        ? html`<dt>${t.t('console.apps.previous_secret')}</dt>
            <dd>${t.t('console.apps.previous_until', { until: app.previous_secret_expires_at })}</dd>`
        : ''
    }
  </dl>`;
  const shown = secret
    ? html`<section class="panel" aria-labelledby="gh-secret">
        <h2 id="gh-secret">${t.t('console.apps.secret')}</h2>
        ${notice(t.t('console.apps.secret_once'))}
        <p><code id="gh-secret-value">${secret}</code></p>
      </section>`
    : '';
  if (app.source === 'config') {
    return html`${v.notice ?? ''}${shown}
      <section class="panel">${facts}${notice(t.t('console.apps.read_only'))}</section>`;
  }
  return html`${v.notice ?? ''}${shown}
    <section class="panel">${facts}</section>
    <section class="panel" aria-labelledby="gh-edit-app">
      <h2 id="gh-edit-app">${t.t('console.apps.edit')}</h2>
      <form method="post" action="${path}">
        ${csrfField(csrf)}
        <div>
          <label for="gh-edit-name">${t.t('console.col.name')}</label>
          <input type="text" id="gh-edit-name" name="name" value="${app.name}" autocomplete="off" />
        </div>
        ${entryFields(t, 'gh-edit', app.app)}
        <button type="submit" class="primary">${t.t('console.apps.save')}</button>
      </form>
    </section>
    ${
      app.has_secret
        ? html`<section class="panel" aria-labelledby="gh-rotate">
            <h2 id="gh-rotate">${t.t('console.apps.rotate')}</h2>
            <form method="post" action="${path}/secret">
              ${csrfField(csrf)}
              <div>
                <label for="gh-overlap">${t.t('console.apps.overlap_hours')}</label>
                <input type="number" id="gh-overlap" name="overlap_hours" min="0" max="720" value="24" />
              </div>
              <button type="submit">${t.t('console.apps.rotate_button')}</button>
            </form>
          </section>`
        : ''
    }
    <section class="panel">
      ${actionForm(`${path}/delete`, csrf, t.t('console.apps.delete'), { danger: true })}
      <p>${t.t('console.apps.delete_hint')}</p>
    </section>`;
}

/** A form's list: one a line (redirect URIs) or separated by spaces or commas. */
export function formList(value: unknown, byLine = false): string[] {
  if (typeof value !== 'string') return [];
  return value
    .split(byLine ? /\r?\n/ : /[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}
