/**
 * Issue 13, hints and locales, over HTTP against the demo config: the hosted pages in the
 * language of `ui_locales`, then Accept-Language, then English (a deployment's message files
 * override German and add French); `ui_locales_supported` and `prompt_values_supported` in
 * discovery; `login_hint` prefilling the identifier (escaped, never skipping a stage or telling
 * whether the account exists, passed on to an app's own login UI); `prompt=select_account` with
 * "Continue as" and "Use another account"; `prompt=create` refused with invalid_request.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Browser, locationOf } from './support.js';
import {
  DEMO_APP,
  DEMO_SPA,
  codeFrom,
  fullLogin,
  stage,
  startAuthorization,
  startDemoServer,
  type DemoServer,
} from './demo-server.js';

const UI = 'http://127.0.0.1:9/login';

describe('hosted pages: locales, login_hint, prompt=select_account and prompt=create (issue 13)', function () {
  let server: DemoServer;
  let messages: string;

  before(async function () {
    messages = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-messages-'));
    // A deployment's files: German with one message of its own, and French (mostly untranslated).
    writeFileSync(path.join(messages, 'de.json'), JSON.stringify({ 'login.send': 'Code zuschicken' }));
    writeFileSync(
      path.join(messages, 'fr.json'),
      JSON.stringify({ 'login.title': 'Connexion à {app}', 'method.PASSWORD.label': 'Mot de passe' }),
    );
    server = await startDemoServer({
      host: 'localhost',
      configure(config) {
        config.locales.messages_dir = messages;
        config.apps.push({
          ...config.apps.find((a) => a.client_id === DEMO_SPA.id)!,
          client_id: 'ui-app',
          name: 'UI app',
          login_page_url: UI,
        });
      },
    });
  });
  after(async () => {
    await server?.close();
    rmSync(messages, { recursive: true, force: true });
  });

  /** The hosted login page a new authorization request opens, and its HTML. */
  async function loginPage(extra: Record<string, string> = {}, headers: Record<string, string> = {}) {
    const browser = new Browser(server);
    const auth = await startAuthorization(browser, server, DEMO_APP, extra, headers);
    expect(auth.location.pathname).to.equal('/login');
    const res = await browser.get(auth.location.pathname + auth.location.search, headers);
    expect(res.status).to.equal(200);
    return { browser, auth, html: await res.text() };
  }

  const langOf = (html: string) => /<html lang="([^"]*)">/.exec(html)?.[1];
  const titleOf = (html: string) => /<title>([^<]*)<\/title>/.exec(html)?.[1];
  const identifierValue = (html: string) => /id="gh-identifier"\s+type="text"\s+value="([^"]*)"/.exec(html)?.[1];
  const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

  describe('the language of a page', function () {
    it('ui_locales=de: German title, <html lang>, method labels and the script’s messages', async function () {
      const { html } = await loginPage({ ui_locales: 'de' });
      expect(langOf(html)).to.equal('de');
      expect(titleOf(html)).to.equal('Bei Gatehouse demo app anmelden');
      expect(html).to.include('Schritt 1 von 2');
      expect(html).to.include('Benutzername, E-Mail-Adresse oder Telefonnummer');
      expect(html).to.match(/>\s*Passwort<\/label/);
      expect(html).to.match(/>\s*Passkey oder Sicherheitsschlüssel<\/label/);
      // The deployment's own German message replaces the built-in one.
      expect(html).to.include('Code zuschicken');
      expect(html).to.not.include('Sign in to');
      // The script's messages travel as escaped JSON in an attribute, with the page module's.
      const attribute = /data-messages="([^"]*)"/.exec(html)![1]!;
      const script = JSON.parse(attribute.replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as Record<string, string>;
      expect(script['js.generic']).to.equal(
        'Das hat nicht funktioniert. Bitte prüfen Sie Ihre Eingabe und versuchen Sie es erneut.',
      );
      expect(script['method.FIDO2.js.follow']).to.match(/^Folgen Sie/);
      expect(script).to.not.have.property('login.title');
    });

    it('Accept-Language when ui_locales names nothing supported; ui_locales beats Accept-Language', async function () {
      const german = await loginPage({ ui_locales: 'tlh' }, { 'Accept-Language': 'de-AT, en;q=0.5' });
      expect(langOf(german.html)).to.equal('de');
      expect(titleOf(german.html)).to.equal('Bei Gatehouse demo app anmelden');
      const english = await loginPage({ ui_locales: 'en-GB de' }, { 'Accept-Language': 'de' });
      expect(langOf(english.html)).to.equal('en');
      expect(titleOf(english.html)).to.equal('Sign in to Gatehouse demo app');
    });

    it('an unknown language falls back to English', async function () {
      const { html } = await loginPage({ ui_locales: 'xx-YY' }, { 'Accept-Language': 'tlh, zz;q=0.8' });
      expect(langOf(html)).to.equal('en');
      expect(titleOf(html)).to.equal('Sign in to Gatehouse demo app');
      expect(html).to.include('Step 1 of 2');
    });

    it('a locale only the deployment adds (fr): its messages, English for the rest', async function () {
      const { html } = await loginPage({ ui_locales: 'fr-CA' });
      expect(langOf(html)).to.equal('fr');
      expect(titleOf(html)).to.equal('Connexion à Gatehouse demo app');
      expect(html).to.match(/>\s*Mot de passe<\/label/);
      expect(html).to.include('Step 1 of 2');
    });

    it('German error pages (the login page’s, the authorization and logout endpoints’) and the device binding page', async function () {
      const browser = new Browser(server);
      const unknown = await browser.get('/login?request_id=no-such-request', { 'Accept-Language': 'de' });
      expect(unknown.status).to.equal(404);
      const page = await unknown.text();
      expect(langOf(page)).to.equal('de');
      expect(titleOf(page)).to.equal('Anmeldeanfrage nicht gefunden');
      expect(page).to.include('Gehen Sie zurück zu der App');

      const badClient = await browser.get('/api/oauth2/authorize/?client_id=nobody&response_type=code&ui_locales=de');
      expect(badClient.status).to.equal(400);
      expect(badClient.headers.get('location')).to.equal(null);
      const authorizePage = await badClient.text();
      expect(langOf(authorizePage)).to.equal('de');
      expect(titleOf(authorizePage)).to.equal('Diese Anmeldeanfrage kann nicht abgeschlossen werden');
      expect(authorizePage).to.include('(invalid_client)');

      const logout = await browser.get(
        `/session/end_session?client_id=${DEMO_APP.id}&post_logout_redirect_uri=https%3A%2F%2Fevil.example%2F&ui_locales=de`,
      );
      expect(logout.status).to.equal(400);
      const logoutPage = await logout.text();
      expect(langOf(logoutPage)).to.equal('de');
      expect(logoutPage).to.include('(invalid_request)');

      // A device binding link with no live code, opened in a browser instead of the authenticator app.
      const binding = await browser.get('/devices/bind', { 'Accept-Language': 'de-DE,de;q=0.9,en;q=0.5' });
      expect(binding.status).to.equal(410);
      const bindingPage = await binding.text();
      expect(langOf(bindingPage)).to.equal('de');
      expect(titleOf(bindingPage)).to.equal('Dieser Link ist nicht mehr gültig');
    });

    it('discovery lists the locales (built-in and the deployment’s) and the prompt values that work', async function () {
      const res = await fetch(server.url('/.well-known/openid-configuration'));
      const metadata = (await res.json()) as Record<string, unknown>;
      expect(metadata.ui_locales_supported).to.deep.equal(['en', 'de', 'fr']);
      expect(metadata.prompt_values_supported).to.deep.equal(['none', 'login', 'consent', 'select_account']);
    });
  });

  describe('login_hint', function () {
    it('prefills the identifier of the first stage; the stage is still done', async function () {
      const { html } = await loginPage({ login_hint: 'alice' });
      expect(identifierValue(html)).to.equal('alice');
      expect(html).to.include('Step 1 of 2');
      expect(html).to.include('id="gh-PASSWORD-password"');
    });

    it('a hostile hint is escaped; one too long or with control characters is dropped', async function () {
      const hostile = '"><script>alert(1)</script><img src=x onerror=alert(2)>';
      const { html } = await loginPage({ login_hint: hostile });
      expect(identifierValue(html)).to.equal(
        '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;',
      );
      expect(html).to.not.include('<script>alert(1)');
      expect(html).to.not.include('<img src=x');
      expect(identifierValue((await loginPage({ login_hint: 'a'.repeat(257) })).html)).to.equal('');
      expect(identifierValue((await loginPage({ login_hint: 'alice\nbob' })).html)).to.equal('');
    });

    it('does not tell whether the account exists: the same page for a user and for nobody', async function () {
      const strip = (html: string) =>
        html
          .replace(/(request-id|request_id|csrf)="?[^"&\s]*/g, '$1')
          .replace(/value="[^"]*"/g, 'value')
          .replace(/request_id=[^"&]*/g, 'request_id');
      const known = await loginPage({ login_hint: 'alice' });
      const unknown = await loginPage({ login_hint: 'nobody-here' });
      expect(strip(unknown.html)).to.equal(strip(known.html));
    });

    it('goes to an app’s own login UI, with ui_locales', async function () {
      const browser = new Browser(server);
      const res = await browser.get(
        `/api/oauth2/authorize/?${new URLSearchParams({
          client_id: 'ui-app',
          response_type: 'code',
          scope: 'openid',
          redirect_uri: DEMO_SPA.redirectUri,
          state: 's',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
          ui_locales: 'de',
          login_hint: 'alice@example.test',
        }).toString()}`,
      );
      const ui = locationOf(res, server);
      expect(ui.origin + ui.pathname).to.equal(UI);
      expect(ui.searchParams.get('login_hint')).to.equal('alice@example.test');
      expect(ui.searchParams.get('ui_locales')).to.equal('de');
      const info = await fetch(server.url(`/public-srv/public/${ui.searchParams.get('requestId')}`));
      expect(((await info.json()) as { data: Record<string, unknown> }).data).to.deep.include({
        login_hint: 'alice@example.test',
      });
    });
  });

  describe('prompt=select_account', function () {
    /** A browser signed in as alice with a password (the SPA's one stage). */
    async function signedIn(): Promise<Browser> {
      const browser = new Browser(server);
      await fullLogin(browser, server, DEMO_SPA);
      return browser;
    }

    /** /authorize with prompt=select_account; the account page it sends the browser to. */
    async function accountChoice(browser: Browser, client = DEMO_SPA, extra: Record<string, string> = {}) {
      const auth = await startAuthorization(browser, server, client, { prompt: 'select_account', ...extra });
      expect(auth.location.pathname).to.equal('/login/account');
      const res = await browser.get(auth.location.pathname + auth.location.search);
      expect(res.status).to.equal(200);
      return { auth, res, html: await res.text(), requestId: auth.location.searchParams.get('request_id')! };
    }

    it('shows the signed-in account with both ways, in the page’s language and with the usual headers', async function () {
      const browser = await signedIn();
      const { res, html } = await accountChoice(browser, DEMO_SPA, { ui_locales: 'de' });
      expect(langOf(html)).to.equal('de');
      expect(titleOf(html)).to.equal('Konto wählen');
      expect(html).to.include('Sie sind als <strong>alice</strong> angemeldet.');
      expect(html).to.match(/id="gh-continue-as">\s*Weiter als alice\s*</);
      expect(html).to.include('>Anderes Konto verwenden<');
      expect(res.headers.get('content-security-policy')).to.include("form-action 'self' http://127.0.0.1:*");
      expect(res.headers.get('x-frame-options')).to.equal('DENY');
    });

    it('"Continue as" answers the app from the session (single sign-on)', async function () {
      const browser = await signedIn();
      const { auth, html, requestId } = await accountChoice(browser);
      expect(html).to.match(/Continue as alice/);
      const next = locationOf(
        await browser.postForm('/login/account', { request_id: requestId, csrf: csrfOf(html), choice: 'continue' }),
        server,
      );
      expect(await codeFrom(browser, server, next, auth, DEMO_SPA)).to.be.a('string');
    });

    it('"Continue as" for an app that asks for more goes on at the stage left, the user known', async function () {
      const browser = await signedIn();
      const { html, requestId } = await accountChoice(browser, DEMO_APP);
      const next = locationOf(
        await browser.postForm('/login/account', { request_id: requestId, csrf: csrfOf(html), choice: 'continue' }),
        server,
      );
      expect(next.pathname + next.search).to.equal(`/login?request_id=${encodeURIComponent(requestId)}`);
      const page = await (await browser.get(next.pathname + next.search)).text();
      // The stages left (the second factor), for alice: no identifier to type.
      expect(page).to.include('id="gh-TOTP-pass_code"');
      expect(page).to.not.include('id="gh-identifier"');
      expect(page).to.include('Signed in as <strong>alice</strong>.');
    });

    it('"Use another account" ends this sign-in and starts the request again at the first stage, without the session or the hint', async function () {
      const browser = await signedIn();
      const { auth, html, requestId } = await accountChoice(browser, DEMO_SPA, { login_hint: 'alice' });
      const again = locationOf(
        await browser.postForm('/login/account', { request_id: requestId, csrf: csrfOf(html), choice: 'other' }),
        server,
      );
      expect(again.pathname).to.equal('/api/oauth2/authorize/');
      expect(again.searchParams.get('prompt')).to.equal('login');
      expect(again.searchParams.get('login_hint')).to.equal(null);
      expect(again.searchParams.get('state')).to.equal(auth.state);
      const login = locationOf(await browser.get(again.pathname + again.search), server);
      expect(login.pathname).to.equal('/login');
      const page = await (await browser.get(login.pathname + login.search)).text();
      expect(page).to.include('Step 1 of 1');
      expect(page).to.include('id="gh-identifier"');
      expect(page).to.not.include('Signed in as');
      // The abandoned sign-in cannot be resumed.
      const resume = await browser.get(`/api/oauth2/authorize/resume?request_id=${encodeURIComponent(requestId)}`);
      expect(resume.status).to.equal(400);
      // The new login is a login like any other: it ends in a code.
      const next = await stage(browser, server, login.searchParams.get('request_id')!, 'PASSWORD', { identify: true });
      expect(await codeFrom(browser, server, next, auth, DEMO_SPA)).to.be.a('string');
    });

    it('refuses a form without its token (403) or without a choice (400), and a flow that did not ask (400)', async function () {
      const browser = await signedIn();
      const { html, requestId } = await accountChoice(browser);
      const forged = await browser.postForm('/login/account', { request_id: requestId, csrf: 'x', choice: 'other' });
      expect(forged.status).to.equal(403);
      expect(await forged.text()).to.include('(invalid_request)');
      const neither = await browser.postForm('/login/account', {
        request_id: requestId,
        csrf: csrfOf(html),
        choice: 'maybe',
      });
      expect(neither.status).to.equal(400);
      expect(await neither.text()).to.include('(invalid_request)');
      // Another browser cannot see or answer it.
      const other = await new Browser(server).get(`/login/account?request_id=${encodeURIComponent(requestId)}`);
      expect(other.status).to.equal(400);
      // A flow without prompt=select_account has no account page.
      const plain = await startAuthorization(browser, server, DEMO_APP);
      expect(plain.location.pathname).to.equal('/login');
      const noChoice = await browser.get(`/login/account?${plain.location.searchParams.toString()}`);
      expect(noChoice.status).to.equal(400);
      expect(await noChoice.text()).to.include('does not ask which account to use. (invalid_request)');
    });

    it('without a session there is nobody to choose: the login starts at the first stage', async function () {
      const auth = await startAuthorization(new Browser(server), server, DEMO_SPA, { prompt: 'select_account' });
      expect(auth.location.pathname).to.equal('/login');
    });
  });

  describe('prompt=create', function () {
    it('is refused at the redirect URI with invalid_request: no sign-up here', async function () {
      const auth = await startAuthorization(new Browser(server), server, DEMO_SPA, { prompt: 'create' });
      expect(auth.location.origin + auth.location.pathname).to.equal(DEMO_SPA.redirectUri);
      expect(auth.location.searchParams.get('error')).to.equal('invalid_request');
      expect(auth.location.searchParams.get('error_description')).to.equal(
        'prompt=create is not supported: this app offers no sign-up',
      );
      expect(auth.location.searchParams.get('state')).to.equal(auth.state);
      expect(auth.location.searchParams.get('iss')).to.equal(server.issuer);
    });
  });
});
