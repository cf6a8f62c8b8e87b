/**
 * Issue 10: the hosted page's PUSH wait, in headless Chromium. The page shows the number to type
 * on the device, sees the device's steps without a reload (long polls on the status), continues
 * the login by itself once the device completed PUSH, and says so when the device denies.
 */
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import type { Authenticator } from '@gatehouse-auth/authenticator';
import { freshTab, openChromium, requireChromium, type Chromium } from '../../../test/support/chromium.js';
import { pkcePair } from '../../../test/oauth/support.js';
import { ALICE_PASSWORD, DEMO_APP, startDemoServer, type DemoServer } from '../../../test/oauth/demo-server.js';
import { boundDevice, onlyPush } from '../../../test/devices/support.js';

describe('hosted page: waiting on a PUSH (Chromium, issue 10)', function () {
  this.timeout(60_000);
  let server: DemoServer;
  let device: Authenticator;
  let chrome: Chromium | undefined;
  let context: BrowserContext;
  let page: Page;

  before(async function () {
    requireChromium(this);
    server = await startDemoServer();
    device = await boundDevice(server, { name: "Alice's phone" });
    chrome = await openChromium();
    context = chrome.context;
  });

  beforeEach(async () => {
    page = await freshTab(context, page);
  });

  after(async function () {
    await chrome?.close();
    await server?.close();
  });

  /** The demo app's sign-in, in the page's language (`ui_locales`). */
  async function openLogin(uiLocales?: string): Promise<void> {
    const { challenge } = pkcePair();
    const params = new URLSearchParams({
      client_id: DEMO_APP.id,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: DEMO_APP.redirectUri,
      state: 'push-state',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...(uiLocales ? { ui_locales: uiLocales } : {}),
    });
    await page.goto(server.url(`/api/oauth2/authorize/?${params.toString()}`));
  }

  /** Password first, then PUSH chosen at the second stage: answers the number the page shows. */
  async function startPush(): Promise<number> {
    await openLogin();
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill('alice');
    await page.getByRole('textbox', { name: 'Password' }).fill(ALICE_PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('radio', { name: 'Approve on your phone' }).check();
    await page.getByRole('button', { name: 'Continue' }).click();
    const shown = page.locator('.push-number');
    await expect(await shown.textContent({ timeout: 10_000 })).to.match(/^\d\d$/);
    const number = Number(await shown.textContent());
    // The user is told, in visible words tied to the number, to type it on the device (nothing
    // there offers it to pick): no tooltip to find.
    const hint = page.locator('#gh-PUSH-number-hint');
    expect(await hint.isVisible()).to.equal(true);
    expect(await hint.textContent()).to.equal(
      `Open your authenticator app on Alice's phone and type ${number} there, the number shown here.`,
    );
    expect(await shown.getAttribute('aria-describedby')).to.equal('gh-PUSH-number-hint');
    expect(await shown.getAttribute('title')).to.equal(null);
    return number;
  }

  const message = () => page.locator('#gh-message');

  it('shows the number, follows the device without a reload, and continues by itself once approved', async function () {
    const number = await startPush();
    await message()
      .filter({
        hasText: "We sent a request to Alice's phone. Waiting for you to approve it there with the number shown here.",
      })
      .waitFor({ timeout: 10_000 });
    const push = await onlyPush(device);
    await device.acknowledge(push);
    await message()
      .filter({ hasText: 'Request opened on your device. Approve it there, then type the number shown here.' })
      .waitFor({ timeout: 10_000 });
    expect(await device.allow(push)).to.deep.equal({ numberDigits: 2 });
    await device.verify(push, { passCode: String(number) });
    // Alice has no passkey yet: the page offers one before the app (issue 11); she declines.
    await page.getByRole('heading', { name: 'Sign in faster next time' }).waitFor({ timeout: 15_000 });
    // The demo app's redirect URI has no server here: the browser's request for it is the end.
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith(DEMO_APP.redirectUri), { timeout: 15_000 }),
      page.getByRole('button', { name: /Not now/ }).click(),
    ]);
    const callback = new URL(request.url());
    expect(callback.searchParams.get('code')).to.be.a('string');
    expect(callback.searchParams.get('state')).to.equal('push-state');
  });

  it('says so when the device denies, and stays on the login page', async function () {
    await startPush();
    const push = await onlyPush(device);
    await device.deny(push, 'not_me');
    await message().filter({ hasText: 'denied on your device' }).waitFor({ timeout: 10_000 });
    expect(new URL(page.url()).pathname).to.equal('/login');
    expect(await page.locator('#gh-message.error').count()).to.equal(1);
  });

  it('says it in German: the instruction beside the number, and what to do while it waits', async function () {
    await openLogin('de');
    await page.locator('#gh-identifier').fill('alice');
    await page.getByRole('textbox', { name: 'Passwort' }).fill(ALICE_PASSWORD);
    await page.getByRole('button', { name: 'Weiter' }).click();
    await page.locator('input[name="method"][value="PUSH"]').check();
    await page.getByRole('button', { name: 'Weiter' }).click();
    const shown = page.locator('#gh-PUSH-number');
    expect(await shown.textContent({ timeout: 10_000 })).to.match(/^\d\d$/);
    const number = Number(await shown.textContent());
    const hint = page.getByText('Öffnen Sie Ihre Authenticator-App');
    expect(await hint.textContent()).to.equal(
      `Öffnen Sie Ihre Authenticator-App (Alice's phone) und geben Sie dort ${number} ein, die hier angezeigte Zahl.`,
    );
    expect(await hint.getAttribute('id')).to.equal(await shown.getAttribute('aria-describedby'));
    await message()
      .filter({ hasText: 'Wir warten, bis Sie sie dort mit der hier angezeigten Zahl bestätigen.' })
      .waitFor({ timeout: 10_000 });
    // Leaves no push behind for the next test's device.
    await device.deny(await onlyPush(device), 'not_me');
    await message().filter({ hasText: 'abgelehnt' }).waitFor({ timeout: 10_000 });
  });
});
