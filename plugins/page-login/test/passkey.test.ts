/**
 * Issue 11: passkeys in headless Chromium with a CDP virtual authenticator, on the demo config
 * (demo-spa: PASSWORD or FIDO2, one stage). A passkey is
 * registered through the setup API with the browser's ceremony, then signs alice in from
 * /api/oauth2/authorize/ without a username, to the app's redirect with a code whose tokens
 * carry the passkey's amr; a ceremony without user verification shows a clear message.
 */
import { expect } from 'chai';
import { decodeJwt } from 'jose';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { openChromium, requireChromium, type Chromium } from '../../../test/support/chromium.js';
import { pkcePair } from '../../../test/oauth/support.js';
import {
  ALICE_PASSWORD,
  DEMO_ADMIN_TOKEN,
  DEMO_SPA,
  methodOf,
  outboxCode,
  outboxLatestText,
  redeemDemo,
  startDemoServer,
  type DemoServer,
} from '../../../test/oauth/demo-server.js';

describe('passkeys on the hosted page (Chromium, virtual authenticator, issue 11)', function () {
  this.timeout(60_000);
  let server: DemoServer;
  let chrome: Chromium | undefined;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;

  before(async function () {
    requireChromium(this);
    // WebAuthn needs a domain name as the relying party id: the issuer is http://localhost:<port>.
    server = await startDemoServer({
      host: 'localhost',
      configure(config) {
        // An emailed code may sign in too: a login that proves more than a password (the offer's tests).
        config.apps.find((a) => a.client_id === DEMO_SPA.id)!.login_stages = [['PASSWORD', 'FIDO2', 'EMAIL']];
      },
    });
    chrome = await openChromium();
    context = chrome.context;
    page = context.pages()[0] ?? (await context.newPage());
    cdp = await context.newCDPSession(page);
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

  after(async function () {
    await chrome?.close();
    await server?.close();
  });

  const setup = async (step: string, body: Record<string, unknown>) => {
    const res = await fetch(server.url(`/verification-actions-srv/setup/FIDO2/${step}`), {
      method: 'POST',
      headers: { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      json: (await res.json()) as { data: Record<string, unknown>; error?: { code: string } },
    };
  };

  /** The authorize request of demo-spa (PKCE); answers its URL and code verifier. */
  function authorizeUrl() {
    const { verifier, challenge } = pkcePair();
    const params = new URLSearchParams({
      client_id: DEMO_SPA.id,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: DEMO_SPA.redirectUri,
      state: 'passkey',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    return { url: server.url(`/api/oauth2/authorize/?${params.toString()}`), verifier };
  }

  /**
   * Starts a navigation to `url`, done once the answer arrives (the redirects and the page's own
   * script may navigate on). The last test's navigation to the redirect URI (no server there) may
   * still be failing and interrupt it: then again, a few times.
   */
  async function open(url: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await page.goto(url, { waitUntil: 'commit' });
        return;
      } catch (err) {
        if (attempt === 4) throw err;
        await page.waitForTimeout(200);
      }
    }
  }

  /** Opens the hosted page's first stage; answers the code verifier. */
  async function openLogin() {
    const { url, verifier } = authorizeUrl();
    await open(url);
    await page.getByRole('radio', { name: 'Passkey or security key' }).waitFor();
    return verifier;
  }

  /** The browser's request for the app's redirect URI, once `act` has run (there is no server there). */
  async function arrival(act: () => Promise<unknown>): Promise<URL> {
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith(DEMO_SPA.redirectUri), { timeout: 20_000 }),
      act(),
    ]).catch(async (err: unknown) => {
      throw new Error(
        `${String(err)}; page said: ${await page
          .locator('#gh-message')
          .textContent()
          .catch(() => '?')}`,
      );
    });
    return new URL(request.url());
  }

  async function expectPasskeyTokens(callback: URL, verifier: string) {
    const code = callback.searchParams.get('code');
    expect(code, callback.href).to.be.a('string');
    const tokens = await redeemDemo(server, DEMO_SPA, code!, verifier);
    const idToken = decodeJwt(tokens.id_token as string);
    expect(idToken.sub).to.equal(server.alice.id);
    expect(idToken.amr).to.include.members(['hwk', 'mfa']);
  }

  it('registers a passkey with the browser ceremony (setup API); then the username field offers it (conditional mediation) and picking it signs in', async function () {
    // The page's conditional request starts a moment after the page shows; a registration
    // started before it would be aborted by it (one WebAuthn ceremony at a time), so the test
    // waits for it to be under way.
    await page.addInitScript(() => {
      const browser = globalThis as unknown as {
        navigator: { credentials: { get(o?: { mediation?: string }): Promise<unknown> } };
        ghConditionalStarted?: boolean;
      };
      const get = browser.navigator.credentials.get.bind(browser.navigator.credentials);
      browser.navigator.credentials.get = (o) => {
        if (o?.mediation === 'conditional') browser.ghConditionalStarted = true;
        return get(o);
      };
    });
    await openLogin();
    await page.waitForFunction(() => (globalThis as { ghConditionalStarted?: boolean }).ghConditionalStarted === true);
    expect(await page.locator('#gh-identifier').getAttribute('autocomplete')).to.equal('username webauthn');
    // The FIDO2 page module has loaded @simplewebauthn/browser from the server (no CDN).
    const started = await setup('initiation', { sub: server.alice.id, name: 'Laptop passkey' });
    expect(started.status, JSON.stringify(started.json)).to.equal(200);
    const response = await page.evaluate(
      (optionsJSON) =>
        (
          globalThis as unknown as {
            SimpleWebAuthnBrowser: { startRegistration(o: { optionsJSON: unknown }): Promise<unknown> };
          }
        ).SimpleWebAuthnBrowser.startRegistration({ optionsJSON }),
      started.json.data.fido2_options,
    );
    const finished = await setup('verification', {
      sub: server.alice.id,
      fido2_client_response: JSON.stringify(response),
    });
    expect(finished.status, JSON.stringify(finished.json)).to.equal(200);
    expect(finished.json.data.name).to.equal('Laptop passkey');
    const stored = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(stored.credentials).to.have.length(1);
    expect(stored.credentials[0]!.isResidentCredential).to.equal(true);

    // The page starts a conditional request as it loads; the virtual authenticator answers it
    // as a user picking the passkey in the autofill list would: no username, no button.
    await context.clearCookies();
    const { url, verifier } = authorizeUrl();
    const callback = await arrival(() => open(url));
    await expectPasskeyTokens(callback, verifier);
  });

  it('modal: the passkey chosen on the page with the username field empty signs in to a code; amr hwk+mfa', async function () {
    // From here on the page has no conditional mediation: only the modal ceremony runs.
    await page.addInitScript(() => {
      const page = globalThis as unknown as {
        PublicKeyCredential: { isConditionalMediationAvailable(): Promise<boolean> };
      };
      page.PublicKeyCredential.isConditionalMediationAvailable = async () => false;
    });
    await context.clearCookies();
    const verifier = await openLogin();
    await page.getByRole('radio', { name: 'Passkey or security key' }).check();
    const callback = await arrival(() => page.getByRole('button', { name: 'Continue' }).click());
    await expectPasskeyTokens(callback, verifier);
  });

  it('a passkey that cannot verify the user is refused with a clear message, and no login happens', async function () {
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    try {
      await context.clearCookies();
      await openLogin();
      await page.getByRole('radio', { name: 'Passkey or security key' }).check();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.locator('#gh-message.error').filter({ hasText: 'passkey was not used' }).waitFor({ timeout: 15_000 });
      expect(new URL(page.url()).pathname).to.equal('/login');
      // The other methods of the stage are still offered.
      expect(await page.getByRole('radio', { name: 'Password' }).count()).to.equal(1);
    } finally {
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
    }
  });

  describe('the offer of a passkey after a login', function () {
    const PASSWORD = 'a long enough password 42';
    /** A user with a password and an email address (so an emailed code signs them in); answers their id. */
    async function passwordUser(username: string) {
      const { id } = await server.gatehouse.container.cradle.users.create({
        username,
        email: `${username}@example.test`,
      });
      const res = await fetch(server.url('/verification-actions-srv/setup/PASSWORD/initiation'), {
        method: 'POST',
        headers: { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ sub: id, password: PASSWORD }),
      });
      expect(res.status).to.equal(200);
      return id;
    }

    async function passwordLogin(username: string, password: string) {
      await context.clearCookies();
      const verifier = await openLogin();
      await page.getByRole('textbox', { name: 'Username, email or phone' }).fill(username);
      await page.getByRole('radio', { name: 'Password' }).check();
      await page.getByRole('textbox', { name: 'Password' }).fill(password);
      await page.getByRole('button', { name: 'Continue' }).click();
      return verifier;
    }

    /** A login with a code emailed to the user: it proves the mailbox, not only a password. */
    async function emailLogin(username: string) {
      await context.clearCookies();
      const verifier = await openLogin();
      await page.getByRole('textbox', { name: 'Username, email or phone' }).fill(username);
      await page.getByRole('radio', { name: 'Email' }).check();
      // The code goes out after the answer: wait for a new message, not the last login's.
      const before = await outboxLatestText(server, `${username}@example.test`);
      await page.getByRole('button', { name: 'Send code' }).click();
      await page.locator('#gh-message.info').waitFor();
      const code = await outboxCode(server, `${username}@example.test`, (text) => text !== before);
      await page.getByRole('textbox', { name: 'Code from the email' }).fill(code);
      await page.getByRole('button', { name: 'Continue' }).click();
      return verifier;
    }

    it('after an emailed code: offers a passkey; creating it continues to the app, and the passkey then signs in', async function () {
      const carol = await passwordUser('carol-offer');
      const verifier = await emailLogin('carol-offer');
      await page.getByRole('heading', { name: 'Sign in faster next time' }).waitFor({ timeout: 15_000 });
      const callback = await arrival(() => page.getByRole('button', { name: 'Create a passkey' }).click());
      const tokens = await redeemDemo(server, DEMO_SPA, callback.searchParams.get('code')!, verifier);
      expect(decodeJwt(tokens.id_token as string).sub).to.equal(carol);
      expect((await methodOf(server, carol, 'FIDO2')).enrolled).to.equal(true);
    });

    it('after a password alone: no passkey is offered, even to a user with nothing else (it would sign in by itself; issue 25)', async function () {
      const erin = await passwordUser('erin-offer');
      const direct = await arrival(() => passwordLogin('erin-offer', PASSWORD));
      expect(direct.searchParams.get('code')).to.be.a('string');
      expect((await methodOf(server, erin, 'FIDO2')).enrolled).to.equal(false);
    });

    it('"Not now" continues to the app and is not asked again; a user with a second factor is not offered one after a password alone', async function () {
      await passwordUser('dave-offer');
      await emailLogin('dave-offer');
      await page.getByRole('heading', { name: 'Sign in faster next time' }).waitFor({ timeout: 15_000 });
      // The page says what "Not now" means, tied to the button (issue 29).
      const later = page.getByRole('button', { name: /Not now/ });
      expect(await later.getAttribute('aria-describedby')).to.equal('gh-later-note');
      expect(await page.locator('#gh-later-note').innerText()).to.equal(
        'If you choose not now, this is not offered again for 30 days.',
      );
      const callback = await arrival(() => later.click());
      expect(callback.searchParams.get('code')).to.be.a('string');
      const again = await arrival(() => emailLogin('dave-offer'));
      expect(again.searchParams.get('code')).to.be.a('string');

      // alice has TOTP: her password alone may not add a way to sign in.
      const store = server.gatehouse.container.cradle.services.credentials(server.alice.id, 'FIDO2');
      for (const c of await store.list()) await store.remove(c.id);
      const direct = await arrival(() => passwordLogin('alice', ALICE_PASSWORD));
      expect(direct.searchParams.get('code')).to.be.a('string');
    });
  });
});
