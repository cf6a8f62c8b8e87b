/**
 * The account page's self-service in Chromium (issue 27), on the demo config at localhost (a
 * passkey's relying party id must be a domain name), with a CDP virtual authenticator: alice
 * removes her authenticator app and adds it again (QR code, key, first code), adds a passkey
 * (WebAuthn in the browser, the FIDO2 method's own module) and removes it, then deletes her
 * account: disabled at once, and once the grace period (seconds here) is over, no row of any
 * table names her. No CSP violation on any page; each page saved as a screenshot.
 */
import { expect } from 'chai';
import { generate } from 'otplib';
import type { CDPSession, Page } from 'playwright-core';
import { requireChromium } from '../../../test/support/chromium.js';
import { ALICE_PASSWORD, startDemoServer, type DemoServer } from '../../../test/oauth/demo-server.js';
import { openSiteBrowser, type SiteBrowser } from '../../../test/browser/site-support.js';
import { rowsOf } from './rows.js';

const GRACE_SECONDS = 30;

describe('account page self-service (Chromium, virtual authenticator)', function () {
  this.timeout(120_000);

  let server: DemoServer;
  let browser: SiteBrowser | undefined;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  let totpSecret: string;
  let backupCodes: string[];

  before(async function () {
    requireChromium(this);
    server = await startDemoServer({
      host: 'localhost',
      configure(config) {
        const account = config.plugins.find((p) => p.name === '@gatehouse-auth/page-account')!;
        account.options = { ...account.options, deletion_grace: GRACE_SECONDS, deletion_sweep: 1 };
      },
    });
    totpSecret = server.alice.totpSecret;
    backupCodes = [...server.alice.backupCodes];
    browser = await openSiteBrowser('account-self-service');
    page = browser.page;
    cdp = await browser.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    }));
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const credentials = (method: string) =>
    server.gatehouse.container.cradle.services.credentials(server.alice.id, method).list();

  /** The hosted login's two stages: the password, then TOTP (while alice has it) or a backup code. */
  async function signIn(until: RegExp, second: 'totp' | 'backup'): Promise<void> {
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill('alice');
    await page.getByRole('textbox', { name: 'Password' }).fill(ALICE_PASSWORD);
    await page.keyboard.press('Enter');
    await page.locator('.step', { hasText: 'Step 2 of 2' }).waitFor();
    const name = second === 'totp' ? 'Authenticator app' : 'Backup code';
    const choice = page.getByRole('radio', { name });
    if (await choice.isVisible()) await choice.check();
    let code: string;
    if (second === 'totp') {
      server.clock.advance(30);
      code = await generate({ secret: totpSecret, epoch: Math.floor(server.clock.now().getTime() / 1000) });
    } else code = backupCodes.shift()!;
    const field = page.getByRole('textbox', {
      name: second === 'totp' ? 'Code from your authenticator app' : 'Backup code',
    });
    await field.fill(code);
    await Promise.all([
      page.waitForURL((url) => until.test(url.href) || url.pathname === '/login/offer'),
      field.press('Enter'),
    ]);
    // The hosted login offers a passkey after a password login: "Not now" (for 30 days).
    if (new URL(page.url()).pathname === '/login/offer') {
      await Promise.all([page.waitForURL(until), page.locator('#gh-later').click()]);
    }
  }

  it('signs in and removes the authenticator app, then signs in with a backup code', async () => {
    await page.goto(server.url('/account'));
    await signIn(/\/account$/, 'totp');
    expect(await page.locator('h1').innerText()).to.equal('Account of alice');
    // One authenticator app: offered again once it is removed.
    expect(await page.locator('#gh-add-TOTP').count()).to.equal(0);
    expect(await page.locator('#gh-add-FIDO2').innerText()).to.equal('Add: Passkey or security key');
    await browser!.shot('01-account');
    await page.locator('button[aria-describedby^="gh-m-TOTP "]').click();
    await page.waitForURL(/\/login\?/);
    await signIn(/\/account\?done=credential_removed$/, 'backup');
    expect(await credentials('TOTP')).to.have.length(0);
    expect(await page.locator('#gh-add-TOTP').innerText()).to.equal('Add: Authenticator app');
    expect(await browser!.watch.problems()).to.deep.equal([]);
  });

  it('adds the authenticator app again: QR code, key, first code', async () => {
    await page.locator('#gh-add-TOTP').click();
    await page.waitForURL(/\/account\/add\/TOTP$/);
    await page.getByRole('button', { name: 'Start' }).click();
    await page.locator('#gh-qr').waitFor();
    expect(await page.getByRole('img', { name: 'QR code to scan with your app' }).count()).to.equal(1);
    totpSecret = await page.locator('#gh-secret').innerText();
    await browser!.shot('02-totp-qr');
    const code = await generate({ secret: totpSecret, epoch: Math.floor(server.clock.now().getTime() / 1000) });
    await page.getByRole('textbox', { name: 'Code' }).fill(code);
    await Promise.all([
      page.waitForURL(/\/account\?done=method_added$/),
      page.getByRole('button', { name: 'Confirm' }).click(),
    ]);
    expect(await page.getByRole('status').innerText()).to.equal('Added. You can sign in with it from now on.');
    expect(await credentials('TOTP')).to.have.length(1);
    expect(await page.locator('#gh-m-TOTP').count()).to.equal(1);
    expect(await browser!.watch.problems()).to.deep.equal([]);
  });

  it('adds a passkey with the browser (WebAuthn), then removes it', async () => {
    await page.locator('#gh-add-FIDO2').click();
    await page.waitForURL(/\/account\/add\/FIDO2$/);
    const create = page.getByRole('button', { name: 'Create: Passkey or security key' });
    await expect(create).to.not.equal(null);
    await page.waitForFunction(
      () =>
        !(
          globalThis as unknown as { document: { getElementById(id: string): { disabled: boolean } } }
        ).document.getElementById('gh-setup-start').disabled,
    );
    await browser!.shot('03-passkey');
    await Promise.all([page.waitForURL(/\/account\?done=method_added$/, { timeout: 20_000 }), create.click()]).catch(
      async (err: unknown) => {
        throw new Error(
          `${String(err)}; page said: ${await page
            .locator('#gh-message')
            .textContent()
            .catch(() => '?')}`,
        );
      },
    );
    const [passkey] = await credentials('FIDO2');
    expect(passkey, 'a passkey stored').to.not.equal(undefined);
    const { credentials: inBrowser } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(inBrowser).to.have.length(1);
    expect(await page.locator('#gh-m-FIDO2').count()).to.equal(1);
    expect(await browser!.watch.problems()).to.deep.equal([]);
    await browser!.shot('04-passkey-added');
    await page.locator(`button[aria-describedby="gh-m-FIDO2 gh-c-${passkey!.id}"]`).click();
    await page.waitForURL(/\/login\?/);
    await signIn(/\/account\?done=credential_removed$/, 'totp');
    expect(await credentials('FIDO2')).to.have.length(0);
    expect(await page.locator('#gh-m-FIDO2').count()).to.equal(0);
  });

  it('deletes the account: disabled at once, every row gone after the grace period', async () => {
    const cradle = server.gatehouse.container.cradle;
    const alice = { id: server.alice.id, username: 'alice', email: 'alice@example.test' };
    expect(Object.keys(await rowsOf(server, alice))).to.include.members(['users', 'credentials', 'sessions']);
    await page.locator('#gh-delete-link').click();
    await page.waitForURL(/\/account\/delete$/);
    await browser!.shot('05-delete');
    await Promise.all([
      page.waitForURL(/\/account\/delete$/),
      page.getByRole('button', { name: 'Delete my account' }).click(),
    ]);
    await page.locator('#gh-deleted').waitFor();
    expect(await page.locator('#gh-deleted').innerText()).to.contain('will be deleted on');
    expect((await cradle.users.findById(server.alice.id))!.status).to.equal('disabled');
    expect(await cradle.sessions.ofUser(server.alice.id)).to.have.length(0);
    // Not before the grace period is over…
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await cradle.users.findById(server.alice.id)).to.not.equal(null);
    // …then the next sweep deletes every row.
    server.clock.advance(GRACE_SECONDS + 1);
    const end = Date.now() + 10_000;
    while ((await cradle.users.findById(server.alice.id)) !== null && Date.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await rowsOf(server, alice)).to.deep.equal({});
    expect(await browser!.watch.problems()).to.deep.equal([]);
  });
});
