import { definePlugin, html, z, type PluginApi } from '@gatehouse-auth/core';
import { MESSAGES } from './messages.js';

/** The service an account page plugin provides (`@gatehouse-auth/page-account`): where it lives. */
export const ACCOUNT_PAGE_SERVICE = 'accountPage';

/** What the `accountPage` service tells: the page's path under the issuer (`/account`). */
export interface AccountPage {
  readonly path: string;
}

/** The product name when the brand gives none. */
const DEFAULT_TITLE = 'Gatehouse';

/** The account page's path, when a plugin provides one (resolved per request: plugins register before serving). */
function accountPath(api: PluginApi): string | null {
  try {
    return api.services.resolve<AccountPage>(ACCOUNT_PAGE_SERVICE).path;
  } catch {
    return null; // no plugin provides it
  }
}

/**
 * `/` for a browser (issue 29, decision 76): the product's name, the account page (when a plugin
 * provides the `accountPage` service) and the documentation (the brand's `docs_url`, else the
 * discovery document), in the hosted layout and the browser's language. A request that prefers
 * JSON (or says `*\/*`, as API clients and curl do) goes on to the JSON 404: no API lives at `/`
 * (decision 54). Written against the public plugin API only.
 */
export default definePlugin({
  name: '@gatehouse-auth/page-landing',
  apiVersion: '^1.3',
  options: z.strictObject({}),
  register(api) {
    const { web } = api;
    const base = web.base;
    api.messages(MESSAGES);
    const router = api.services.http.createRouter();
    router.get('/', (req, res, next) => {
      if (req.accepts(['json', 'html']) !== 'html') return next();
      const brand = web.brand(null);
      const t = web.messages(req);
      const product = brand.title ?? DEFAULT_TITLE;
      const account = accountPath(api);
      const docs = brand.docsUrl
        ? html`<a href="${brand.docsUrl}" id="gh-docs">${t.t('landing.docs')}</a>`
        : html`<a href="${base}/.well-known/openid-configuration" id="gh-docs">${t.t('landing.discovery')}</a>`;
      const body = html`<main class="card landing">
        <h1>${product}</h1>
        <p>${t.t('landing.intro', { product })}</p>
        <ul>
          ${account ? html`<li><a href="${base}${account}" id="gh-account">${t.t('landing.account')}</a></li>` : ''}
          <li>${docs}</li>
        </ul>
      </main>`;
      res.vary('Accept').vary('Accept-Language');
      // With a brand the layout adds the product to the title ("Welcome – Acme"); without, the product is the title.
      web.page(req, res, { title: brand.title ? t.t('landing.title') : product, body, referrer: 'no-referrer' });
    });
    api.routes.add({ path: '/', router });
  },
});
