import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { html, passwordReveal, type Brand, type DeviceListing, type SafeHtml, type WebApi } from '@gatehouse-auth/core';

/** The messages a page is written with (`web.messages(req)`). */
export type Messages = ReturnType<WebApi['messages']>;

/**
 * The style of the console and the account page. Every action is a plain form, so they work by
 * keyboard and under the login pages' CSP unchanged. A password field gets the core's Show / Hide
 * button (`passwordReveal`, same origin), which the form does not need.
 */
const CSS = readFileSync(new URL('../assets/site.css', import.meta.url), 'utf8');
export const SITE_CSS = { body: CSS, version: createHash('sha256').update(CSS).digest('hex').slice(0, 16) };

/** Where a site serves the style sheet, under its own path. */
export const CSS_PATH = '/assets/site.css';

/** What every page of a site is rendered with. */
export interface SitePage {
  /** The issuer's path ('' at the root). */
  base: string;
  t: Messages;
  /** The site's path ('/console', '/account'): links and forms start with base + root. */
  root: string;
  /** The site's name in the bar: 'console.title' or 'myaccount.title'. */
  titleKey: string;
  /** Its sections, as [path under the root, message key]; none for a page without a sign-in. */
  nav: [string, string][];
  /** The section shown (its path), for aria-current. */
  current?: string;
  /** Who is signed in, with the sign-out form's token. */
  who?: { name: string; csrf: string } | null;
  /** The global brand (`web.brand()`): logo and product name in the bar, color, support link. */
  brand?: Brand;
}

/** A hidden field with the sign-in's CSRF token: every POST form has one. */
export function csrfField(csrf: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${csrf}" />`;
}

/** A POST form of one button (an action on a row); `danger` styles it as destructive. */
export function actionForm(
  action: string,
  csrf: string,
  label: string,
  opts: { danger?: boolean; fields?: Record<string, string>; describedBy?: string } = {},
): SafeHtml {
  return html`<form method="post" action="${action}">
    ${csrfField(csrf)}
    ${Object.entries(opts.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
    <button
      type="submit"
      class="${opts.danger ? 'danger' : ''}"
      ${opts.describedBy ? html`aria-describedby="${opts.describedBy}"` : ''}
    >
      ${label}
    </button>
  </form>`;
}

/** A date and time as the page shows it (UTC, to the minute), or a dash. */
export function when(date: Date | number | null | undefined): string {
  if (date === null || date === undefined) return '–';
  const d = typeof date === 'number' ? new Date(date) : date;
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The page: the bar (site name, sections, who and sign-out), a skip link, then `body`. */
export function sitePage(page: SitePage, title: string, body: SafeHtml): string {
  const { base, root, t, brand } = page;
  const product = brand?.title ? `${brand.title} · ` : '';
  const logo = brand?.logo ? html`<img class="brand-logo" id="gh-brand-logo" src="${brand.logo}" alt="" />` : '';
  const bar = html`<header class="bar">
    <a class="brand" href="${base}${root}">${logo}${product}${t.t(page.titleKey)}</a>
    ${
      page.nav.length
        ? html`<nav aria-label="${t.t('site.sections')}">
            <ul>
              ${page.nav.map(
                ([path, key]) =>
                  html`<li>
                    <a href="${base}${root}${path}" ${page.current === path ? html`aria-current="page"` : ''}
                      >${t.t(key)}</a
                    >
                  </li>`,
              )}
            </ul>
          </nav>`
        : ''
    }
    ${
      page.who
        ? html`<form class="who" method="post" action="${base}${root}/sign-out">
            <span>${t.html('site.signed_in_as', { name: html`<strong>${page.who.name}</strong>` })}</span>
            ${csrfField(page.who.csrf)}
            <button type="submit" id="gh-sign-out">${t.t('site.sign_out')}</button>
          </form>`
        : ''
    }
  </header>`;
  return html`<!doctype html>
    <html lang="${t.locale}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${title} – ${product}${t.t(page.titleKey)}</title>
        <link rel="stylesheet" href="${base}${root}${CSS_PATH}?v=${SITE_CSS.version}" />
        ${passwordReveal({ base, t }, body)}
        ${brand?.stylesheet ? html`<link rel="stylesheet" href="${brand.stylesheet}" />` : ''}
      </head>
      <body>
        <a class="skip" href="#main">${t.t('site.skip')}</a>
        ${bar}
        <main id="main" tabindex="-1">
          <h1>${title}</h1>
          ${body}
        </main>
        ${brand?.supportUrl ? html`<footer class="site-footer"><a href="${brand.supportUrl}" id="gh-support">${t.t('brand.support')}</a></footer>` : ''}
      </body>
    </html>`.value;
}

/** A notice above the page's content: what the last action did, or why it did not. */
export function notice(text: string | null, error = false): SafeHtml {
  if (!text) return html``;
  return html`<p class="notice${error ? ' error' : ''}" role="${error ? 'alert' : 'status'}">${text}</p>`;
}

/**
 * A user's devices with a remove button each (under `actionBase`/devices/:id/remove), or
 * `empty`: the console's user view and the account page show the same list.
 */
export function devicesTable(
  t: Messages,
  devices: DeviceListing[],
  actionBase: string,
  csrf: string,
  empty: string,
  opts: { biometric?: boolean } = {},
): SafeHtml {
  if (!devices.length) return html`<p class="empty">${empty}</p>`;
  return html`<table>
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
              ${d.name}${opts.biometric && d.biometric ? html` <span class="badge">${t.t('console.user.biometric')}</span>` : ''}
            </th>
            <td>${when(d.createdAt)}</td>
            <td>${when(d.lastUsedAt)}</td>
            <td>
              ${actionForm(`${actionBase}/devices/${encodeURIComponent(d.deviceId)}/remove`, csrf, t.t('console.remove'), { danger: true, describedBy: `gh-d-${d.deviceId}` })}
            </td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}
