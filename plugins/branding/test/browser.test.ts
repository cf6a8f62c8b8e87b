/**
 * Branding in Chromium (issue 29, decision 54): a branded app's login page shows its own logo
 * file (loaded), its title, its primary color on the button and the global support link; the
 * account page shows the global brand (logo, product name, color, support link); the landing
 * page's links lead to the account page and the discovery document, in English and German. No
 * page reports a CSP violation. Screenshots are saved to look at.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { requireChromium } from '../../../test/support/chromium.js';
import { startConsoleServer, userWithTotp } from '../../../test/oauth/console-support.js';
import { authorizePath, WEB_CB, type OAuthServer } from '../../../test/oauth/support.js';
import {
  openSiteBrowser,
  signInByKeyboard,
  type BrowserUser,
  type SiteBrowser,
} from '../../../test/browser/site-support.js';

const svg = (fill: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="48"><rect width="160" height="48" rx="8" fill="${fill}"/></svg>`;

/** The computed style of the first element matching `selector` (a string: the tests have no DOM types). */
function computed(page: Page, selector: string, property: string): Promise<string> {
  return page.evaluate(
    `getComputedStyle(document.querySelector(${JSON.stringify(selector)})).getPropertyValue(${JSON.stringify(property)})`,
  ) as Promise<string>;
}

/** Whether the image loaded: complete, with its own pixels. */
function imageLoaded(page: Page, selector: string): Promise<boolean> {
  return page.evaluate(
    `(() => { const img = document.querySelector(${JSON.stringify(selector)}); return Boolean(img && img.complete && img.naturalWidth > 0); })()`,
  ) as Promise<boolean>;
}

/** An authorization request of the branded app (a public client with PKCE). */
const SHOP_REQUEST = {
  response_type: 'code',
  client_id: 'shop',
  redirect_uri: WEB_CB,
  scope: 'openid',
  state: 'st-1234567890',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
};

describe('branding (Chromium)', function () {
  this.timeout(90_000);

  let dir: string;
  let server: OAuthServer;
  let browser: SiteBrowser | undefined;
  let page: Page;
  let watch: SiteBrowser['watch'];
  let shot: (name: string) => Promise<unknown>;
  let user: BrowserUser;

  before(async function () {
    requireChromium(this);
    dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-branding-'));
    writeFileSync(path.join(dir, 'acme.svg'), svg('#0b5d3b'));
    writeFileSync(path.join(dir, 'shop.svg'), svg('#5b2a86'));
    server = await startConsoleServer({
      plugins: [
        // The landing page at / (decision 76).
        { name: '@gatehouse-auth/page-landing' },
        {
          name: '@gatehouse-auth/branding',
          options: {
            title: 'Acme',
            logo: path.join(dir, 'acme.svg'),
            primary_color: '#0b5d3b',
            support_url: 'https://help.acme.example/',
          },
        },
      ],
      apps: [
        {
          client_id: 'shop',
          name: 'Acme Shop',
          token_endpoint_auth_method: 'none',
          redirect_uris: [WEB_CB],
          login_stages: [['PASSWORD']],
          branding: { title: 'Acme Shop', logo: path.join(dir, 'shop.svg'), primary_color: '#5b2a86' },
        },
      ],
    });
    user = await userWithTotp(server);
    browser = await openSiteBrowser('branding');
    ({ page, watch, shot } = browser);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("shows a branded app's logo, title, color and the support link on its login page", async () => {
    await page.goto(server.url(authorizePath(SHOP_REQUEST)));
    await page.waitForURL(/\/login\?request_id=/);
    expect(await page.title()).to.equal('Sign in to Acme Shop – Acme Shop');
    expect(await page.locator('#gh-brand-logo').getAttribute('src')).to.match(/^\/branding\/apps\/shop\/logo\?v=/);
    expect(await imageLoaded(page, '#gh-brand-logo')).to.equal(true);
    expect(await page.getByRole('img', { name: 'Acme Shop' }).count()).to.equal(1);
    expect(await computed(page, '#gh-submit', 'background-color')).to.equal('rgb(91, 42, 134)');
    const support = page.getByRole('link', { name: 'Help and support' });
    expect(await support.getAttribute('href')).to.equal('https://help.acme.example/');
    expect(await support.isVisible()).to.equal(true);
    expect(await watch.problems()).to.deep.equal([]);
    await shot('01-login-shop');
    // At a phone's width the logo and the footer fit: nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(390);
    await shot('01-login-shop-390');
    await page.setViewportSize({ width: 1280, height: 720 });
  });

  it('shows the global brand on the account page and its sign-in', async () => {
    await page.goto(server.url('/account'));
    await page.getByRole('textbox', { name: 'Username, email or phone' }).waitFor();
    // The account page's own login is not the shop's: the global brand.
    expect(await page.title()).to.equal('Sign in to Your account – Acme');
    expect(await computed(page, '#gh-submit', 'background-color')).to.equal('rgb(11, 93, 59)');
    expect(await imageLoaded(page, '#gh-brand-logo')).to.equal(true);
    await signInByKeyboard(page, user, /\/account$/);
    expect(await page.title()).to.equal(`Account of ${user.username} – Acme · Your account`);
    expect(await page.locator('header.bar .brand').innerText()).to.equal('Acme · Your account');
    expect(await page.locator('#gh-brand-logo').getAttribute('src')).to.match(/^\/branding\/logo\?v=/);
    expect(await imageLoaded(page, '#gh-brand-logo')).to.equal(true);
    // The account page has no primary button: its links wear the color.
    expect(await computed(page, '#gh-support', 'color')).to.equal('rgb(11, 93, 59)');
    expect(await page.getByRole('link', { name: 'Help and support' }).getAttribute('href')).to.equal(
      'https://help.acme.example/',
    );
    expect(await watch.problems()).to.deep.equal([]);
    await shot('02-account');
  });

  it("in German: the branded app's login page and the account page keep their brands", async () => {
    await page.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
    // Signed in already (the account page): prompt=login shows the login page anyway.
    await page.goto(server.url(authorizePath({ ...SHOP_REQUEST, state: 'st-de-1234567890', prompt: 'login' })));
    await page.waitForURL(/\/login\?request_id=/);
    expect(await page.title()).to.equal('Bei Acme Shop anmelden – Acme Shop');
    expect(await imageLoaded(page, '#gh-brand-logo')).to.equal(true);
    expect(await computed(page, '#gh-submit', 'background-color')).to.equal('rgb(91, 42, 134)');
    expect(await page.getByRole('link', { name: 'Hilfe und Support' }).getAttribute('href')).to.equal(
      'https://help.acme.example/',
    );
    await shot('04-login-shop-de');
    await page.goto(server.url('/account'));
    expect(await page.title()).to.equal(`Konto von ${user.username} – Acme · Ihr Konto`);
    expect(await imageLoaded(page, '#gh-brand-logo')).to.equal(true);
    expect(await computed(page, '#gh-support', 'color')).to.equal('rgb(11, 93, 59)');
    expect(await page.getByRole('link', { name: 'Hilfe und Support' }).count()).to.equal(1);
    expect(await watch.problems()).to.deep.equal([]);
    await shot('05-account-de');
  });

  for (const [lang, texts] of [
    [
      'en',
      {
        account: 'Manage your account: sign-in methods, devices and sessions',
        docs: 'OpenID Connect configuration (for developers)',
        title: 'Welcome – Acme',
      },
    ],
    [
      'de',
      {
        account: 'Ihr Konto verwalten: Anmeldemethoden, Geräte und Sitzungen',
        docs: 'OpenID-Connect-Konfiguration (für Entwickler)',
        title: 'Willkommen – Acme',
      },
    ],
  ] as const) {
    it(`the landing page (${lang}) links the account page and the discovery document`, async () => {
      await page.setExtraHTTPHeaders({ 'Accept-Language': lang });
      await page.goto(server.url('/'));
      expect(await page.title()).to.equal(texts.title);
      expect(await page.locator('html').getAttribute('lang')).to.equal(lang);
      expect(await page.locator('h1').innerText()).to.equal('Acme');
      expect(await imageLoaded(page, '#gh-brand-logo')).to.equal(true);
      expect(await watch.problems()).to.deep.equal([]);
      await shot(`03-landing-${lang}`);
      // Signed in already: the link opens the account page itself.
      await Promise.all([page.waitForURL(/\/account$/), page.getByRole('link', { name: texts.account }).click()]);
      expect(await page.locator('h1').innerText()).to.equal(
        lang === 'en' ? `Account of ${user.username}` : `Konto von ${user.username}`,
      );
      await page.goBack();
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/.well-known/openid-configuration')),
        page.getByRole('link', { name: texts.docs }).click(),
      ]);
      expect(answer.status()).to.equal(200);
      expect(((await answer.json()) as { issuer: string }).issuer).to.equal(server.issuer);
    });
  }
});
