/**
 * Registration in Chromium (issue 27, "Done when"): an app sends the browser to /authorize with
 * prompt=create (built with oauth4webapi: PKCE S256, state, nonce); the registrant fills in the
 * hosted form, types the code sent to their email, and lands back in the app, whose client
 * library redeems the code and validates the ID token. In English and in German (ui_locales=de),
 * with no CSP violation or script error on the way.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';
import * as oauth from 'oauth4webapi';
import type { BrowserContext, Page } from 'playwright-core';
import { buildApp, createLogger, listen, parseConfig, type Gatehouse, type RunningServer } from '@gatehouse-auth/core';
import { openChromium, requireChromium, type Chromium } from '../../../test/support/chromium.js';
import { expectRevealButtons } from '../../../test/support/password-reveal.js';
import { watchPage } from '../../../test/browser/site-support.js';
import { freePort } from '../../../test/oauth/support.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CAPTURE = path.join(here, '../../../test/verification/fixtures/capture-channel.js');
const KEY = Buffer.alloc(32, 5).toString('base64');
const CLIENT_ID = 'club';
const CLIENT_SECRET = 'club-secret-0123456789abcdef0123456789abcdef';
const PASSWORD = 'a passphrase long enough to register';
/** The issuer runs on http: oauth4webapi refuses that unless told. */
const insecure = { [oauth.allowInsecureRequests]: true } as const;

interface Sent {
  to: string;
  subject?: string;
  text: string;
}

describe('registration (Chromium)', function () {
  this.timeout(90_000);

  let gatehouse: Gatehouse;
  let running: RunningServer | undefined;
  let site: http.Server | undefined;
  let chrome: Chromium | undefined;
  let context: BrowserContext;
  let page: Page;
  let watch: Awaited<ReturnType<typeof watchPage>>;
  let issuer: string;
  let as: oauth.AuthorizationServer;
  let redirectUri: string;
  let sent: Sent[];
  const hits: URL[] = [];
  const client: oauth.Client = { client_id: CLIENT_ID };
  const auth = oauth.ClientSecretBasic(CLIENT_SECRET);

  before(async function () {
    requireChromium(this);
    sent = ((await import(pathToFileURL(CAPTURE).href)) as { sent: Sent[] }).sent;
    // The app's redirect URI: a tiny server that records every URL it is sent to.
    site = http.createServer((req, res) => {
      hits.push(new URL(req.url ?? '/', `http://${req.headers.host}`));
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<h1>Back at the club</h1>');
    });
    await new Promise<void>((resolve) => site!.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(site.address() as AddressInfo).port}/cb`;
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    const config = parseConfig(
      {
        issuer,
        server: { host: '127.0.0.1', port },
        database: { url: 'sqlite::memory:' },
        log: { level: 'silent' },
        secrets: { encryption_key: KEY },
        plugins: [
          { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
          { path: CAPTURE },
          { name: '@gatehouse-auth/grant-authorization-code' },
          { name: '@gatehouse-auth/management' },
          { name: '@gatehouse-auth/page-login' },
          { name: '@gatehouse-auth/verification-api' },
          { name: '@gatehouse-auth/registration', options: { email_channel: 'capture' } },
        ],
        apps: [
          {
            client_id: CLIENT_ID,
            name: 'Chess Club',
            client_secret: CLIENT_SECRET,
            token_endpoint_auth_method: 'client_secret_basic',
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code'],
            scopes: ['openid', 'profile', 'email'],
            login_stages: [['PASSWORD']],
            registration: {
              enabled: true,
              fields: [
                { name: 'email', required: true },
                { name: 'given_name', required: true },
                { name: 'family_name' },
              ],
              terms_version: '3',
            },
          },
        ],
      },
      {},
    );
    gatehouse = await buildApp(config, { logger: createLogger('silent') });
    running = await listen(gatehouse);
    as = await oauth.processDiscoveryResponse(new URL(issuer), await oauth.discoveryRequest(new URL(issuer), insecure));
    chrome = await openChromium(['--lang=en-US']);
    context = chrome.context;
    page = context.pages()[0] ?? (await context.newPage());
    watch = await watchPage(context, page);
  });

  after(async () => {
    await chrome?.close();
    await running?.shutdown();
    site?.closeAllConnections();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
  });

  beforeEach(async () => {
    await context?.clearCookies();
  });

  /** Registers through prompt=create with the form's labels in the page's language; returns the ID token's claims. */
  async function register(
    email: string,
    texts: {
      email: string;
      given: string;
      password: string;
      repeat: string;
      create: string;
      code: string;
      confirm: string;
    },
    uiLocales?: string,
  ) {
    expect(as.prompt_values_supported).to.include('create');
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(as.authorization_endpoint!);
    const params: Record<string, string> = {
      client_id: CLIENT_ID,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid profile email',
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      prompt: 'create',
      ...(uiLocales ? { ui_locales: uiLocales } : {}),
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    await page.goto(url.href);
    expect(new URL(page.url()).pathname).to.equal('/register');

    await page.getByRole('textbox', { name: texts.email }).fill(email);
    await page.getByRole('textbox', { name: texts.given }).fill('Magnus');
    // Both password fields have their Show / Hide button, in the page's language (issue 29).
    const [show, hide] = uiLocales === 'de' ? ['Anzeigen', 'Verbergen'] : ['Show', 'Hide'];
    expect(await expectRevealButtons(page, show, hide)).to.equal(2);
    await page.getByLabel(texts.password, { exact: true }).fill(PASSWORD);
    await page.getByLabel(texts.repeat, { exact: true }).fill(PASSWORD);
    await page.getByRole('checkbox').check();
    const before = sent.length;
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/register/code'),
      page.getByRole('button', { name: texts.create }).click(),
    ]);
    for (let i = 0; i < 100 && !sent.slice(before).some((m) => m.to === email); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const message = sent.slice(before).find((m) => m.to === email)!;
    const code = /\b(\d{6})\b/.exec(message.text)![1]!;

    await page.getByRole('textbox', { name: texts.code }).fill(code);
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(`${redirectUri}?`)),
      page.getByRole('button', { name: texts.confirm }).click(),
    ]);
    expect(await watch.problems()).to.deep.equal([]);

    // The app's side, all by oauth4webapi: state and iss, the code with the PKCE verifier, the ID token.
    const callback = hits.filter((u) => u.searchParams.get('state') === state);
    expect(callback).to.have.length(1);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      oauth.validateAuthResponse(as, client, callback[0]!, state),
      redirectUri,
      codeVerifier,
      insecure,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: nonce,
      requireIdToken: true,
    });
    expect(tokens.access_token).to.be.a('string');
    return { claims: oauth.getValidatedIdTokenClaims(tokens)!, message };
  }

  it('registers in English with an email code and lands in the app with tokens', async () => {
    const email = `magnus${process.pid}@example.test`;
    const { claims, message } = await register(email, {
      email: 'Email address',
      given: 'First name',
      password: 'Password',
      repeat: 'Repeat the password',
      create: 'Create account',
      code: 'Code',
      confirm: 'Confirm',
    });
    expect(message.subject).to.equal('Your code for Chess Club');
    const user = (await gatehouse.container.cradle.users.findByIdentifier(email))!;
    expect(claims.sub).to.equal(user.id);
    expect(await gatehouse.container.cradle.services.accounts.verified(user, 'email')).to.equal(true);
  });

  it('registers in German (ui_locales=de) and lands in the app with tokens', async () => {
    const email = `hanna${process.pid}@example.test`;
    const { claims, message } = await register(
      email,
      {
        email: 'E-Mail-Adresse',
        given: 'Vorname',
        password: 'Passwort',
        repeat: 'Passwort wiederholen',
        create: 'Konto anlegen',
        code: 'Code',
        confirm: 'Bestätigen',
      },
      'de',
    );
    expect(message.subject).to.equal('Ihr Code für Chess Club');
    expect(claims.sub).to.equal((await gatehouse.container.cradle.users.findByIdentifier(email))!.id);
  });

  it('reaches the form from the hosted login page’s link', async () => {
    const url = new URL(as.authorization_endpoint!);
    const params = {
      client_id: CLIENT_ID,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid',
      state: oauth.generateRandomState(),
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    await page.goto(url.href);
    expect(new URL(page.url()).pathname).to.equal('/login');
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/register'),
      page.getByRole('link', { name: 'New here? Create an account' }).click(),
    ]);
    expect(await page.locator('h1').innerText()).to.equal('Create your account for Chess Club');
    expect(await watch.problems()).to.deep.equal([]);
  });
});
