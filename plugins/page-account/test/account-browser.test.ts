/**
 * The account page in Chromium (issue 14): a user signs in (PASSWORD, then TOTP) by keyboard,
 * signs out everywhere else, makes new backup codes, removes a bound device and their
 * authenticator app — each removal signs them out everywhere, so they sign in again with a
 * backup code — and sees their recent sign-ins. All by keyboard; no CSP violation; each page
 * saved as a screenshot to look at.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { requireChromium } from '../../../test/support/chromium.js';
import { expectRevealButtons } from '../../../test/support/password-reveal.js';
import { startConsoleServer, userWithTotp } from '../../../test/oauth/console-support.js';
import {
  ADMIN_TOKEN,
  authorize,
  Browser,
  PASSWORD,
  WEB,
  WEB_CB,
  type OAuthServer,
} from '../../../test/oauth/support.js';
import {
  openSiteBrowser,
  signInByKeyboard,
  tabTo,
  type BrowserUser,
  type SiteBrowser,
} from '../../../test/browser/site-support.js';

describe('account page (Chromium)', function () {
  this.timeout(90_000);

  let server: OAuthServer;
  let browser: SiteBrowser | undefined;
  let page: Page;
  let watch: SiteBrowser['watch'];
  let shot: (name: string) => Promise<unknown>;
  let user: BrowserUser;
  let codes: string[] = [];

  before(async function () {
    requireChromium(this);
    server = await startConsoleServer();
    user = await userWithTotp(server);
    // A first set of backup codes (the setup API), and an authenticator device bound to the account.
    const res = await fetch(server.url('/verification-actions-srv/setup/BACKUPCODE/initiation'), {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sub: user.id }),
    });
    expect(res.status).to.equal(200);
    await server.gatehouse.container.cradle.devices.add({
      deviceId: 'dev-pixel-0001',
      userId: user.id,
      clientId: 'gatehouse-authenticator',
      name: 'Pixel 9',
      publicKey: { kty: 'OKP', crv: 'Ed25519', x: 'C5kSdl4ha2E7Zf6sE6S1rJmrN2Lq2lSYGZlUDQAxkGI' },
      alg: 'EdDSA',
      biometric: true,
      pushToken: null,
    });
    browser = await openSiteBrowser('account');
    ({ page, watch, shot } = browser);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** Signed out by a removal: the page asks for a sign-in again; this one with a backup code. */
  async function signInWithBackupCode(until: RegExp): Promise<void> {
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill(user.username);
    await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
    await page.keyboard.press('Enter');
    await page.locator('.step', { hasText: 'Step 2 of 2' }).waitFor();
    // With the authenticator app gone, backup codes are the stage's only method: no choice shown.
    const choice = page.getByRole('radio', { name: 'Backup code' });
    if (await choice.isVisible()) await choice.check();
    const field = page.getByRole('textbox', { name: 'Backup code' });
    await field.fill(codes.shift()!);
    await Promise.all([page.waitForURL(until), field.press('Enter')]);
  }

  it('signs in with two factors by keyboard and shows methods, devices and sessions', async () => {
    // Signed in elsewhere too (another browser, another app).
    await authorize(
      new Browser(server),
      server,
      { response_type: 'code', client_id: WEB.id, redirect_uri: WEB_CB, scope: 'openid', state: 'st-1234567890' },
      { id: user.id, username: user.username, email: '' },
    );
    await page.goto(server.url('/account'));
    expect(await page.locator('h1').innerText()).to.equal('Sign in to Your account');
    await signInByKeyboard(page, user, /\/account$/);
    expect(await page.locator('h1').innerText()).to.equal(`Account of ${user.username}`);
    expect(await page.locator('#gh-m-BACKUPCODE').innerText()).to.equal('Backup code');
    expect(await page.locator('#gh-methods + table').innerText()).to.contain('10 of 10 unused');
    expect(await page.locator('#gh-devices + table').innerText()).to.contain('Pixel 9');
    expect(await page.locator('#gh-sessions + table tbody tr').count()).to.equal(2);
    expect(await page.locator('#gh-sessions + table').innerText()).to.contain('this browser');
    expect(await watch.problems()).to.deep.equal([]);
    await shot('01-account');
  });

  it('the change-password page has a Show / Hide button beside both fields (issue 29)', async () => {
    await page.goto(server.url('/account/password'));
    expect(await page.locator('h1').innerText()).to.equal('Change your password');
    expect(await expectRevealButtons(page, 'Show', 'Hide')).to.equal(2);
    expect(await watch.problems()).to.deep.equal([]);
    await shot('01b-password');
    await page.goto(server.url('/account'));
  });

  it('signs out everywhere else, by keyboard', async () => {
    await tabTo(page, 'Sign out everywhere else (1)');
    await Promise.all([page.waitForURL(/\?done=others_ended$/), page.keyboard.press('Enter')]);
    expect(await page.getByRole('status').innerText()).to.equal('You were signed out everywhere else.');
    expect(await page.locator('#gh-sessions + table tbody tr').count()).to.equal(1);
    expect(await page.getByText('You are not signed in anywhere else.').count()).to.equal(1);
    expect(await server.gatehouse.container.cradle.sessions.ofUser(user.id)).to.have.length(1);
    expect(await watch.problems()).to.deep.equal([]);
  });

  it('makes new backup codes, by keyboard; they are shown once', async () => {
    await tabTo(page, 'Make new backup codes');
    await Promise.all([page.waitForURL(/\/methods\/BACKUPCODE\/renew$/), page.keyboard.press('Enter')]);
    codes = await page.locator('#gh-codes code').allInnerTexts();
    expect(codes).to.have.length(10);
    expect(await watch.problems()).to.deep.equal([]);
    await shot('02-backup-codes');
    await tabTo(page, 'I saved them, back to my account');
    await Promise.all([page.waitForURL(/\/account$/), page.keyboard.press('Enter')]);
    expect(await page.locator('#gh-methods + table').innerText()).to.contain('10 of 10 unused');
  });

  it('removes a device by keyboard: signed out everywhere, back with a backup code', async () => {
    // Every row has a Remove; the device's is the one in the devices table.
    await page.locator('#gh-devices + table button').focus();
    await Promise.all([page.waitForURL(/\/login\?/), page.keyboard.press('Enter')]);
    await signInWithBackupCode(/\/account\?done=device_removed$/);
    expect(await page.getByRole('status').innerText()).to.contain('The device was removed.');
    expect(await page.getByText('No device bound.').count()).to.equal(1);
    expect(await server.gatehouse.container.cradle.devices.ofUser(user.id)).to.have.length(0);
    expect(await watch.problems()).to.deep.equal([]);
  });

  it('removes the authenticator app, then signs in with a backup code; lists recent sign-ins', async () => {
    await page.locator('#gh-m-TOTP').waitFor();
    const remove = page.locator('button[aria-describedby^="gh-m-TOTP "]');
    await remove.focus();
    await Promise.all([page.waitForURL(/\/login\?/), page.keyboard.press('Enter')]);
    await signInWithBackupCode(/\/account\?done=credential_removed$/);
    expect(await page.getByRole('status').innerText()).to.contain('Removed.');
    expect(await page.locator('#gh-m-TOTP').count()).to.equal(0);
    expect(await page.locator('#gh-methods + table').innerText()).to.contain('8 of 10 unused');
    const signIns = await page.locator('#gh-sign-ins + table').innerText();
    expect(signIns).to.contain('Backup code').and.to.contain('Authenticator app').and.to.contain('gatehouse-account');
    const types = (await server.gatehouse.container.cradle.events.recent({ userId: user.id, limit: 50 })).map(
      (e) => e.type,
    );
    expect(types).to.include.members([
      'account.other_sessions_ended',
      'account.method_renewed',
      'account.device_removed',
      'account.credential_removed',
    ]);
    expect(await watch.problems()).to.deep.equal([]);
    await shot('03-after-removals');
  });
});
