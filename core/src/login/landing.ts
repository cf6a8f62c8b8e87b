import { type Branding, html } from '@gatehouse-auth/plugin-api';
import express, { type Router } from 'express';
import type { Locales } from '../i18n/locales.js';
import { pageHeaders } from './headers.js';
import { layout } from './layout.js';

/** Where `@gatehouse-auth/page-account` mounts the account page: the landing page links it when a plugin serves it. */
export const ACCOUNT_PAGE_PATH = '/account';

/** The product name when the config gives none. */
const DEFAULT_TITLE = 'Gatehouse';

/**
 * `/` for a browser (issue 29): the product's name, the account page (when a plugin serves
 * `/account`) and the documentation (`branding.docs_url`, else the discovery document), in
 * the hosted layout and the browser's language. A request that prefers JSON (or says `*\/*`,
 * as API clients and curl do) still gets the JSON 404: no API lives at `/` (decision 54).
 */
export function landingRoutes(deps: {
  issuerPath: string;
  locales: Pick<Locales, 'for'>;
  branding: Pick<Branding, 'of'>;
  /** The paths plugins mounted routes at, read per request (plugins register before serving). */
  routePaths: () => string[];
}): Router {
  const router = express.Router();
  router.get('/', (req, res, next) => {
    if (req.accepts(['json', 'html']) !== 'html') return next();
    const base = deps.issuerPath;
    const brand = deps.branding.of(null);
    const t = deps.locales.for(req);
    const product = brand.title ?? DEFAULT_TITLE;
    const account = deps.routePaths().includes(ACCOUNT_PAGE_PATH);
    const docs = brand.docsUrl
      ? html`<a href="${brand.docsUrl}" id="gh-docs">${t.t('landing.docs')}</a>`
      : html`<a href="${base}/.well-known/openid-configuration" id="gh-docs">${t.t('landing.discovery')}</a>`;
    const body = html`<main class="card landing">
      <h1>${product}</h1>
      <p>${t.t('landing.intro', { product })}</p>
      <ul>
        ${account ? html`<li><a href="${base}${ACCOUNT_PAGE_PATH}" id="gh-account">${t.t('landing.account')}</a></li>` : ''}
        <li>${docs}</li>
      </ul>
    </main>`;
    pageHeaders(res, [], 'no-referrer', brand);
    res.vary('Accept').vary('Accept-Language');
    res.send(layout({ base, t, brand }, brand.title ? t.t('landing.title') : product, body, null));
  });
  return router;
}
