import { html, type PageContext } from '@gatehouse-auth/plugin-api';
import { layout, renderErrorPage } from '../login/layout.js';

/**
 * The binding link opened in a browser instead of the app: its QR code, to scan with the app
 * from here, and the link as text to copy; for a code that is no longer live, a page saying so.
 */
export function renderBindingLinkPage(page: PageContext, live: { link: string; qr: string } | null): string {
  const t = page.t;
  if (!live) return renderErrorPage(page, t.t('device_link.expired.title'), t.t('device_link.expired.text'));
  const title = t.t('device_link.title');
  const body = html`<main class="card">
    <h1>${title}</h1>
    <p>${t.t('device_link.text')}</p>
    <p class="qr"><img id="gh-qr" src="${live.qr}" alt="${t.t('device_link.qr_alt')}" width="240" height="240" /></p>
    <p class="note" id="gh-binding-link-label">${t.t('device_link.copy')}</p>
    <p><code class="copy" id="gh-binding-link" aria-labelledby="gh-binding-link-label">${live.link}</code></p>
  </main>`;
  return layout(page, title, body, null);
}
