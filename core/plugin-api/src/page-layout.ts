import { html, type SafeHtml } from './html.js';
import type { Brand, PageContext } from './login.js';
import { FORM_POST_JS, LOGIN_CSS, PASSWORD_REVEAL_JS } from './page-assets.js';

/** The product name and logo above the page, when a brand names either. */
function brandBar(brand: Brand | undefined): SafeHtml | '' {
  if (!brand?.title && !brand?.logo) return '';
  return html`<header class="brand-bar">
    ${brand.logo ? html`<img class="brand-logo" id="gh-brand-logo" src="${brand.logo}" alt="${brand.title ?? ''}" />` : ''}
    ${brand.title ? html`<span class="brand-title" id="gh-brand-title" ${brand.logo ? html`aria-hidden="true"` : ''}>${brand.title}</span>` : ''}
  </header>`;
}

/** Where to get help, below the page, when the brand has a support link. */
function brandFooter(page: PageContext): SafeHtml | '' {
  const url = page.brand?.supportUrl;
  if (!url) return '';
  return html`<footer class="brand-footer"><a href="${url}" id="gh-support">${page.t.t('brand.support')}</a></footer>`;
}

/**
 * The hosted pages' skeleton (the OAuth pages, plugin pages through `api.web.page`, the hosted
 * login page): the shared style sheet and, for a form_post answer, its script; `head` adds a
 * page's own scripts.
 */
export function layout(
  page: PageContext,
  title: string,
  body: SafeHtml,
  script: 'form-post' | null,
  head: SafeHtml | '' = '',
): string {
  const base = page.base;
  const brand = page.brand;
  const branded = brand && (brand.title || brand.logo || brand.supportUrl);
  return html`<!doctype html>
    <html lang="${page.t.locale}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${title}${brand?.title ? ` – ${brand.title}` : ''}</title>
        <link rel="stylesheet" href="${base}/login/assets/login.css?v=${LOGIN_CSS.version}" />
        ${brand?.stylesheet ? html`<link rel="stylesheet" href="${brand.stylesheet}" />` : ''}
        ${script === 'form-post' ? html`<script src="${base}/login/assets/form-post.js?v=${FORM_POST_JS.version}" defer></script>` : ''}
        ${passwordReveal(page, body)} ${head}
      </head>
      <body${branded ? html` class="branded"` : ''}>
        ${brandBar(brand)} ${body} ${brandFooter(page)}
      </body>
    </html> `.value;
}

/**
 * Since plugin API 1.3: the script that puts a Show / Hide button beside each password field of
 * `body` (nothing when it has none), with its texts in the page's language: the page's catalog's
 * (the core's on its own pages, a deployment's `messages_dir` included; on a plugin's page, the
 * plugin's, over the core's built-in ones in its language: the core's `web.messages`). `layout` adds it
 * before a page's own scripts; a page with a skeleton of its own (the site kit's) adds it to
 * its head. Same origin: allowed by `script-src 'self'`.
 */
export function passwordReveal(page: PageContext, body: SafeHtml): SafeHtml | '' {
  if (!body.value.includes('type="password"')) return '';
  return html`<script
    src="${page.base}/login/assets/password-reveal.js?v=${PASSWORD_REVEAL_JS.version}"
    data-show="${page.t.t('password.show')}"
    data-hide="${page.t.t('password.hide')}"
    defer
  ></script>`;
}

/**
 * A page that explains why something cannot go on. It never redirects and runs no script.
 * Since plugin API 1.3: `reference` (the request id) is shown for the user to quote to support.
 */
export function renderErrorPage(page: PageContext, title: string, text: string, reference?: string): string {
  // The request id, as the logs have it: something to quote to support.
  const support = page.brand?.supportUrl;
  const ref = reference
    ? html`<p class="note reference">
        ${page.t.t('error.reference', { id: reference })}
        ${support ? html`<a href="${support}" id="gh-error-support">${page.t.t('error.support')}</a>` : ''}
      </p>`
    : '';
  const body = html`<main class="card">
    <h1>${title}</h1>
    <p>${text}</p>
    <p class="note">${page.t.t('error.note')}</p>
    ${ref}
  </main>`;
  return layout(page, title, body, null);
}

/** A short notice (done, cancelled): a title and a sentence, no script. */
export function renderNoticePage(page: PageContext, title: string, text: string): string {
  return layout(
    page,
    title,
    html`<main class="card">
      <h1>${title}</h1>
      <p>${text}</p>
    </main>`,
    null,
  );
}
