/**
 * Issue 13: a German login page (`ui_locales=de`) in a real browser (Debian's Chromium), the demo
 * config behind it. What the user sees is German — the title, the methods the plugins describe
 * in English, the messages login.js says (an empty field, a wrong password), the second stage
 * and the passkey offer after it — the `login_hint` fills the field in, and the page's CSP
 * (no inline script) reports no violation while the scripts read their messages. Also German:
 * the password field's Show / Hide button and the SMS send button's countdown (issue 29).
 */
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import { openChromium, requireChromium, type Chromium } from '../../../test/support/chromium.js';
import { pkcePair } from '../../../test/oauth/support.js';
import {
  ALICE_PASSWORD,
  DEMO_APP,
  aliceTotp,
  startDemoServer,
  type DemoServer,
} from '../../../test/oauth/demo-server.js';

describe('a German login page (Chromium, issue 13)', function () {
  this.timeout(60_000);

  let server: DemoServer;
  let context: BrowserContext | undefined;
  let chrome: Chromium | undefined;
  let page: Page;
  /** CSP violations the page reported (its securitypolicyviolation events) and console complaints. */
  const violations: string[] = [];
  const errors: string[] = [];

  before(async function () {
    requireChromium(this);
    // localhost: the passkey module on the first stage needs a domain name for its relying party.
    server = await startDemoServer({ host: 'localhost' });
    chrome = await openChromium(['--lang=en-US']);
    context = chrome.context;
    // Runs before any page script (and outside the page's CSP): records what the CSP blocks.
    await context.addInitScript(
      "document.addEventListener('securitypolicyviolation', (e) => " +
        '(window.__csp = window.__csp || []).push(e.violatedDirective + " " + e.blockedURI));',
    );
    page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    page.on('pageerror', (err) => errors.push(err.message));
  });

  after(async () => {
    await chrome?.close();
    await server?.close();
  });

  /** The violations the page's own listener saw, plus the console's. */
  async function cspViolations(): Promise<string[]> {
    const seen = (await page.evaluate('window.__csp || []')) as string[];
    return [...seen, ...violations];
  }

  const message = () => page.locator('#gh-message');

  it('walks both stages in German; the script speaks German; the CSP reports nothing', async () => {
    const { challenge } = pkcePair();
    const query = new URLSearchParams({
      client_id: DEMO_APP.id,
      response_type: 'code',
      scope: 'openid profile',
      redirect_uri: DEMO_APP.redirectUri,
      state: 'state-de',
      nonce: 'nonce-de',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ui_locales: 'de',
      login_hint: 'alice',
    });
    const response = (await page.goto(server.url(`/api/oauth2/authorize/?${query.toString()}`)))!;
    expect(new URL(page.url()).pathname).to.equal('/login');
    expect(response.headers()['content-security-policy']).to.include("script-src 'self'");
    expect(response.headers()['content-security-policy']).to.not.include('unsafe-inline');

    expect(await page.title()).to.equal('Bei Gatehouse demo app anmelden');
    expect(await page.locator('html').getAttribute('lang')).to.equal('de');
    expect(await page.locator('h1').innerText()).to.equal('Bei Gatehouse demo app anmelden');
    expect(await page.locator('.step').innerText()).to.equal('Schritt 1 von 2');
    expect(await page.getByRole('radio', { name: 'Passwort' }).isChecked()).to.equal(true);
    expect(await page.getByRole('radio', { name: 'Passkey oder Sicherheitsschlüssel' }).count()).to.equal(1);
    expect(await page.getByRole('button', { name: 'Weiter' }).isEnabled()).to.equal(true);

    // The app's login_hint is in the field; emptied, the script asks for it in German.
    const identifier = page.getByRole('textbox', { name: 'Benutzername, E-Mail-Adresse oder Telefonnummer' });
    expect(await identifier.inputValue()).to.equal('alice');
    await identifier.fill('');
    await page.getByRole('button', { name: 'Weiter' }).click();
    expect(await message().innerText()).to.equal(
      'Geben Sie Ihren Benutzernamen, Ihre E-Mail-Adresse oder Telefonnummer ein.',
    );
    await identifier.fill('alice');
    await page.getByRole('button', { name: 'Weiter' }).click();
    expect(await message().innerText()).to.equal('Bitte geben Sie „Passwort“ ein.');

    // The password field's Show / Hide button, in German (issue 29).
    const field = page.locator('#gh-PASSWORD-password');
    const show = page.getByRole('button', { name: 'Anzeigen', exact: true });
    expect(await show.getAttribute('aria-pressed')).to.equal('false');
    expect(await show.getAttribute('aria-controls')).to.equal('gh-PASSWORD-password');
    await show.click();
    expect(await field.getAttribute('type')).to.equal('text');
    const hide = page.getByRole('button', { name: 'Verbergen', exact: true });
    expect(await hide.getAttribute('aria-pressed')).to.equal('true');
    await hide.click();
    expect(await field.getAttribute('type')).to.equal('password');
    expect(await show.getAttribute('aria-pressed')).to.equal('false');

    // A wrong password: the server says VERIFICATION_FAILED, the page its German generic message
    // and the attempts left (5 per attempt by default).
    await page.getByRole('textbox', { name: 'Passwort' }).fill('not the password');
    await page.getByRole('button', { name: 'Weiter' }).click();
    await page.locator('#gh-message.error').filter({ hasText: 'Das hat nicht funktioniert' }).waitFor();
    expect(await message().innerText()).to.equal(
      'Das hat nicht funktioniert. Bitte prüfen Sie Ihre Eingabe und versuchen Sie es erneut. Noch 4 Versuche.',
    );
    expect(new URL(page.url()).pathname).to.equal('/login');
    expect(await cspViolations(), 'the first stage').to.deep.equal([]);

    await page.getByRole('textbox', { name: 'Passwort' }).fill(ALICE_PASSWORD);
    await page.getByRole('button', { name: 'Weiter' }).click();
    await page.locator('.step', { hasText: 'Schritt 2 von 2' }).waitFor();
    expect(await page.title()).to.equal('Bei Gatehouse demo app anmelden');
    expect(await page.locator('.signed-in').innerText()).to.match(/^Anmeldung als alice\.\s+Nicht Sie\?$/);
    expect(await page.locator('#gh-methods legend').innerText()).to.equal('Bestätigen mit');
    for (const label of ['Authenticator-App', 'Backup-Code', 'SMS']) {
      expect(await page.getByRole('radio', { name: label }).count(), label).to.equal(1);
    }

    // A code by SMS: the send button counts the demo's 30 s down in German, disabled (issue 29).
    await page.getByRole('radio', { name: 'SMS' }).check();
    await page.locator('#gh-send').click();
    await page.locator('#gh-send:disabled', { hasText: /^Neuen Code in (30|29|28) s senden$/ }).waitFor();
    await page.locator('#gh-message.info').waitFor();
    await page.getByRole('radio', { name: 'Authenticator-App' }).check();

    expect(await cspViolations(), 'the second stage').to.deep.equal([]);

    // The authenticator app's code; the login completes and offers a passkey, in German too.
    await page.getByRole('textbox', { name: 'Code aus Ihrer Authenticator-App' }).fill(await aliceTotp(server));
    await page.getByRole('button', { name: 'Weiter' }).click();
    await page.waitForURL((url) => url.pathname === '/login/offer');
    expect(await page.locator('html').getAttribute('lang')).to.equal('de');
    expect(await page.title()).to.equal('Beim nächsten Mal schneller anmelden');
    expect(await page.getByRole('button', { name: 'Passkey erstellen' }).count()).to.equal(1);
    expect(await page.getByRole('button', { name: 'Jetzt nicht, weiter zu Gatehouse demo app' }).count()).to.equal(1);

    expect(await cspViolations()).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
  });
});
