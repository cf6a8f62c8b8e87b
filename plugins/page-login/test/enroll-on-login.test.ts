/**
 * Setting a method up during a login (`enroll_on_login`) and an admin's required actions, in
 * Chromium: a password-only user signs in to an app with stages [[PASSWORD],[TOTP]], sets TOTP
 * up on the hosted page and lands in the app with tokens; the setup's confirmation completes the
 * stage. Without the setting, the page still says nothing is set up. The refusals of the setup
 * screens (CSRF, a setup not started, a flow of another browser, a wrong code) with their
 * status; a required new password and a required second factor before the app gets its answer.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import { generate } from 'otplib';
import type { BrowserContext, Page } from 'playwright-core';
import { openChromium, requireChromium, type Chromium } from '../../../test/support/chromium.js';
import { expectRevealButtons } from '../../../test/support/password-reveal.js';
import { freePort } from '../../../test/oauth/support.js';
import {
  buildApp,
  createLogger,
  listen,
  parseConfig,
  type Gatehouse,
  type RunningServer,
  type UserAccounts,
} from '@gatehouse-auth/core';

const KEY = Buffer.alloc(32, 7).toString('base64');
const ADMIN_TOKEN = 'enroll-admin-token-0123456789abcdef0123456789';
const PASSWORD = 'a long enough passphrase 4 enrolment';
const NEW_PASSWORD = 'another long passphrase for later';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

interface TestApp {
  client: oauth.Client;
  auth: oauth.ClientAuth;
  redirectUri: string;
}

describe('enrollment at login and required actions (Chromium)', function () {
  this.timeout(90_000);

  let gatehouse: Gatehouse;
  let running: RunningServer | undefined;
  let chrome: Chromium | undefined;
  let context: BrowserContext;
  let page: Page;
  let issuer: string;
  let as: oauth.AuthorizationServer;
  let server: http.Server | undefined;
  let shop: TestApp;
  let strict: TestApp;
  let blog: TestApp;
  let keys: TestApp;

  async function createUser(username: string): Promise<string> {
    const id = (await gatehouse.container.cradle.users.create({ username })).id;
    const res = await fetch(`${issuer}/verification-actions-srv/setup/PASSWORD/initiation`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sub: id, password: PASSWORD }),
    });
    expect(res.status).to.equal(200);
    return id;
  }

  async function openLogin(app: TestApp) {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({
      client_id: app.client.client_id,
      redirect_uri: app.redirectUri,
      response_type: 'code',
      scope: 'openid',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    await page.goto(url.href);
    expect(new URL(page.url()).pathname).to.equal('/login');
    return { app, state, codeVerifier, requestId: new URL(page.url()).searchParams.get('request_id')! };
  }

  /** Stage 1; waits until the browser is where `to` says (a path of the issuer, or the app). */
  async function passwordStage(username: string, to: string | TestApp, password = PASSWORD) {
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill(username);
    await page.getByRole('textbox', { name: 'Password' }).fill(password);
    const arrived = (url: URL) =>
      typeof to === 'string' ? url.href.startsWith(`${issuer}${to}`) : url.href.startsWith(`${to.redirectUri}?`);
    await Promise.all([page.waitForURL(arrived), page.keyboard.press('Enter')]);
  }

  async function redeem(login: { app: TestApp; state: string; codeVerifier: string }) {
    const callback = new URL(page.url());
    const { client, auth, redirectUri } = login.app;
    const params = oauth.validateAuthResponse(as, client, callback, login.state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      params,
      redirectUri,
      login.codeVerifier,
      insecure,
    );
    return oauth.processAuthorizationCodeResponse(as, client, response, { requireIdToken: true });
  }

  const post = (path: string, form: Record<string, string>, origin = issuer) =>
    page.request.post(`${issuer}${path}`, { form, headers: { Origin: origin }, maxRedirects: 0 });

  before(async function () {
    requireChromium(this);
    server = http.createServer((_req, res) => res.writeHead(200).end('<h1>Back at the app</h1>'));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const sitePort = (server.address() as AddressInfo).port;
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    const app = (id: string): TestApp => ({
      client: { client_id: id, token_endpoint_auth_method: 'none' },
      auth: oauth.None(),
      redirectUri: `http://127.0.0.1:${sitePort}/${id}/cb`,
    });
    shop = app('shop');
    strict = app('strict');
    blog = app('blog');
    keys = app('keys');
    const appConfig = (a: TestApp, stages: string[][], extra: Record<string, unknown> = {}) => ({
      client_id: a.client.client_id,
      name: `App ${a.client.client_id}`,
      token_endpoint_auth_method: 'none',
      redirect_uris: [a.redirectUri],
      grant_types: ['authorization_code'],
      scopes: ['openid'],
      login_stages: stages,
      ...extra,
    });
    const config = parseConfig(
      {
        issuer,
        dev_mode: true,
        server: { host: '127.0.0.1', port },
        database: { url: 'sqlite::memory:' },
        log: { level: 'silent' },
        secrets: { encryption_key: KEY },
        admin: { token: ADMIN_TOKEN },
        plugins: [
          { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
          { name: '@gatehouse-auth/method-totp' },
          // WebAuthn needs a domain name as the relying party id: the issuer is http://localhost:<port>.
          { name: '@gatehouse-auth/method-fido2', options: { rp_id: 'localhost', origins: [issuer] } },
          { name: '@gatehouse-auth/grant-authorization-code' },
          { name: '@gatehouse-auth/management' },
          { name: '@gatehouse-auth/page-login' },
          { name: '@gatehouse-auth/verification-api' },
          { name: '@gatehouse-auth/setup-api' },
        ],
        apps: [
          appConfig(shop, [['PASSWORD'], ['TOTP']], { enroll_on_login: true }),
          appConfig(strict, [['PASSWORD'], ['TOTP']]),
          appConfig(blog, [['PASSWORD']]),
          appConfig(keys, [['PASSWORD'], ['TOTP'], ['FIDO2']], { enroll_on_login: true }),
        ],
      },
      {},
    );
    gatehouse = await buildApp(config, { logger: createLogger('silent') });
    running = await listen(gatehouse);
    as = await oauth.processDiscoveryResponse(new URL(issuer), await oauth.discoveryRequest(new URL(issuer), insecure));
    chrome = await openChromium();
    context = chrome.context;
    page = context.pages()[0] ?? (await context.newPage());
  });

  beforeEach(async () => {
    await context?.clearCookies();
  });

  after(async () => {
    await chrome?.close();
    await running?.shutdown();
    server?.closeAllConnections();
    server?.close();
  });

  it('sets TOTP up at the stage that needs it and lands in the app with tokens', async () => {
    const userId = await createUser('enrol-alice');
    const login = await openLogin(shop);
    await passwordStage('enrol-alice', '/login/enroll?');
    expect(new URL(page.url()).pathname).to.equal('/login/enroll');
    await page.getByRole('heading', { name: 'Set up a way to sign in to App shop' }).waitFor();
    await page.getByRole('button', { name: 'Set up' }).click();
    await page.locator('#gh-qr').waitFor();
    const secret = await page.locator('#gh-secret').innerText();

    // A wrong code first: refused with its status, the page says so and the stage stays.
    const [wrong] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${issuer}/login/enroll/verify`),
      (async () => {
        await page.getByRole('textbox', { name: 'Code' }).fill('000000');
        await page.getByRole('button', { name: 'Confirm' }).click();
      })(),
    ]);
    expect(wrong.status()).to.equal(401);
    await page.getByText('That code is not right. Try again.').waitFor();

    const code = await generate({ secret });
    await page.getByRole('textbox', { name: 'Code' }).fill(code);
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${shop.redirectUri}?`)),
      page.getByRole('button', { name: 'Confirm' }).click(),
    ]);
    const tokens = await redeem(login);
    expect(tokens.access_token).to.be.a('string');
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims.sub).to.equal(userId);
    expect(claims.amr).to.include.members(['pwd', 'otp']);
    const events = await gatehouse.container.cradle.services.history.recent({
      types: ['login.stage_completed'],
      userId,
      limit: 5,
    });
    expect(events.some((e) => e.method === 'TOTP' && (e.data as Record<string, unknown>).setup === true)).to.equal(
      true,
    );
  });

  it("creates a passkey at the stage that needs it, by the method's ceremony, after more than a password", async () => {
    const userId = await createUser('enrol-fay');
    const admin = (step: string, body: Record<string, unknown>) =>
      fetch(`${issuer}/verification-actions-srv/setup/TOTP/${step}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ sub: userId, ...body }),
      }).then((r) => r.json() as Promise<{ data: Record<string, string> }>);
    const { secret } = (await admin('initiation', {})).data;
    // Confirmed with the previous step's code: the current one stays for the login.
    const step = Math.floor(Date.now() / 30_000);
    await admin('verification', { pass_code: await generate({ secret: secret!, epoch: (step - 1) * 30 }) });

    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    try {
      const login = await openLogin(keys);
      await passwordStage('enrol-fay', '/login?');
      await page.locator('.step', { hasText: 'Step 2 of 3' }).waitFor();
      await page
        .getByRole('textbox', { name: 'Code from your authenticator app' })
        .fill(await generate({ secret: secret!, epoch: step * 30 }));
      await Promise.all([page.waitForURL(/\/login\/enroll\?/), page.getByRole('button', { name: 'Continue' }).click()]);
      await page.getByRole('button', { name: 'Set up' }).click();
      await page.getByRole('button', { name: 'Create a passkey' }).click();
      await page.waitForURL((url) => url.href.startsWith(`${keys.redirectUri}?`));
      const tokens = await redeem(login);
      expect(oauth.getValidatedIdTokenClaims(tokens)!.sub).to.equal(userId);
      const stored = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(stored.credentials).to.have.length(1);
      expect(await gatehouse.container.cradle.services.credentials(userId, 'FIDO2').list()).to.have.length(1);
    } finally {
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
      await cdp.detach();
    }
  });

  it('answers in German for a German browser', async () => {
    await createUser('enrol-de');
    await page.setExtraHTTPHeaders({ 'Accept-Language': 'de-DE,de;q=0.9' });
    try {
      await openLogin(shop);
      await page.getByRole('textbox', { name: /Benutzername/ }).fill('enrol-de');
      await page.getByRole('textbox', { name: 'Passwort' }).fill(PASSWORD);
      await Promise.all([page.waitForURL(/\/login\/enroll/), page.keyboard.press('Enter')]);
      await page.getByRole('heading', { name: 'Eine Anmeldemethode für App shop einrichten' }).waitFor();
    } finally {
      await page.setExtraHTTPHeaders({});
    }
  });

  it('without enroll_on_login still ends on the "nothing set up" page, and its setup screens refuse', async () => {
    await createUser('enrol-bob');
    const login = await openLogin(strict);
    await passwordStage('enrol-bob', '/login?');
    await page.getByRole('heading', { name: 'No way to sign in to this app yet' }).waitFor();
    expect(new URL(page.url()).pathname).to.equal('/login');
    await page.getByRole('heading', { name: 'No way to sign in to this app yet' }).waitFor();
    const res = await page.request.get(`${issuer}/login/enroll?request_id=${login.requestId}`, { maxRedirects: 0 });
    expect(res.status()).to.equal(404);
  });

  it('refuses a setup form without its CSRF token, from another origin, or not started, and another browser', async () => {
    await createUser('enrol-carol');
    const login = await openLogin(shop);
    await passwordStage('enrol-carol', '/login/enroll?');
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const base = { request_id: login.requestId, mode: 'stage', method: 'TOTP' };

    expect((await post('/login/enroll/start', { ...base, csrf: 'forged' })).status()).to.equal(403);
    expect((await post('/login/enroll/start', { ...base, csrf }, 'http://evil.test')).status()).to.equal(403);
    // A confirmation with no setup started by this flow.
    const notStarted = await post('/login/enroll/verify', { ...base, csrf, pass_code: '123456' });
    expect(notStarted.status()).to.equal(409);
    expect(await notStarted.text()).to.contain('Start the setup first.');
    // A method the stage does not ask for.
    expect((await post('/login/enroll/start', { ...base, csrf, method: 'PASSWORD' })).status()).to.equal(409);

    // The JSON steps: a method without a browser ceremony, an unknown step, a flow of no one.
    const json = (step: string, body: Record<string, unknown>) =>
      page.request.post(`${issuer}/login/enroll/setup/${step}`, { data: body });
    const noCeremony = await json('initiation', { request_id: login.requestId, method: 'TOTP' });
    expect(noCeremony.status()).to.equal(403);
    expect(((await noCeremony.json()) as { error: { code: string } }).error.code).to.equal('SETUP_NOT_ALLOWED');
    const badStep = await json('scan', { request_id: login.requestId, method: 'TOTP' });
    expect(((await badStep.json()) as { error: { code: string } }).error.code).to.equal('ENROLLMENT_NOT_SUPPORTED');
    const unknown = await json('initiation', { request_id: 'nope', method: 'TOTP' });
    expect(unknown.status()).to.equal(403);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).to.equal('FLOW_NOT_BOUND');

    // Another browser (no flow cookie) gets the page for another browser's sign-in.
    const other = await fetch(`${issuer}/login/enroll?request_id=${login.requestId}`, { redirect: 'manual' });
    expect(other.status).to.equal(403);
    const missing = await fetch(`${issuer}/login/enroll`, { redirect: 'manual' });
    expect(missing.status).to.equal(400);
  });

  it('asks for a new password an admin required, before the app gets its answer', async () => {
    const userId = await createUser('enrol-dave');
    const accounts = gatehouse.container.cradle.services.resolve<UserAccounts>('userAccounts');
    const user = (await gatehouse.container.cradle.users.findById(userId))!;
    await accounts.setRequiredActions({ via: 'test', userId: 'admin', ip: null }, user, ['change_password']);
    const login = await openLogin(blog);
    await passwordStage('enrol-dave', '/login/required?');
    expect(new URL(page.url()).pathname).to.equal('/login/required');
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();

    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const forged = await post('/login/required/password', {
      request_id: login.requestId,
      csrf: 'forged',
      password: NEW_PASSWORD,
      repeat: NEW_PASSWORD,
    });
    expect(forged.status()).to.equal(403);
    const short = await post('/login/required/password', {
      request_id: login.requestId,
      csrf,
      password: 'short',
      repeat: 'short',
    });
    expect(short.status()).to.equal(400);
    // The app has had no answer yet: resume sends the browser back here.
    const resume = await page.request.get(`${issuer}/api/oauth2/authorize/resume?request_id=${login.requestId}`, {
      maxRedirects: 0,
    });
    expect(resume.status()).to.equal(303);
    expect(resume.headers().location).to.equal(`/login/required?request_id=${login.requestId}`);

    expect(await expectRevealButtons(page, 'Show', 'Hide')).to.equal(2);
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('New password again').fill('something else entirely here');
    await page.getByRole('button', { name: 'Save and continue' }).click();
    await page.getByText('The two passwords differ.').waitFor();
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('New password again').fill(NEW_PASSWORD);
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${blog.redirectUri}?`)),
      page.getByRole('button', { name: 'Save and continue' }).click(),
    ]);
    expect((await redeem(login)).access_token).to.be.a('string');
    expect(await accounts.requiredActions(userId)).to.deep.equal([]);

    // The new password signs in; the old one no longer does.
    await context.clearCookies();
    await openLogin(blog);
    await passwordStage('enrol-dave', blog, NEW_PASSWORD);
    expect(page.url().startsWith(`${blog.redirectUri}?`)).to.equal(true);
  });

  it('asks for a second factor an admin required, and a setup proves it', async () => {
    const userId = await createUser('enrol-erin');
    const accounts = gatehouse.container.cradle.services.resolve<UserAccounts>('userAccounts');
    const user = (await gatehouse.container.cradle.users.findById(userId))!;
    await accounts.setRequiredActions({ via: 'test', userId: 'admin', ip: null }, user, ['second_factor']);
    const login = await openLogin(blog);
    await passwordStage('enrol-erin', '/login/required?');
    expect(new URL(page.url()).pathname).to.equal('/login/required');
    await page.getByRole('heading', { name: 'Set up a second factor' }).waitFor();
    await page.getByRole('button', { name: 'Set up' }).click();
    const secret = await page.locator('#gh-secret').innerText();
    await page.getByRole('textbox', { name: 'Code' }).fill(await generate({ secret }));
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${blog.redirectUri}?`)),
      page.getByRole('button', { name: 'Confirm' }).click(),
    ]);
    expect((await redeem(login)).access_token).to.be.a('string');
    expect(await accounts.requiredActions(userId)).to.deep.equal([]);
  });
});
