/**
 * Issue 29's "done when", in Chromium on the demo config, in English and in German: the texts
 * that say what to do (attempts left, when to try again, the reference to quote), sign-out from
 * the console, the account page and the demo client ending the Gatehouse session (the next
 * sign-in shows the login page), the console's 403 page and its way out, the passkey offer's
 * "Not now", the console's folded FDS verdicts and its Apps table on a phone, the brand from the
 * config (the app's on its login pages, the deployment's elsewhere) and the landing page, the
 * password's Show button, the resend countdown, the binding page's QR code and the PUSH number's
 * instruction. Every hosted page
 * reached is saved at 1280 and 390 px (test-output/screenshots/<locale>-<page>-<width>.png, to
 * be looked at by eye), and none may scroll sideways at 390 px.
 *
 * One server and one browser for the whole walk; each locale walks the same scenarios (one `it`
 * each: add a scenario as another `it` in `walkIn`).
 */
import { expect } from 'chai';
import type { BrowserContext, Page, Response as PageResponse } from 'playwright-core';
import { Authenticator } from '@gatehouse-auth/authenticator';
import { openChromium, requireChromium, type Chromium } from '../support/chromium.js';
import { DEMO_SPA } from '../oauth/demo-server.js';
import { bindingFor, onlyPush } from '../devices/support.js';
import { BRAND, capture, newWalker, startWalkServer, totpNow, type WalkServer, type Walker } from './walk-support.js';

/** What the pages say, per language. */
const TEXTS = {
  en: {
    acceptLanguage: 'en-US,en;q=0.9',
    wrong: (left: number) => `That did not work. Check and try again. ${left} attempts left.`,
    wrongOne: 'That did not work. Check and try again. 1 attempt left.',
    lastAttempt:
      'That did not work. Check and try again. That was the last attempt this way. Choose another way to sign in if one is offered, or start the sign-in again from the app.',
    blocked: 'This sign-in was blocked for security reasons.',
    retrySeconds: /Try again in (\d+) seconds?\./,
    retryMinutes: (n: number) => `Try again in ${n} minutes.`,
    retryOneSecond: 'Try again in 1 second.',
    pageReference: (id: string) => `Reference: ${id}`,
    errorReference: (id: string) => `Reference: ${id}. Quote it if you contact support.`,
    unknownRequest: 'Sign-in request not found',
    incompleteLink: 'This sign-in link is incomplete',
    badRequest: 'This sign-in request cannot be completed',
    laterNote: 'If you choose not now, this is not offered again for 30 days.',
    signedOut: 'Signed out',
    signedOutText:
      'You are signed out of Gatehouse: of this page, and of every app you signed in to with it in this browser.',
    signIn: 'Sign in',
    notAllowed: 'Your account may not use this page. Sign out and sign in with an administrator account.',
    verdicts: (n: number) => `${n} FDS rule verdicts`,
    step: (n: number) => `Step ${n} of 2`,
    renewBackupCodes: 'You get a new set to save; the codes you have now stop working.',
    landingIntro: 'This is the sign-in service of Walkway. Apps send you here to sign in.',
    landingAccount: 'Manage your account: sign-in methods, devices and sessions',
    support: 'Help and support',
    contactSupport: 'Contact support',
    show: 'Show',
    hide: 'Hide',
    resendIn: /^Send a new code in \d+ s$/,
    pushHint: (device: string, n: string) =>
      `Open your authenticator app on ${device} and type ${n} there, the number shown here.`,
  },
  de: {
    acceptLanguage: 'de-DE,de;q=0.9',
    wrong: (left: number) =>
      `Das hat nicht funktioniert. Bitte prüfen Sie Ihre Eingabe und versuchen Sie es erneut. Noch ${left} Versuche.`,
    wrongOne: 'Das hat nicht funktioniert. Bitte prüfen Sie Ihre Eingabe und versuchen Sie es erneut. Noch 1 Versuch.',
    lastAttempt:
      'Das hat nicht funktioniert. Bitte prüfen Sie Ihre Eingabe und versuchen Sie es erneut. ' +
      'Das war der letzte Versuch auf diesem Weg. Wählen Sie einen anderen Weg, falls einer angeboten wird, oder starten Sie die Anmeldung erneut in der App.',
    blocked: 'Diese Anmeldung wurde aus Sicherheitsgründen blockiert.',
    retrySeconds: /Versuchen Sie es in (\d+) Sekunden? erneut\./,
    retryMinutes: (n: number) => `Versuchen Sie es in ${n} Minuten erneut.`,
    retryOneSecond: 'Versuchen Sie es in 1 Sekunde erneut.',
    pageReference: (id: string) => `Referenz: ${id}`,
    errorReference: (id: string) => `Referenz: ${id}. Geben Sie sie an, wenn Sie sich an den Support wenden.`,
    unknownRequest: 'Anmeldeanfrage nicht gefunden',
    incompleteLink: 'Dieser Anmeldelink ist unvollständig',
    badRequest: 'Diese Anmeldeanfrage kann nicht abgeschlossen werden',
    laterNote: 'Wählen Sie „Jetzt nicht“, wird Ihnen das 30 Tage lang nicht mehr angeboten.',
    signedOut: 'Abgemeldet',
    signedOutText:
      'Sie sind von Gatehouse abgemeldet: von dieser Seite und von jeder App, bei der Sie sich in diesem Browser damit angemeldet haben.',
    signIn: 'Anmelden',
    notAllowed: 'Ihr Konto darf diese Seite nicht verwenden. Melden Sie sich ab und mit einem Administratorkonto an.',
    verdicts: (n: number) => `${n} FDS-Regelentscheidungen`,
    step: (n: number) => `Schritt ${n} von 2`,
    renewBackupCodes: 'Sie erhalten neue Codes zum Aufbewahren; die bisherigen gelten dann nicht mehr.',
    landingIntro: 'Dies ist der Anmeldedienst von Walkway. Apps schicken Sie hierher, damit Sie sich anmelden.',
    landingAccount: 'Ihr Konto verwalten: Anmeldemethoden, Geräte und Sitzungen',
    support: 'Hilfe und Support',
    contactSupport: 'Support kontaktieren',
    show: 'Anzeigen',
    hide: 'Verbergen',
    resendIn: /^Neuen Code in \d+ s senden$/,
    pushHint: (device: string, n: string) =>
      `Öffnen Sie Ihre Authenticator-App (${device}) und geben Sie dort ${n} ein, die hier angezeigte Zahl.`,
  },
} as const;
type Locale = keyof typeof TEXTS;

/** What the walk reads of an element in the page. */
interface PageElement {
  className: string;
  textContent: string | null;
}

/** Phones of the walk's people, one per locale and role (the SMS method needs one). */
const PHONES = { en: ['+15551230101', '+15551230102'], de: ['+15551230201', '+15551230202'] } as const;

describe('issue 29 walk: the hosted pages as people meet them (Chromium, demo config)', function () {
  this.timeout(120_000);

  let walk: WalkServer;
  let chrome: Chromium | undefined;
  let context: BrowserContext;
  let page: Page;

  before(async function () {
    requireChromium(this);
    walk = await startWalkServer();
    chrome = await openChromium();
    context = chrome.context;
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(10_000);
  });

  after(async () => {
    await chrome?.close();
    await walk?.close();
  });

  const url = (p: string) => walk.server.url(p);
  const text = async (selector: string) => (await page.locator(selector).innerText()).trim();
  const path = () => new URL(page.url()).pathname;

  /** Fills the first stage (identifier and password) and submits it. */
  async function passwordStage(who: { username: string }, password: string): Promise<void> {
    await page.locator('#gh-identifier').fill(who.username);
    await page.locator('#gh-PASSWORD-password').fill(password);
    await page.locator('#gh-submit').click();
  }

  /** The second stage's method, chosen where the page offers a choice. */
  async function choose(method: string): Promise<void> {
    const radio = page.locator(`input[name="method"][value="${method}"]`);
    if (await radio.isVisible()) await radio.check();
  }

  /**
   * Signs in on the login page in front of the browser: password, then TOTP (or a backup code);
   * ends wherever the login sends the browser (the app, or a passkey offer first).
   */
  async function signIn(who: Walker, second: 'TOTP' | 'BACKUPCODE' = 'TOTP'): Promise<void> {
    expect(path()).to.equal('/login');
    await passwordStage(who, who.password);
    await page.locator(`input[name="method"][value="${second}"]`).waitFor({ state: 'attached' });
    await choose(second);
    const code = second === 'TOTP' ? await totpNow(walk.server, who) : who.backupCodes.pop()!;
    await page.locator(`#gh-${second}-pass_code`).fill(code);
    await Promise.all([page.waitForURL((u) => u.pathname !== '/login'), page.locator('#gh-submit').click()]);
    // The passkey offer comes once per person: "Not now" goes on to where the sign-in was going.
    if (path() === '/login/offer') {
      await Promise.all([page.waitForURL((u) => u.pathname !== '/login/offer'), page.locator('#gh-later').click()]);
    }
  }

  /** Where the message of the login page settles after a submit: its next text. */
  async function nextMessage(before: string): Promise<string> {
    // Run in the page (a function, not a string: the page's CSP forbids eval); the tests'
    // TypeScript has no DOM types, hence the document's shape spelled out.
    await page.waitForFunction((old) => {
      const doc = (globalThis as unknown as { document: { getElementById(id: string): PageElement | null } }).document;
      const el = doc.getElementById('gh-message');
      return !!el && el.className.includes('error') && el.textContent !== old;
    }, before);
    return text('#gh-message');
  }

  /** The methods the login page's current stage offers (its radio buttons). */
  async function methodsOffered(): Promise<string[]> {
    const radios = await page.locator('input[name="method"]').all();
    return Promise.all(radios.map(async (radio) => (await radio.getAttribute('value'))!));
  }

  /** A form's field is styled as the page's others: as wide as the form's submit button. */
  async function styledField(field: string): Promise<void> {
    const box = await page.locator(field).boundingBox();
    const button = await page.locator(`form:has(${field}) button[type="submit"]`).boundingBox();
    expect(box?.width, `${field} as wide as its button`).to.equal(button?.width);
  }

  /** Ends at the Gatehouse login page of the demo client: a fresh sign-in (not a silent one). */
  async function demoClientAsksAgain(): Promise<void> {
    await page.goto(walk.clientUrl);
    expect(path(), 'the demo client signs in through the login page, not silently').to.equal('/login');
    expect(await page.locator('#gh-identifier').count()).to.equal(1);
  }

  /** A computed style of the first element a selector finds. */
  async function style(selector: string, property: 'color' | 'backgroundColor'): Promise<string> {
    return page
      .locator(selector)
      .first()
      .evaluate(
        (el, p) =>
          (globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }).getComputedStyle(el)[p]!,
        property,
      );
  }

  /** An image's natural width: 0 when the browser did not draw it (a CSP block leaves it so). */
  function drawnWidth(selector: string): Promise<number> {
    return page
      .locator(selector)
      .evaluate((el: { complete: boolean; naturalWidth: number }) => (el.complete ? el.naturalWidth : 0));
  }

  /**
   * The page shows a brand: its logo file drawn (served by Gatehouse under the strict CSP) with
   * its alternative text (the product name, or none where the name follows as text), the support
   * link below the page and the brand's color on `colored`.
   */
  async function brandShown(logoPath: string, alt: string, colored: string, color: string): Promise<void> {
    const logo = page.locator('#gh-brand-logo');
    expect(new URL((await logo.getAttribute('src'))!, url('/')).pathname).to.equal(logoPath);
    expect(await logo.getAttribute('alt')).to.equal(alt);
    expect(await drawnWidth('#gh-brand-logo'), 'the logo is drawn').to.be.greaterThan(0);
    expect(await page.locator('#gh-support').getAttribute('href')).to.equal(BRAND.global.support_url);
    expect(await style(colored, colored.startsWith('a') ? 'color' : 'backgroundColor')).to.equal(color);
  }

  function walkIn(locale: Locale): void {
    const T = TEXTS[locale];
    const shot = (name: string) => capture(page, locale, name);
    let walker: Walker;
    let target: Walker;

    before(async () => {
      const [mine, theirs] = PHONES[locale];
      walker = await newWalker(walk.server, `walker-${locale}`, mine);
      target = await newWalker(walk.server, `target-${locale}`, theirs);
      await context.clearCookies();
      await context.setExtraHTTPHeaders({ 'Accept-Language': T.acceptLanguage });
    });

    it("the brand from the config: the landing page and the account link; the app's brand on its login page; Show on the password", async () => {
      await context.clearCookies();
      // An API client at / keeps the JSON 404 it always got; a browser gets the landing page.
      const api = await fetch(url('/'), { headers: { Accept: 'application/json' } });
      expect(api.status).to.equal(404);
      expect(((await api.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
      const landing = (await page.goto(url('/')))!;
      expect(landing.status()).to.equal(200);
      expect(await text('h1')).to.equal(BRAND.global.title);
      expect(await text('main > p')).to.equal(T.landingIntro);
      expect(await text('#gh-account')).to.equal(T.landingAccount);
      expect(await page.locator('#gh-docs').getAttribute('href')).to.equal(BRAND.global.docs_url);
      expect(await text('#gh-support')).to.equal(T.support);
      await brandShown('/branding/logo', BRAND.global.title, 'a#gh-account', BRAND.global.button);
      await shot('landing');

      // The demo app's login page: its own title, logo and color, the deployment's support link.
      await page.goto(walk.clientUrl);
      expect(path()).to.equal('/login');
      expect(await page.title()).to.match(new RegExp(` – ${BRAND.app.title}$`));
      await brandShown('/branding/apps/demo-app/logo', BRAND.app.title, 'button#gh-submit', BRAND.app.button);
      // Show / Hide on the password: the field becomes text and back, the button says which.
      const password = page.locator('#gh-PASSWORD-password');
      await password.fill('what I typed');
      const toggle = page.locator('button.reveal-toggle').first();
      expect(await toggle.innerText()).to.equal(T.show);
      await toggle.click();
      expect(await password.getAttribute('type')).to.equal('text');
      expect(await toggle.innerText()).to.equal(T.hide);
      expect(await toggle.getAttribute('aria-pressed')).to.equal('true');
      await shot('login-password-shown');
      await toggle.click();
      expect(await password.getAttribute('type')).to.equal('password');
      expect(await toggle.innerText()).to.equal(T.show);
      expect(await password.inputValue()).to.equal('what I typed');
    });

    it('a wrong password or code says how many attempts are left; a back-off says when to try again, with the reference', async () => {
      await page.goto(walk.clientUrl);
      expect(path()).to.equal('/login');
      expect(await text('.step')).to.equal(T.step(1));
      await shot('login-password');
      // The first stage's other ways in (a passkey), each as the page shows it before it starts.
      for (const method of await methodsOffered()) {
        if (method === 'PASSWORD') continue;
        await choose(method);
        await shot(`login-1-${method}`);
      }
      await choose('PASSWORD');
      await passwordStage(target, 'not the password');
      expect(await nextMessage('')).to.equal(T.wrong(4));
      await shot('login-wrong-password');

      /** The second stage with the authenticator app chosen; a new sign-in from the demo client with `fresh`. */
      const secondStage = async (fresh: boolean) => {
        if (fresh) await page.goto(walk.clientUrl);
        await passwordStage(target, target.password);
        await page.locator('input[name="method"][value="TOTP"]').waitFor({ state: 'attached' });
        await choose('TOTP');
      };
      await secondStage(false);
      // Wrong codes until the factor rests for minutes. A spent sign-in is started again from the
      // app, and each back-off in seconds is waited out on the server's clock, as a person would.
      let message = '';
      const messages: string[] = [];
      let seconds = 0;
      let blocked: PageResponse | undefined;
      for (let tries = 0; tries < 40 && !message.includes(T.retryMinutes(3)); tries++) {
        const wait = T.retrySeconds.exec(message);
        if (wait) {
          seconds++;
          walk.server.clock.advance(Number(wait[1]) + 1);
        }
        if (message === T.lastAttempt) {
          await secondStage(true);
          message = '';
        }
        const answer = page.waitForResponse((r) => r.url().includes('/verification-srv/authentication/TOTP/'));
        await page.locator('#gh-TOTP-pass_code').fill('000000');
        await page.locator('#gh-submit').click();
        blocked = await answer;
        message = await nextMessage(message);
        messages.push(message);
        if (messages.length === 5) await shot('login-last-attempt');
        if (T.retrySeconds.test(message) && seconds === 0) await shot('login-retry-seconds');
      }
      expect(messages.slice(0, 5)).to.deep.equal([T.wrong(4), T.wrong(3), T.wrong(2), T.wrongOne, T.lastAttempt]);
      expect(seconds, 'back-offs in seconds on the way').to.be.greaterThan(0);
      // The first back-off (after the free failures) is a second: in the singular.
      expect(messages[5]).to.match(new RegExp(`^${T.blocked} ${T.retryOneSecond} `.replaceAll('.', '\\.')));
      // A block the person cannot lift is explained with the reference of the answer's request id.
      const reference = blocked!.headers()['x-request-id']!;
      expect(reference).to.be.a('string').and.not.equal('');
      expect(message).to.equal(`${T.blocked} ${T.retryMinutes(3)} ${T.pageReference(reference)}`);
      await shot('login-retry-minutes');
    });

    it('error pages name the reference to quote: the X-Request-Id of their answer', async () => {
      const cases = [
        {
          name: 'error-unknown-request',
          path: '/login?request_id=no-such-request',
          status: 404,
          title: T.unknownRequest,
        },
        { name: 'error-incomplete-link', path: '/login', status: 400, title: T.incompleteLink },
        {
          name: 'error-unknown-app',
          path: `/api/oauth2/authorize/?client_id=no-such-app&response_type=code&redirect_uri=${encodeURIComponent(DEMO_SPA.redirectUri)}`,
          status: 400,
          title: T.badRequest,
        },
      ];
      for (const c of cases) {
        const response = (await page.goto(url(c.path)))!;
        expect(response.status(), c.path).to.equal(c.status);
        expect(await text('h1')).to.equal(c.title);
        const id = response.headers()['x-request-id']!;
        expect(id).to.be.a('string').and.not.equal('');
        // The brand's support link follows the reference.
        expect(await text('.reference')).to.equal(`${T.errorReference(id)} ${T.contactSupport}`);
        const support = page.locator('.reference a');
        expect(await support.getAttribute('href')).to.equal(BRAND.global.support_url);
        await shot(c.name);
      }
    });

    it('the demo client: a wrong code says the attempts left; "Not now" on the passkey offer says what it means; sign-out ends the session', async () => {
      await page.goto(walk.clientUrl);
      expect(path()).to.equal('/login');
      await passwordStage(walker, walker.password);
      await page.locator('input[name="method"][value="TOTP"]').waitFor({ state: 'attached' });
      expect(await text('.step')).to.equal(T.step(2));
      // The second stage's methods this person has, each as the page shows it.
      const methods = await methodsOffered();
      expect(methods).to.include.members(['TOTP', 'SMS', 'BACKUPCODE']);
      for (const method of methods) {
        await choose(method);
        await shot(`login-2-${method}`);
      }
      await choose('SMS');
      await page.locator('#gh-send').click();
      await page.locator('#gh-SMS-pass_code').waitFor();
      // The resend button counts down the demo config's 30 s before it may send again.
      const resend = page.locator('#gh-send');
      expect(await resend.isDisabled()).to.equal(true);
      expect((await resend.innerText()).trim()).to.match(T.resendIn);
      await shot('login-2-SMS-sent');
      await choose('TOTP');
      await page.locator('#gh-TOTP-pass_code').fill('000000');
      await page.locator('#gh-submit').click();
      expect(await nextMessage('')).to.equal(T.wrong(4));
      await page.locator('#gh-TOTP-pass_code').fill(await totpNow(walk.server, walker));
      await Promise.all([page.waitForURL((u) => u.pathname !== '/login'), page.locator('#gh-submit').click()]);

      // The passkey offer, once: "Not now" says it is not offered again for 30 days.
      expect(path()).to.equal('/login/offer');
      const later = page.locator('#gh-later');
      expect(await later.getAttribute('aria-describedby')).to.equal('gh-later-note');
      expect(await text('#gh-later-note')).to.equal(T.laterNote);
      await shot('passkey-offer');
      await Promise.all([page.waitForURL(/\/callback/), later.click()]);
      expect(await text('h1')).to.equal(`Signed in as ${walker.username}`);
      await shot('demo-client-signed-in');

      await Promise.all([page.waitForURL(/\/signed-out$/), page.locator('#sign-out').click()]);
      expect(await text('h1')).to.equal('Signed out');
      await shot('demo-client-signed-out');
      await demoClientAsksAgain();
    });

    it('the account page: its pages, and "Sign out" ends the Gatehouse session', async () => {
      await page.goto(url('/account'));
      await signIn(walker);
      expect(path()).to.equal('/account');
      // The account page belongs to the deployment: the global brand, not the app's it came from.
      expect(await text('header a.brand')).to.match(new RegExp(`^${BRAND.global.title} · `));
      await brandShown('/branding/logo', '', 'a#gh-support', BRAND.global.button);
      // The backup codes' renewal in the page's language (German showed the plugin's English).
      expect(await text('#gh-m-BACKUPCODE-text')).to.equal(T.renewBackupCodes);
      await shot('account');
      // Every "Add" the page links to (a method's setup page), and the account's own pages.
      const adds = await page.locator('a[href*="/account/add/"]').all();
      const addPaths = await Promise.all(
        adds.map(async (a) => new URL((await a.getAttribute('href'))!, url('/')).pathname),
      );
      expect(addPaths).to.include('/account/add/SMS');
      const subs = [...addPaths.map((p) => p.slice('/account/'.length)), 'password', 'delete', 'address/email'];
      for (const sub of subs) {
        const response = (await page.goto(url(`/account/${sub}`)))!;
        expect(response.status(), sub).to.equal(200);
        await shot(`account-${sub.replace('/', '-')}`);
      }
      await page.goto(url('/account'));
      await Promise.all([page.waitForURL(/\/account\/sign-out$/), page.locator('#gh-sign-out').click()]);
      expect(await text('h1')).to.equal(T.signedOut);
      expect(await text('main p >> nth=0')).to.equal(T.signedOutText);
      await shot('account-signed-out');
      // The demo client and the account page both ask again: the browser session is over.
      await demoClientAsksAgain();
      await page.goto(url('/account'));
      expect(path()).to.equal('/login');
    });

    it('consent, "Forgot password?" and the device code page', async () => {
      // The demo app asks no consent; prompt=consent shows the page to a signed-in person.
      await page.goto(walk.clientUrl);
      await signIn(walker, 'BACKUPCODE');
      const consent = new URL(url('/api/oauth2/authorize/'));
      consent.search = new URLSearchParams({
        client_id: DEMO_SPA.id,
        response_type: 'code',
        redirect_uri: DEMO_SPA.redirectUri,
        scope: 'openid profile',
        prompt: 'consent',
        state: 'walk',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }).toString();
      await page.goto(consent.href);
      expect(path()).to.equal('/login/consent');
      await shot('consent');

      await context.clearCookies();
      await page.goto(walk.clientUrl);
      await page.locator('#gh-PASSWORD-link').click();
      await page.waitForURL(/\/recovery/);
      await styledField('#gh-identifier');
      await shot('recovery');
      await page.locator('#gh-identifier').fill(walker.username);
      await Promise.all([page.waitForURL(/\/recovery\/code/), page.locator('button[type="submit"]').first().click()]);
      await styledField('#gh-code');
      await shot('recovery-code');

      await page.goto(url('/device'));
      await styledField('#gh-user-code');
      await shot('device-code');
    });

    it("a non-admin's console 403 page leads out: sign out, then an admin signs in", async () => {
      await context.clearCookies();
      await page.goto(url('/console/users'));
      // The console's answer once the sign-in comes back (the first one sent the browser to sign in).
      const response = page.waitForResponse((r) => new URL(r.url()).pathname === '/console/users');
      await signIn(walker);
      expect((await response).status()).to.equal(403);
      expect(await page.getByRole('alert').innerText()).to.contain(T.notAllowed);
      expect(await page.locator('nav').count()).to.equal(0);
      await shot('console-403');
      await Promise.all([page.waitForURL(/\/console\/sign-out$/), page.locator('#gh-sign-out').click()]);
      expect(await text('h1')).to.equal(T.signedOut);
      await shot('console-signed-out');
      await page.getByRole('link', { name: T.signIn }).click();
      await page.waitForURL(/\/login/);
      const admin = { ...walk.server.alice, username: 'alice', password: walker.password, backupCodes: [] };
      await signIn(admin);
      expect(path()).to.equal('/console/users');
      await shot('console-users');
    });

    it('the console: folded FDS verdicts, the Apps table on a phone, and "Sign out" ends the session', async () => {
      // The target's refused sign-ins have their rules' verdicts under each step: a verification,
      // a blocked step (verification.blocked), or a step with no event of its own.
      await page.goto(url(`/console/users/${target.id}`));
      const events = page.locator('section[aria-labelledby="gh-events"]');
      const folds = events.locator('details.verdicts');
      expect(await folds.count()).to.be.greaterThan(0);
      // Every fds.verdict is folded: no row is a lone verdict, and the folds list every one.
      const rows = events.locator('tbody > tr');
      for (const row of await rows.all()) {
        if ((await row.locator('td').nth(1).locator('> code').innerText()) !== 'fds.verdict') continue;
        expect(await row.locator('details.verdicts').count(), 'a verdict row heads its step').to.equal(1);
      }
      // The page lists the 25 newest events: their verdicts are all in the folds.
      const newest = await walk.server.gatehouse.container.cradle.events.recent({ userId: target.id, limit: 25 });
      const verdicts = newest.filter((e) => e.type === 'fds.verdict');
      expect(verdicts.length).to.be.greaterThan(0);
      expect(await folds.locator('li').count()).to.equal(verdicts.length);
      const blocked = events.locator('tbody > tr', { has: page.locator('code', { hasText: 'verification.blocked' }) });
      expect(await blocked.count(), 'the blocked steps have rows').to.be.greaterThan(0);
      for (const row of await blocked.all()) expect(await row.locator('details.verdicts').count()).to.equal(1);
      for (const fold of await folds.all()) {
        expect(await fold.getAttribute('open'), 'folded: closed until opened').to.equal(null);
        const summary = (await fold.locator('summary').innerText()).trim();
        const count = Number(/\d+/.exec(summary)?.[0]);
        expect(summary).to.equal(T.verdicts(count));
        expect(await fold.locator('li').count()).to.equal(count);
      }
      // Opened, they name the rules: the velocity rule judged every one of these steps.
      const rules: string[] = [];
      for (const fold of await folds.all()) {
        await fold.locator('summary').click();
        rules.push(...(await fold.locator('li code').allInnerTexts()));
      }
      expect(rules).to.include('velocity');
      await shot('console-user-events');
      await page.goto(url(`/console/users/${walk.server.alice.id}`));
      await shot('console-user');
      await page.goto(url('/console/apps'));
      await shot('console-apps');
      await page.goto(url('/console/apps/demo-app'));
      await shot('console-app');
      await page.goto(url('/console/plugins'));
      await shot('console-plugins');
      await Promise.all([page.waitForURL(/\/console\/sign-out$/), page.locator('#gh-sign-out').click()]);
      expect(await text('h1')).to.equal(T.signedOut);
      await demoClientAsksAgain();
      await page.goto(url('/console'));
      expect(path()).to.equal('/login');
    });

    it("the device binding page shows the link's QR code; PUSH shows the number with its instruction and goes on once approved", async () => {
      await context.clearCookies();
      // The setup API's binding link, opened in the browser as on a computer: its QR code drawn.
      const { binding_url } = await bindingFor(walk.server, 'PUSH', walker.id);
      expect((await page.goto(binding_url))!.status()).to.equal(200);
      expect(await drawnWidth('#gh-qr'), 'the QR code is drawn').to.be.greaterThan(0);
      // It belongs to the deployment, not to an app: the global brand.
      await brandShown('/branding/logo', BRAND.global.title, 'a#gh-support', BRAND.global.button);
      await shot('device-binding');
      // The phone scans it: a simulated authenticator binds itself with that link.
      const name = `${walker.username}'s phone`;
      const device = await Authenticator.create({ now: () => walk.server.clock.now(), name });
      expect((await device.bind(binding_url)).sub).to.equal(walker.id);

      await page.goto(walk.clientUrl);
      await passwordStage(walker, walker.password);
      await page.locator('input[name="method"][value="PUSH"]').waitFor({ state: 'attached' });
      await choose('PUSH');
      await page.locator('#gh-submit').click();
      const shown = page.locator('#gh-PUSH-number');
      const number = (await shown.textContent({ timeout: 10_000 }))!;
      expect(number).to.match(/^\d\d$/);
      // The instruction is visible text tied to the number, not a tooltip.
      const hint = page.locator('#gh-PUSH-number-hint');
      expect(await hint.isVisible()).to.equal(true);
      expect(await hint.textContent()).to.equal(T.pushHint(name, number));
      expect(await shown.getAttribute('aria-describedby')).to.equal('gh-PUSH-number-hint');
      await shot('login-2-PUSH');
      const push = await onlyPush(device);
      await device.acknowledge(push);
      await device.allow(push);
      await Promise.all([
        page.waitForURL(/\/callback/, { timeout: 15_000 }),
        device.verify(push, { passCode: number }),
      ]);
      expect(await text('h1')).to.equal(`Signed in as ${walker.username}`);
      await Promise.all([page.waitForURL(/\/signed-out$/), page.locator('#sign-out').click()]);
    });
  }

  describe('in English', () => walkIn('en'));
  describe('in German', () => walkIn('de'));
});
