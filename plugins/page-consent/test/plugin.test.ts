/**
 * Decision 75: what page-consent registers. Its pages on a server (the consent, the account
 * choice, their checks) are tested in test/oauth/authorize.test.ts and
 * test/oauth/hints-and-locales.test.ts, which list the plugin.
 */
import { expect } from 'chai';
import { registerWithFakes } from '@gatehouse-auth/testing';
import pageConsent, { ACCOUNT_PATH, CONSENT_PATH } from '../src/index.js';

describe('@gatehouse-auth/page-consent registers', function () {
  it('a route at each page’s path, where the core sends the browser, and nothing else', async function () {
    const registered = await registerWithFakes(pageConsent);
    expect(registered.routes.map((r) => r.path)).to.deep.equal([CONSENT_PATH, ACCOUNT_PATH]);
    expect([CONSENT_PATH, ACCOUNT_PATH]).to.deep.equal(['/login/consent', '/login/account']);
    expect(registered.methods).to.deep.equal([]);
    expect(registered.catalogs).to.deep.equal({ en: {} });
  });

  it('refuses options it does not know', async function () {
    let error: unknown;
    try {
      await registerWithFakes(pageConsent, { theme: 'dark' });
    } catch (err) {
      error = err;
    }
    expect(String(error)).to.match(/theme/);
  });
});
