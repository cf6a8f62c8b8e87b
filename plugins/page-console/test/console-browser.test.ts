/**
 * The admin console in Chromium (issue 14, decision 27): an admin signs in through the hosted
 * login page (PASSWORD, then TOTP) by keyboard, finds a user, opens them and disables them —
 * all by keyboard — sees apps, plugins and health; a user who is not an admin gets the 403
 * page. No page reports a CSP violation; each is saved as a screenshot to look at.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { requireChromium } from '../../../test/support/chromium.js';
import { ADMINS, startConsoleServer, userWithTotp } from '../../../test/oauth/console-support.js';
import type { OAuthServer, TestUser } from '../../../test/oauth/support.js';
import {
  openSiteBrowser,
  signInByKeyboard,
  tabTo,
  type BrowserUser,
  type SiteBrowser,
} from '../../../test/browser/site-support.js';

describe('admin console (Chromium)', function () {
  this.timeout(90_000);

  let server: OAuthServer;
  let browser: SiteBrowser | undefined;
  let page: Page;
  let watch: SiteBrowser['watch'];
  let shot: (name: string) => Promise<unknown>;
  let admin: BrowserUser;
  let target: TestUser;

  before(async function () {
    requireChromium(this);
    server = await startConsoleServer();
    admin = await userWithTotp(server, ADMINS[0]);
    target = await server.user('carol');
    await server.user('dave');
    browser = await openSiteBrowser('console');
    ({ page, watch, shot } = browser);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('signs an admin in through the login page with two factors, by keyboard', async () => {
    await page.goto(server.url('/console'));
    expect(new URL(page.url()).pathname).to.equal('/login');
    expect(await page.locator('h1').innerText()).to.equal('Sign in to Gatehouse console');
    expect(await page.locator('.step').innerText()).to.equal('Step 1 of 2');
    await signInByKeyboard(page, admin, /\/console\/users$/);
    expect(await page.title()).to.equal('Users – Gatehouse console');
    expect(await page.locator('header .who').innerText()).to.contain(`Signed in as ${admin.username}`);
    expect(await page.getByRole('link', { name: 'Users' }).getAttribute('aria-current')).to.equal('page');
    expect(await watch.problems()).to.deep.equal([]);
    await shot('01-users');
  });

  it('finds a user, opens them and disables them, by keyboard', async () => {
    // The skip link comes first and moves the focus to the content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).to.equal('Skip to content');
    await page.keyboard.press('Enter');
    await tabTo(page, 'Username, email or phone');
    await page.keyboard.type('carol');
    await Promise.all([page.waitForURL(/\?q=carol$/), page.keyboard.press('Enter')]);
    expect(await page.locator('#gh-list').innerText()).to.equal('Users matching “carol”');
    expect(await page.locator('tbody tr').count()).to.equal(1);
    await shot('02-search');
    await tabTo(page, target.username);
    await Promise.all([page.waitForURL(new RegExp(`/console/users/${target.id}$`)), page.keyboard.press('Enter')]);
    expect(await page.locator('h1').innerText()).to.equal(target.username);
    expect(await page.locator('dd .badge').innerText()).to.equal('Active');
    await shot('03-user');
    await tabTo(page, 'Disable user');
    await Promise.all([page.waitForURL(/\?done=disabled$/), page.keyboard.press('Enter')]);
    expect(await page.getByRole('status').innerText()).to.equal('The user was disabled and signed out everywhere.');
    expect(await page.locator('dd .badge').innerText()).to.equal('Disabled');
    expect(await page.getByRole('button', { name: 'Enable user' }).count()).to.equal(1);
    const [event] = await server.gatehouse.container.cradle.events.recent({
      userId: target.id,
      types: ['console.user_disabled'],
      limit: 1,
    });
    expect(event!.data).to.deep.equal({ actor: admin.id });
    expect(await watch.problems()).to.deep.equal([]);
    await shot('04-user-disabled');
  });

  it('creates a user from the form', async () => {
    await page.goto(server.url('/console/users'));
    await page.getByRole('textbox', { name: 'Username', exact: true }).fill('erin-from-console');
    await page.getByRole('textbox', { name: 'Email', exact: true }).fill('erin@example.test');
    await Promise.all([
      page.waitForURL(/\?done=created$/),
      page.getByRole('button', { name: 'Create user' }).press('Enter'),
    ]);
    expect(await page.locator('h1').innerText()).to.equal('erin-from-console');
    expect(await page.getByRole('status').innerText()).to.equal('The user was created.');
    expect(await watch.problems()).to.deep.equal([]);
  });

  it("shows the admin's own methods, sessions and events", async () => {
    await page.goto(server.url(`/console/users/${admin.id}`));
    expect(await page.locator('#gh-m-PASSWORD').innerText()).to.equal('Password');
    expect(await page.locator('#gh-m-TOTP').count()).to.equal(1);
    expect(await page.locator('#gh-sessions + table tbody tr').count()).to.equal(1);
    expect(await page.locator('#gh-events + table').innerText()).to.contain('verification.success');
    expect(await watch.problems()).to.deep.equal([]);
    await shot('05-admin-detail');
  });

  it('lists apps, and plugins with their health', async () => {
    await page.getByRole('link', { name: 'Apps' }).click();
    await page.waitForURL(/\/console\/apps$/);
    expect(await page.locator('tbody').innerText()).to.contain('gatehouse-console');
    await shot('06-apps');
    // On a phone the apps' long redirect URIs wrap: the page never scrolls sideways (issue 29).
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow, 'horizontal overflow in px').to.be.at.most(0);
    await shot('06-apps-390');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('link', { name: 'Plugins and health' }).click();
    await page.waitForURL(/\/console\/plugins$/);
    expect(await page.locator('#gh-health + dl').innerText()).to.match(/Database\s+OK/);
    expect(await page.locator('#gh-plugins + table').innerText()).to.contain('@gatehouse-auth/method-totp');
    expect(await watch.problems()).to.deep.equal([]);
    await shot('07-plugins');
  });

  it('signs out; a user who is not an admin then gets 403', async () => {
    await Promise.all([page.waitForURL(/\/console\/sign-out$/), page.locator('#gh-sign-out').press('Enter')]);
    expect(await page.locator('h1').innerText()).to.equal('Signed out');
    await browser!.context.clearCookies();
    const member = await userWithTotp(server);
    await page.goto(server.url('/console/users'));
    const response = page.waitForResponse((r) => new URL(r.url()).pathname === '/console/users');
    await signInByKeyboard(page, member, /\/console\/users$/);
    expect((await response).status()).to.equal(403);
    expect(await page.getByRole('alert').innerText()).to.contain('Your account may not use this page');
    expect(await page.locator('nav').count()).to.equal(0);
    expect(await watch.problems()).to.deep.equal([]);
    await shot('08-not-admin');
  });
});
