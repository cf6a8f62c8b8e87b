/**
 * "Forgot password?" in Chromium (issue 27, done-when): from an app's hosted login page, a
 * password-only user (in English and in German) and a user with TOTP (who must also give a code)
 * reset a forgotten password, then sign in with the new one and land at the app. No CSP
 * violation, no script error; each page saved as a screenshot.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { requireChromium } from '../../../test/support/chromium.js';
import { expectRevealButtons } from '../../../test/support/password-reveal.js';
import { openSiteBrowser, type SiteBrowser } from '../../../test/browser/site-support.js';
import {
  authorizePath,
  enrolTotp,
  MFA,
  totpCode,
  WEB,
  WEB_CB,
  type OAuthServer,
  type TestUser,
} from '../../../test/oauth/support.js';
import { resetCode, startRecoveryServer } from './support.js';

/** The MFA app (PASSWORD, then TOTP) of the suite's apps. */
const MFA_CB = 'https://mfa.example.test/cb';
const NEW_PASSWORD = 'my new and long passphrase 77';

/** What the pages say, in English and in German. */
const EN = {
  forgot: 'Forgot password?',
  resetTitle: 'Reset your password',
  identifier: 'Username, email or phone',
  send: 'Send code',
  sent: 'If an account exists',
  mail: /reset your password/,
  check: 'Continue',
  password: 'New password',
  passwordAgain: 'New password again',
  save: 'Save password',
  show: 'Show',
  hide: 'Hide',
  done: 'Your password was changed',
  signIn: 'Sign in',
  loginIdentifier: 'Username, email or phone',
  loginPassword: 'Password',
};
type Labels = typeof EN;
const DE: Labels = {
  forgot: 'Passwort vergessen?',
  resetTitle: 'Passwort zurücksetzen',
  identifier: 'Benutzername, E-Mail-Adresse oder Telefonnummer',
  send: 'Code senden',
  sent: 'Wenn es zu Ihrer Eingabe ein Konto gibt',
  mail: /Zurücksetzen Ihres Passworts/,
  check: 'Weiter',
  password: 'Neues Passwort',
  passwordAgain: 'Neues Passwort wiederholen',
  save: 'Passwort speichern',
  show: 'Anzeigen',
  hide: 'Verbergen',
  done: 'Ihr Passwort wurde geändert',
  signIn: 'Anmelden',
  loginIdentifier: 'Benutzername, E-Mail-Adresse oder Telefonnummer',
  loginPassword: 'Passwort',
};

describe('account recovery (Chromium)', function () {
  this.timeout(90_000);

  let server: OAuthServer;
  let browser: SiteBrowser | undefined;
  let page: Page;

  before(async function () {
    requireChromium(this);
    server = await startRecoveryServer();
    browser = await openSiteBrowser('recovery');
    page = browser.page;
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** The app's login, then "Forgot password?", the identifier, and the code from the email. */
  async function resetUpToCode(
    user: TestUser,
    app: { id: string; callback: string },
    shots: string,
    L: Labels = EN,
  ): Promise<void> {
    await browser!.context.clearCookies();
    const state = `st-${Date.now()}-abcdef`;
    await page.goto(
      server.url(
        authorizePath({ response_type: 'code', client_id: app.id, redirect_uri: app.callback, scope: 'openid', state }),
      ),
    );
    await page.getByRole('link', { name: L.forgot }).click();
    await page.waitForURL(/\/recovery\?request_id=/);
    expect(await page.locator('h1').innerText()).to.equal(L.resetTitle);
    await browser!.shot(`${shots}-1-identifier`);
    await page.getByRole('textbox', { name: L.identifier }).fill(user.email);
    await Promise.all([page.waitForURL(/\/recovery\/code$/), page.getByRole('button', { name: L.send }).click()]);
    expect(await page.getByRole('status').innerText()).to.contain(L.sent);
    await browser!.shot(`${shots}-2-code`);
    await page.getByRole('textbox', { name: 'Code' }).fill(await resetCode(server, user.email, L.mail));
    await page.getByRole('button', { name: L.check }).click();
  }

  /** The new password, twice; then "Sign in" back to the app's login. */
  async function chooseNewPassword(shots: string, L: Labels = EN): Promise<void> {
    await page.waitForURL(/\/recovery\/password$/);
    await browser!.shot(`${shots}-4-password`);
    expect(await expectRevealButtons(page, L.show, L.hide)).to.equal(2);
    await page.getByLabel(L.password, { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel(L.passwordAgain).fill(NEW_PASSWORD);
    await page.getByRole('button', { name: L.save }).click();
    await page.locator('h1', { hasText: L.done }).waitFor();
    await browser!.shot(`${shots}-5-done`);
    // Every page so far: no CSP violation, no script error.
    expect(await browser!.watch.problems()).to.deep.equal([]);
    await Promise.all([page.waitForURL(/\/login\?request_id=/), page.getByRole('link', { name: L.signIn }).click()]);
  }

  /** Identifier and the new password on the login page. */
  async function signInWithNewPassword(user: TestUser, L: Labels = EN): Promise<void> {
    await page.getByRole('textbox', { name: L.loginIdentifier }).fill(user.username);
    await page.getByRole('textbox', { name: L.loginPassword }).fill(NEW_PASSWORD);
    await page.keyboard.press('Enter');
  }

  it('a password-only user resets a forgotten password, then signs in with the new one', async () => {
    const user = await server.user('chrome');
    await resetUpToCode(user, { id: WEB.id, callback: WEB_CB }, 'password-only');
    await chooseNewPassword('password-only');
    // Back at the app (no server answers there: the request is what counts).
    await Promise.all([page.waitForRequest(/^https:\/\/web\.example\.test\/cb\?code=/), signInWithNewPassword(user)]);
  });

  it('in German: a password-only user resets a forgotten password, then signs in with the new one', async () => {
    const user = await server.user('chromede');
    await page.setExtraHTTPHeaders({ 'Accept-Language': 'de-DE,de;q=0.9' });
    try {
      await resetUpToCode(user, { id: WEB.id, callback: WEB_CB }, 'german', DE);
      await chooseNewPassword('german', DE);
      await Promise.all([
        page.waitForRequest(/^https:\/\/web\.example\.test\/cb\?code=/),
        signInWithNewPassword(user, DE),
      ]);
    } finally {
      await page.setExtraHTTPHeaders({});
    }
  });

  it('a user with TOTP gives a code from their authenticator too, then signs in with both', async () => {
    const user = await server.user('chrometotp');
    const seed = await enrolTotp(server, user);
    await resetUpToCode(user, { id: MFA.id, callback: MFA_CB }, 'totp');
    await page.locator('h1', { hasText: 'Confirm it is you' }).waitFor();
    await browser!.shot('totp-3-second-factor');
    await Promise.all([
      page.waitForURL(/\/login\?request_id=/),
      page.getByRole('button', { name: 'Confirm my second factor' }).click(),
    ]);
    // A login pinned to the user: no identifier, no password, just the second factor.
    expect(await page.locator('#gh-identifier').count()).to.equal(0);
    const code = page.getByRole('textbox', { name: 'Code from your authenticator app' });
    await code.fill(await totpCode(seed, 0));
    await code.press('Enter');
    await chooseNewPassword('totp');
    await signInWithNewPassword(user);
    const second = page.getByRole('textbox', { name: 'Code from your authenticator app' });
    await second.waitFor();
    await second.fill(await totpCode(seed, 1));
    await Promise.all([page.waitForRequest(/^https:\/\/mfa\.example\.test\/cb\?code=/), second.press('Enter')]);
  });
});
