/**
 * The hosted login page in a real browser (Debian's Chromium driven by playwright-core), reached
 * through the OAuth front door: an independent client library (oauth4webapi v3) discovers the
 * server and builds the authorization request (PKCE, state, nonce); Chromium walks PASSWORD then
 * TOTP and lands on the client's redirect URI; the library checks the response, redeems the code,
 * validates the ID token (amr pwd + otp), calls userinfo and refreshes. Also: single sign-on and
 * prompt=login, the consent page (deny and allow), the page's security headers, the generic
 * message for a wrong password, SMS (with the resend countdown), the method choice, the Show /
 * Hide button of the password field, and error pages that never redirect.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as oauth from 'oauth4webapi';
import { generate } from 'otplib';
import type { BrowserContext, Page, Response as PageResponse } from 'playwright-core';
import { openChromium, requireChromium, type Chromium } from '../../../test/support/chromium.js';
import { freePort } from '../../../test/oauth/support.js';
import { buildApp, createLogger, listen, parseConfig, type Gatehouse, type RunningServer } from '@gatehouse-auth/core';

/** The verification tests' delivery channel: keeps every message in its exported `sent`. */
const CAPTURE_CHANNEL = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../test/verification/fixtures/capture-channel.js',
);
/** A host name of its own for the consent app's redirect URI, so its origin is exact (not loopback:*). */
const PARTNER_HOST = 'partner.test';
const ADMIN_TOKEN = 'browser-admin-token-0123456789abcdef0123456789';
const KEY = Buffer.alloc(32, 9).toString('base64');
const CLIENT_ID = 'shop';
const CLIENT_SECRET = 'shop-secret-0123456789abcdef0123456789abcdef';
const SMS_CLIENT_ID = 'shop-sms';
const PARTNER_ID = 'partner';
/** A password-only app: its session must not sign anyone in to the two-factor shop. */
const BLOG_ID = 'blog';
/** An app whose second stage offers third-party methods: one with a page module, one plain. */
const DEVICES_ID = 'devices';
const QUESTION_ID = 'question-only';
const FIXTURE_PLUGINS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/plugins');
const PARTNER_NAME = 'Partner';
const PHONE = '+15551230000';
/** Markup characters in the name check that the page escapes it. */
const APP_NAME = 'Shop <b>& "Co"</b>';
const PASSWORD = 'a long enough passphrase 4 browsers';
const GENERIC = 'That did not work. Check and try again.';
/** The generic message after the first wrong proof of an exchange (5 attempts by default). */
const FIRST_WRONG = `${GENERIC} 4 attempts left.`;
const TOTP_PERIOD = 30;
/** The server's interval between two codes of a method in one stage (the page counts it down). */
const RESEND_SECONDS = 2;
const BASE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** The issuer runs on http: oauth4webapi refuses that unless told. */
const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** The clients' redirect URIs: a tiny server that records the full URL of every request. */
interface ClientSite {
  port: number;
  hits: URL[];
  close(): Promise<void>;
}

async function startClientSite(): Promise<ClientSite> {
  const hits: URL[] = [];
  const server = http.createServer((req, res) => {
    hits.push(new URL(req.url ?? '/', `http://${req.headers.host}`));
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<h1>Back at the client</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** at_hash (OIDC Core §3.1.3.6): the left half of the access token's SHA-256, base64url. */
function halfHash(token: string): string {
  return createHash('sha256').update(token).digest().subarray(0, 16).toString('base64url');
}

const currentStep = () => Math.floor(Date.now() / 1000 / TOTP_PERIOD);
const totpAt = (secret: string, step: number) => generate({ secret, epoch: step * TOTP_PERIOD });

/** A registered app as its client library knows it. */
interface TestApp {
  client: oauth.Client;
  auth: oauth.ClientAuth;
  redirectUri: string;
}

/** A user with a password and an enrolled authenticator app. */
interface TestUser {
  username: string;
  id: string;
  totpSecret: string;
  /** The last TOTP time step the server accepted: it accepts only later ones. */
  lastStep: number;
}

/** An authorization request as the client sent it, with what it needs to check the answer. */
interface AuthRequest {
  app: TestApp;
  url: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

describe('hosted login page (Chromium)', function () {
  this.timeout(90_000);

  let gatehouse: Gatehouse;
  let running: RunningServer | undefined;
  let site: ClientSite | undefined;
  let context: BrowserContext | undefined;
  let chrome: Chromium | undefined;
  let page: Page;
  let issuer: string;
  let as: oauth.AuthorizationServer;
  let shop: TestApp;
  let partner: TestApp;
  let blog: TestApp;
  let alice: TestUser;

  /** An admin call to the setup (enrolment) API; returns `data` of the success envelope. */
  async function setup(method: string, step: string, body: Record<string, string>): Promise<Record<string, unknown>> {
    const res = await fetch(`${issuer}/verification-actions-srv/setup/${method}/${step}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const payload = (await res.json()) as { success: boolean; data: Record<string, unknown> };
    expect(payload.success, `${method} ${step}: ${JSON.stringify(payload)}`).to.equal(true);
    return payload.data;
  }

  /** Creates a user and enrols PASSWORD and TOTP through the setup API. */
  async function enrolUser(username: string, phone?: string): Promise<TestUser> {
    const id = (await gatehouse.container.cradle.users.create({ username, ...(phone ? { phone } : {}) })).id;
    expect(await setup('PASSWORD', 'initiation', { sub: id, password: PASSWORD })).to.deep.equal({ enrolled: true });
    const totpSecret = String((await setup('TOTP', 'initiation', { sub: id })).secret);
    // Confirm with the previous step's code (accepted within ±1 step): the current and the next
    // step stay unspent for two logins, since a TOTP step is never accepted twice.
    const lastStep = currentStep() - 1;
    const confirmation = await totpAt(totpSecret, lastStep);
    expect(await setup('TOTP', 'verification', { sub: id, pass_code: confirmation })).to.deep.equal({
      enrolled: true,
    });
    return { username, id, totpSecret, lastStep };
  }

  /** A code of the user's next unspent time step; waits when every step within ±1 of now is spent. */
  async function nextTotpCode(user: TestUser): Promise<string> {
    const step = Math.max(user.lastStep + 1, currentStep());
    const wait = (step - 1) * TOTP_PERIOD * 1000 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 100));
    user.lastStep = step;
    return totpAt(user.totpSecret, step);
  }

  /**
   * The client starts a login: an authorization request built with oauth4webapi (PKCE S256,
   * state, nonce) against the discovered authorization endpoint.
   */
  async function startLogin(
    app: TestApp,
    { scope = 'openid profile', prompt }: { scope?: string; prompt?: string } = {},
  ): Promise<AuthRequest> {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const params: Record<string, string> = {
      client_id: app.client.client_id,
      redirect_uri: app.redirectUri,
      response_type: 'code',
      scope,
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      ...(prompt ? { prompt } : {}),
    };
    const query = Object.entries(params).map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
    return { app, url: `${as.authorization_endpoint}?${query.join('&')}`, state, nonce, codeVerifier };
  }

  /** Starts a login and opens it: the authorization endpoint sends the browser to the first stage. */
  async function openLogin(
    app: TestApp = shop,
    options: Parameters<typeof startLogin>[1] = {},
  ): Promise<{ request: AuthRequest; loginUrl: string; requestId: string }> {
    const request = await startLogin(app, options);
    const response = (await page.goto(request.url))!;
    expect(redirectChain(response)).to.deep.equal(['/api/oauth2/authorize/', '/login']);
    const loginUrl = page.url();
    return { request, loginUrl, requestId: requestIdOf(loginUrl) };
  }

  /** Stage 1: identifier and password, sent with Enter; the server answers 303 back to the page at stage 2. */
  async function passwordStage(user: TestUser): Promise<PageResponse> {
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill(user.username);
    await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
    const [continued] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${issuer}/login/finish`),
      page.keyboard.press('Enter'),
    ]);
    await page.locator('.step', { hasText: 'Step 2 of 2' }).waitFor();
    return continued;
  }

  /** Stage 2: the authenticator code; the last stage's POST leaves the login page for `destination`. */
  async function totpStage(user: TestUser, destination: (url: URL) => boolean): Promise<void> {
    await page.getByRole('textbox', { name: 'Code from your authenticator app' }).fill(await nextTotpCode(user));
    await Promise.all([page.waitForURL(destination), page.getByRole('button', { name: 'Continue' }).click()]);
  }

  /** Both stages, from the open login page to `destination`. */
  async function signIn(user: TestUser, destination: (url: URL) => boolean): Promise<void> {
    await passwordStage(user);
    await totpStage(user, destination);
  }

  /** Whether the browser is at the app's redirect URI (with a query: the authorization response). */
  const atRedirectUri = (request: AuthRequest) => (url: URL) => url.href.startsWith(`${request.app.redirectUri}?`);

  /** The one URL the client's server received for this request's state. */
  function callbackOf(request: AuthRequest): URL {
    const hits = site!.hits.filter((u) => u.searchParams.get('state') === request.state);
    expect(hits, 'callbacks for this state').to.have.length(1);
    expect(hits[0]!.href.startsWith(`${request.app.redirectUri}?`)).to.equal(true);
    return hits[0]!;
  }

  /**
   * The client's side of the callback, all by oauth4webapi: checks state and iss, redeems the
   * code with the PKCE verifier, validates the ID token (iss, aud, nonce, exp, then its signature
   * against the JWKS) and its at_hash (the library checks at_hash only for hybrid responses).
   */
  async function redeem(request: AuthRequest, callback: URL) {
    const { client, auth, redirectUri } = request.app;
    const params = oauth.validateAuthResponse(as, client, callback, request.state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      params,
      redirectUri,
      request.codeVerifier,
      insecure,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: request.nonce,
      requireIdToken: true,
    });
    await oauth.validateApplicationLevelSignature(as, response, insecure);
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims.at_hash).to.equal(halfHash(tokens.access_token));
    return { tokens, claims, code: params.get('code')! };
  }

  /** The paths a navigation went through, first to last. */
  function redirectChain(response: PageResponse): string[] {
    const paths: string[] = [];
    for (let r: ReturnType<PageResponse['request']> | null = response.request(); r; r = r.redirectedFrom()) {
      paths.unshift(new URL(r.url()).pathname);
    }
    return paths;
  }

  /** The browser's SSO session cookie at the issuer. */
  async function sessionCookie() {
    return (await context!.cookies(issuer)).find((c) => c.name === 'gh_session');
  }

  const requestIdOf = (url: string) => new URL(url).searchParams.get('request_id')!;
  const text = (selector: string) => page.locator(selector).innerText();
  const focusedId = () => page.evaluate('document.activeElement && document.activeElement.id');

  /** Opens a URL and insists that the answer came without any redirect. */
  async function openWithoutRedirect(url: string): Promise<PageResponse> {
    const response = (await page.goto(url))!;
    expect(response.request().redirectedFrom()).to.equal(null);
    expect(page.url()).to.equal(url);
    return response;
  }

  before(async function () {
    requireChromium(this);
    site = await startClientSite();
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    shop = {
      client: { client_id: CLIENT_ID },
      auth: oauth.ClientSecretBasic(CLIENT_SECRET),
      redirectUri: `http://127.0.0.1:${site.port}/cb`,
    };
    partner = {
      client: { client_id: PARTNER_ID, token_endpoint_auth_method: 'none' },
      auth: oauth.None(),
      redirectUri: `http://${PARTNER_HOST}:${site.port}/partner/cb`,
    };
    blog = {
      client: { client_id: BLOG_ID, token_endpoint_auth_method: 'none' },
      auth: oauth.None(),
      redirectUri: `http://127.0.0.1:${site.port}/blog/cb`,
    };
    const config = parseConfig(
      {
        issuer,
        // The partner app lives on another (plain-http) host name of this machine.
        dev_mode: true,
        server: { host: '127.0.0.1', port },
        database: { url: 'sqlite::memory:' },
        log: { level: 'silent' },
        secrets: { encryption_key: KEY },
        admin: { token: ADMIN_TOKEN },
        // Short, so the test sees the send button's countdown end (issue 29).
        verification: { resend_interval_seconds: RESEND_SECONDS },
        plugins: [
          { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
          { name: '@gatehouse-auth/method-totp' },
          { path: CAPTURE_CHANNEL },
          { name: '@gatehouse-auth/method-sms', options: { channel: 'capture' } },
          { name: '@gatehouse-auth/grant-authorization-code' },
          { name: '@gatehouse-auth/grant-refresh-token' },
          { name: '@gatehouse-auth/oidc-userinfo' },
          { name: '@gatehouse-auth/management' },
          { name: '@gatehouse-auth/page-login' },
          { name: '@gatehouse-auth/verification-api' },
          { name: '@gatehouse-auth/page-consent' },
          { name: '@gatehouse-auth/setup-api' },
          { path: path.join(FIXTURE_PLUGINS, 'device-check') },
          { path: path.join(FIXTURE_PLUGINS, 'plain-question.js') },
        ],
        apps: [
          {
            client_id: CLIENT_ID,
            name: APP_NAME,
            client_secret: CLIENT_SECRET,
            token_endpoint_auth_method: 'client_secret_basic',
            redirect_uris: [shop.redirectUri],
            grant_types: ['authorization_code', 'refresh_token'],
            scopes: ['openid', 'profile', 'offline_access'],
            login_stages: [['PASSWORD'], ['TOTP']],
          },
          {
            client_id: SMS_CLIENT_ID,
            client_secret: 'shop-sms-secret-0123456789abcdef0123456789ab',
            redirect_uris: [shop.redirectUri],
            login_stages: [['PASSWORD'], ['SMS']],
          },
          {
            client_id: PARTNER_ID,
            name: PARTNER_NAME,
            token_endpoint_auth_method: 'none',
            redirect_uris: [partner.redirectUri],
            grant_types: ['authorization_code'],
            scopes: ['openid', 'profile'],
            login_stages: [['PASSWORD'], ['TOTP']],
            consent_required: true,
          },
          {
            client_id: DEVICES_ID,
            client_secret: 'devices-secret-0123456789abcdef0123456789ab',
            redirect_uris: [shop.redirectUri],
            scopes: ['openid', 'profile'],
            login_stages: [['PASSWORD'], ['DEVICECHECK', 'QUESTION', 'TOTP']],
          },
          {
            client_id: QUESTION_ID,
            client_secret: 'question-secret-0123456789abcdef0123456789a',
            redirect_uris: [shop.redirectUri],
            scopes: ['openid', 'profile'],
            login_stages: [['PASSWORD'], ['QUESTION']],
          },
          {
            client_id: BLOG_ID,
            token_endpoint_auth_method: 'none',
            redirect_uris: [blog.redirectUri],
            grant_types: ['authorization_code'],
            scopes: ['openid', 'profile'],
            login_stages: [['PASSWORD']],
          },
        ],
      },
      {},
    );
    gatehouse = await buildApp(config, { logger: createLogger('silent') });
    running = await listen(gatehouse);
    as = await oauth.processDiscoveryResponse(new URL(issuer), await oauth.discoveryRequest(new URL(issuer), insecure));
    alice = await enrolUser('browser-alice', PHONE);

    chrome = await openChromium([`--host-resolver-rules=MAP ${PARTNER_HOST} 127.0.0.1`]);
    context = chrome.context;
    page = context.pages()[0] ?? (await context.newPage());
  });

  // Every test starts signed out: no SSO session, no flow cookies.
  beforeEach(async () => {
    await context?.clearCookies();
  });

  after(async () => {
    await chrome?.close();
    await running?.shutdown();
    await site?.close();
  });

  it('renders stage 1 with the security headers, the escaped app name and an identifier field', async () => {
    const { loginUrl } = await openLogin();
    const response = await openWithoutRedirect(loginUrl);
    expect(response.status()).to.equal(200);
    const headers = response.headers();
    // form-action also lists the client's (loopback) redirect origin: browsers check it on
    // the redirect that follows the last stage's form POST.
    expect(headers['content-security-policy']).to.equal(
      BASE_CSP.replace("form-action 'self'", "form-action 'self' http://127.0.0.1:*"),
    );
    expect(headers['x-frame-options']).to.equal('DENY');
    // Not no-referrer: under it the browser would send `Origin: null` with the stage's form.
    expect(headers['referrer-policy']).to.equal('same-origin');
    expect(headers['cache-control']).to.equal('no-store');
    expect(headers['x-content-type-options']).to.equal('nosniff');
    expect(headers).to.not.have.property('access-control-allow-origin');

    expect(await page.title()).to.equal(`Sign in to ${APP_NAME}`);
    expect(await text('h1')).to.equal(`Sign in to ${APP_NAME}`);
    expect(await page.locator('h1 b').count()).to.equal(0);
    expect(await text('.step')).to.equal('Step 1 of 2');
    expect(await page.locator('#gh-identifier').getAttribute('autocomplete')).to.equal('username');
    expect(await page.locator('#gh-methods').isVisible()).to.equal(false);
    const secret = page.locator('#gh-PASSWORD-password');
    expect(await secret.getAttribute('type')).to.equal('password');
    expect(await secret.getAttribute('autocomplete')).to.equal('current-password');
    expect(await page.getByRole('textbox', { name: 'Password' }).count()).to.equal(1);
    expect(await page.locator('#gh-submit').isEnabled()).to.equal(true);
    expect(await focusedId()).to.equal('gh-identifier');
    await page.screenshot({ path: '/tmp/login.png', fullPage: true });

    const script = await fetch(`${issuer}/login/assets/login.js`);
    expect(script.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).to.equal('public, max-age=300');
    expect(script.headers.get('access-control-allow-origin')).to.equal(null);
    expect((await script.text()).split('\n').length).to.be.below(300);
    for (const asset of ['resend.js', 'password-reveal.js']) {
      const served = await fetch(`${issuer}/login/assets/${asset}`);
      expect(served.status, asset).to.equal(200);
      expect(served.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    }
    const style = await fetch(`${issuer}/login/assets/login.css`);
    expect(style.headers.get('content-type')).to.equal('text/css; charset=utf-8');
    expect(style.headers.get('cache-control')).to.equal('public, max-age=300');
  });

  it('a wrong password shows the generic message with the attempts left and stays on the page', async () => {
    const { loginUrl, requestId } = await openLogin();
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill(alice.username);
    await page.getByRole('textbox', { name: 'Password' }).fill('not the password at all');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#gh-message.error').waitFor();
    expect(await text('#gh-message')).to.equal(FIRST_WRONG);
    expect(page.url()).to.equal(loginUrl);
    expect(await page.locator('#gh-PASSWORD-password').inputValue()).to.equal('');
    expect(await page.locator('#gh-identifier').inputValue()).to.equal(alice.username);
    expect(await focusedId()).to.equal('gh-PASSWORD-password');
    const flow = await gatehouse.container.cradle.flows.get(requestId);
    expect(flow).to.include({ stage: 0, status: 'active', userId: null });
  });

  it('the password field has a Show / Hide button: it toggles the type, aria-pressed and its label, by mouse and keyboard', async () => {
    await openLogin();
    const field = page.locator('#gh-PASSWORD-password');
    const toggle = page.getByRole('button', { name: 'Show', exact: true });
    expect(await toggle.getAttribute('type')).to.equal('button');
    expect(await toggle.getAttribute('aria-controls')).to.equal('gh-PASSWORD-password');
    expect(await toggle.getAttribute('aria-pressed')).to.equal('false');
    expect(await toggle.getAttribute('name')).to.equal(null);
    // The field keeps its name for people and password managers.
    expect(await page.getByRole('textbox', { name: 'Password', exact: true }).count()).to.equal(1);

    await field.fill(' two spaces around ');
    await field.focus();
    await toggle.click();
    expect(await field.getAttribute('type')).to.equal('text');
    const hide = page.getByRole('button', { name: 'Hide', exact: true });
    expect(await hide.getAttribute('aria-pressed')).to.equal('true');
    expect(await field.getAttribute('autocomplete')).to.equal('current-password');
    expect(await focusedId(), 'a click leaves the focus in the field').to.equal('gh-PASSWORD-password');
    expect(await field.inputValue()).to.equal(' two spaces around ');

    // By keyboard: Tab from the field reaches the button; Space toggles it back.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.className')).to.equal('reveal-toggle');
    await page.keyboard.press('Space');
    expect(await field.getAttribute('type')).to.equal('password');
    expect(await toggle.getAttribute('aria-pressed')).to.equal('false');
    await page.keyboard.press('Enter');
    expect(await field.getAttribute('type')).to.equal('text');

    // Sent while shown: the field is a password again first, and the button is not sent.
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill(alice.username);
    const [sent] = await Promise.all([
      page.waitForRequest((r) => r.url().endsWith('/PASSWORD/verification')),
      page.getByRole('button', { name: 'Continue' }).click(),
    ]);
    expect(await field.getAttribute('type')).to.equal('password');
    expect(await toggle.innerText()).to.equal('Show');
    const body = JSON.parse(sent.postData() ?? '{}') as Record<string, string>;
    expect(body.password, 'read untrimmed, as a password').to.equal(' two spaces around ');
    expect(Object.keys(body).sort()).to.deep.equal(['exchange_id', 'password']);
    await page.locator('#gh-message.error').waitFor();
  });

  it('after EXCHANGE_EXPIRED it says so in the page’s words (not the API’s) and initiates again on the next try', async () => {
    await openLogin();
    const initiations: string[] = [];
    const onRequest = (r: { url(): string }) => {
      if (r.url().endsWith('/PASSWORD/initiation')) initiations.push(r.url());
    };
    page.on('request', onRequest);
    const verification = `${issuer}/verification-srv/authentication/PASSWORD/verification`;
    // The first verification answers as if the exchange had run out.
    await page.route(
      verification,
      (route) =>
        route.fulfill({
          status: 410,
          contentType: 'application/json',
          body: JSON.stringify({
            success: false,
            status: 410,
            error: { code: 'EXCHANGE_EXPIRED', error: 'the exchange_id has expired; initiate the method again' },
          }),
        }),
      { times: 1 },
    );
    try {
      await page.getByRole('textbox', { name: 'Username, email or phone' }).fill(alice.username);
      await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.locator('#gh-message.error').waitFor();
      expect(await text('#gh-message')).to.equal('The time for this attempt ran out. Please try again.');
      expect(initiations).to.have.length(1);

      await page.getByRole('button', { name: 'Continue' }).click();
      await page.locator('.step', { hasText: 'Step 2 of 2' }).waitFor();
      expect(initiations).to.have.length(2);
    } finally {
      page.off('request', onRequest);
      await page.unroute(verification);
    }
  });

  it('authorize → PASSWORD → TOTP → redirect_uri; the library redeems the code: ID token amr pwd + otp, userinfo, refresh', async () => {
    const started = Date.now();
    const { request, loginUrl, requestId } = await openLogin(shop, { scope: 'openid profile offline_access' });

    // The page continues the flow with a real form POST; the server answers 303 to the next stage.
    const continued = await passwordStage(alice);
    expect(continued.status()).to.equal(303);
    expect(continued.request().method()).to.equal('POST');
    expect(page.url()).to.equal(loginUrl);
    expect(await text('.step')).to.equal('Step 2 of 2');
    expect(await page.locator('#gh-identifier').count()).to.equal(0);
    expect(await page.locator('#gh-login').getAttribute('data-sub')).to.equal(alice.id);
    const code = page.getByRole('textbox', { name: 'Code from your authenticator app' });
    expect(await code.getAttribute('autocomplete')).to.equal('one-time-code');
    expect(await code.getAttribute('inputmode')).to.equal('numeric');
    expect(await focusedId()).to.equal('gh-TOTP-pass_code');

    await totpStage(alice, atRedirectUri(request));
    const loginMs = Date.now() - started;
    const callback = callbackOf(request);
    expect([...callback.searchParams.keys()].sort()).to.deep.equal(['code', 'iss', 'state']);
    expect(callback.searchParams.get('iss')).to.equal(issuer);
    const flow = (await gatehouse.container.cradle.flows.get(requestId))!;
    expect(flow).to.include({ status: 'finished', userId: alice.id, stage: 2 });
    expect(flow.methods).to.deep.equal(['PASSWORD', 'TOTP']);

    const { tokens, claims } = await redeem(request, callback);
    expect(tokens).to.include({ token_type: 'bearer', scope: 'openid profile offline_access' });
    expect(tokens.refresh_token).to.be.a('string');
    expect(claims).to.include({ iss: issuer, sub: alice.id, aud: CLIENT_ID, nonce: request.nonce });
    expect(claims.amr).to.include.members(['pwd', 'otp']);
    expect(claims.auth_time).to.be.a('number');
    expect(claims.auth_time! * 1000).to.be.within(Math.floor(started / 1000) * 1000, Date.now());

    const userinfo = await oauth.processUserInfoResponse(
      as,
      shop.client,
      claims.sub,
      await oauth.userInfoRequest(as, shop.client, tokens.access_token, insecure),
    );
    expect(userinfo).to.deep.equal({ sub: alice.id, preferred_username: alice.username });

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      shop.client,
      await oauth.refreshTokenGrantRequest(as, shop.client, shop.auth, tokens.refresh_token!, insecure),
    );
    expect(refreshed.access_token).to.be.a('string').and.not.equal(tokens.access_token);
    expect(refreshed.refresh_token).to.be.a('string').and.not.equal(tokens.refresh_token);
    expect(refreshed.scope).to.equal('openid profile offline_access');
    console.log(`      (browser login took ${loginMs} ms)`);
  });

  it('a second authorization in the same browser skips the login page (SSO) with a new code', async () => {
    const bob = await enrolUser('browser-bob');
    const first = await openLogin();
    await signIn(bob, atRedirectUri(first.request));
    const firstLogin = await redeem(first.request, callbackOf(first.request));
    const session = (await sessionCookie())!;
    expect(session).to.include({ httpOnly: true, sameSite: 'Lax', path: '/' });

    const second = await startLogin(shop);
    const response = (await page.goto(second.url))!;
    expect(redirectChain(response)).to.deep.equal([
      '/api/oauth2/authorize/',
      '/api/oauth2/authorize/resume',
      new URL(shop.redirectUri).pathname,
    ]);
    const secondLogin = await redeem(second, callbackOf(second));
    expect(secondLogin.code).to.not.equal(firstLogin.code);
    expect(secondLogin.claims).to.include({ sub: bob.id, nonce: second.nonce, auth_time: firstLogin.claims.auth_time });
    expect(secondLogin.claims.amr).to.deep.equal(firstLogin.claims.amr);
  });

  it('a password-only session (blog) does not sign in to the two-factor shop: the page asks for the code', async () => {
    const erin = await enrolUser('browser-erin');
    const atBlog = await openLogin(blog);
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill(erin.username);
    await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
    await Promise.all([page.waitForURL(atRedirectUri(atBlog.request)), page.keyboard.press('Enter')]);
    expect((await redeem(atBlog.request, callbackOf(atBlog.request))).claims.amr).to.deep.equal(['pwd']);

    // prompt=none: the client learns that the user must interact, and gets no code.
    const silent = await startLogin(shop, { prompt: 'none' });
    await page.goto(silent.url);
    const refused = callbackOf(silent);
    expect(refused.searchParams.get('error')).to.equal('interaction_required');
    expect(refused.searchParams.get('code')).to.equal(null);

    // Otherwise the login page opens at the second factor, for erin, without her password.
    const { request } = await openLogin(shop);
    expect(await text('.step')).to.equal('Step 1 of 1');
    expect(await page.locator('#gh-identifier').count()).to.equal(0);
    expect(await page.locator('#gh-login').getAttribute('data-sub')).to.equal(erin.id);
    expect(await page.getByRole('textbox', { name: 'Password' }).count()).to.equal(0);
    await totpStage(erin, atRedirectUri(request));
    const { claims } = await redeem(request, callbackOf(request));
    expect(claims).to.include({ sub: erin.id, nonce: request.nonce });
    expect(claims.amr).to.deep.equal(['pwd', 'otp']);
  });

  it('prompt=login shows the login page again despite the session, and the new login gets a new session id', async () => {
    const carol = await enrolUser('browser-carol');
    const first = await openLogin();
    await signIn(carol, atRedirectUri(first.request));
    await redeem(first.request, callbackOf(first.request));
    const before = (await sessionCookie())!.value;

    const { request } = await openLogin(shop, { prompt: 'login' });
    expect(await text('.step')).to.equal('Step 1 of 2');
    expect(await page.locator('#gh-identifier').count()).to.equal(1);
    await signIn(carol, atRedirectUri(request));
    const { claims } = await redeem(request, callbackOf(request));
    expect(claims).to.include({ sub: carol.id, nonce: request.nonce });
    expect(claims.amr).to.include.members(['pwd', 'otp']);
    expect((await sessionCookie())!.value).to.not.equal(before);
  });

  it('consent: Deny returns access_denied with the state; a new login that allows gets a code; consent is remembered', async () => {
    const dave = await enrolUser('browser-dave');
    const denied = (await openLogin(partner)).request;
    await passwordStage(dave);
    const [consent] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === '/login/consent' && r.request().method() === 'GET'),
      totpStage(dave, (u) => u.pathname === '/login/consent'),
    ]);
    expect(consent.status()).to.equal(200);
    const csp = consent.headers()['content-security-policy']!;
    expect(csp).to.not.include('unsafe-inline');
    const partnerOrigin = new URL(partner.redirectUri).origin;
    expect(csp.split('; ').filter((d) => d.startsWith('form-action'))).to.deep.equal([
      `form-action 'self' ${partnerOrigin}`,
    ]);
    expect(csp).to.equal(BASE_CSP.replace("form-action 'self'", `form-action 'self' ${partnerOrigin}`));
    expect(consent.headers()['x-frame-options']).to.equal('DENY');
    expect(await text('h1')).to.equal(`${PARTNER_NAME} wants access to your account`);
    expect(await page.locator('li code').allInnerTexts()).to.deep.equal(['openid', 'profile']);

    await Promise.all([page.waitForURL(atRedirectUri(denied)), page.getByRole('button', { name: 'Deny' }).click()]);
    const refusal = callbackOf(denied);
    expect(refusal.searchParams.get('error')).to.equal('access_denied');
    expect(refusal.searchParams.get('state')).to.equal(denied.state);
    expect(refusal.searchParams.get('iss')).to.equal(issuer);
    expect(refusal.searchParams.has('code')).to.equal(false);
    // The library accepts state and iss, then reports the error response.
    expect(() => oauth.validateAuthResponse(as, partner.client, refusal, denied.state))
      .to.throw(oauth.AuthorizationResponseError)
      .with.property('error', 'access_denied');

    await context!.clearCookies();
    const allowed = (await openLogin(partner)).request;
    await signIn(dave, (u) => u.pathname === '/login/consent');
    await Promise.all([page.waitForURL(atRedirectUri(allowed)), page.getByRole('button', { name: 'Allow' }).click()]);
    const { tokens, claims } = await redeem(allowed, callbackOf(allowed));
    expect(tokens.scope).to.equal('openid profile');
    expect(tokens.refresh_token).to.equal(undefined);
    expect(claims).to.include({ sub: dave.id, aud: PARTNER_ID, nonce: allowed.nonce });
    expect(claims.amr).to.include.members(['pwd', 'otp']);

    // Same scopes again, same browser: neither the login page nor the consent page.
    const again = await startLogin(partner);
    const response = (await page.goto(again.url))!;
    expect(redirectChain(response)).to.deep.equal([
      '/api/oauth2/authorize/',
      '/api/oauth2/authorize/resume',
      new URL(partner.redirectUri).pathname,
    ]);
    expect((await redeem(again, callbackOf(again))).claims).to.include({ sub: dave.id });
  });

  it('SMS: "Send code" shows the masked phone, a wrong code the generic message, the right one finishes', async () => {
    // A flow whose user is already known (as after stage 1): the page asks for no identifier.
    const flow = await gatehouse.container.cradle.flows.create({
      clientId: SMS_CLIENT_ID,
      stages: [['SMS']],
      ttlSeconds: 600,
      userId: alice.id,
      params: { return_to: `${shop.redirectUri}?sms=1` },
    });
    await page.goto(`${issuer}/login?request_id=${flow.id}`);
    expect(await page.locator('#gh-identifier').count()).to.equal(0);
    const code = page.getByRole('textbox', { name: 'Code from the text message' });
    expect(await code.count()).to.equal(0);
    const [initiated] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/SMS/initiation')),
      page.getByRole('button', { name: 'Send code' }).click(),
    ]);
    const sentAt = Date.now();
    // The server says when it sends again; the page counts that down, disabled, then enables.
    expect(((await initiated.json()) as { data: Record<string, unknown> }).data).to.include({
      resend_after: RESEND_SECONDS,
    });
    await page.locator('#gh-message.info').waitFor();
    expect(await text('#gh-message')).to.equal('We sent a code to +1******0000.');
    expect(await focusedId()).to.equal('gh-SMS-pass_code');
    expect(await code.getAttribute('inputmode')).to.equal('numeric');
    const resend = page.locator('#gh-send');
    expect(await resend.isDisabled()).to.equal(true);
    expect(await resend.innerText()).to.match(/^Send a new code in [12] s$/);
    await page.locator('#gh-send:enabled').waitFor({ timeout: 5_000 });
    expect(Date.now() - sentAt).to.be.at.least(RESEND_SECONDS * 1000 - 300);
    expect(await resend.innerText()).to.equal('Send a new code');
    // Sent again: a new code, and a new countdown.
    const before = (await import(CAPTURE_CHANNEL)) as { sent: unknown[] };
    const count = before.sent.length;
    await page.getByRole('button', { name: 'Send a new code' }).click();
    await page.locator('#gh-send:disabled', { hasText: /^Send a new code in [12] s$/ }).waitFor();
    expect(await resend.isDisabled()).to.equal(true);
    expect(before.sent.length).to.equal(count + 1);

    // Reloaded, the page knows no wait: the server refuses (429 RESEND_TOO_SOON) and names the
    // seconds left, which the page says and counts down.
    await page.reload();
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/SMS/initiation')),
      page.getByRole('button', { name: 'Send code' }).click(),
    ]);
    expect(refused.status()).to.equal(429);
    const wait = Number(refused.headers()['retry-after']);
    expect(wait).to.be.within(1, RESEND_SECONDS);
    await page.locator('#gh-message.error').waitFor();
    expect(await text('#gh-message')).to.match(/^A new code was sent moments ago\. Try again in [12] seconds?\.$/);
    await page.locator('#gh-send:disabled', { hasText: /^Send a new code in [12] s$/ }).waitFor();
    expect(before.sent.length).to.equal(count + 1);
    await page.locator('#gh-send:enabled', { hasText: 'Send code' }).waitFor({ timeout: 5_000 });
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.locator('#gh-message.info').waitFor();
    expect(before.sent.length).to.equal(count + 2);

    const { sent } = (await import(CAPTURE_CHANNEL)) as { sent: { to: string; text: string }[] };
    const right = /\b(\d{6})\b/.exec(sent.filter((m) => m.to === PHONE).at(-1)!.text)![1]!;
    await code.fill(right === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#gh-message.error').waitFor();
    expect(await text('#gh-message')).to.equal(FIRST_WRONG);

    await code.fill(right);
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(shop.redirectUri) && u.searchParams.get('sms') === '1'),
      page.getByRole('button', { name: 'Continue' }).click(),
    ]);
    const done = (await gatehouse.container.cradle.flows.get(flow.id))!;
    expect(done).to.include({ status: 'completed', userId: alice.id });
    expect(done.amr).to.deep.equal(['sms']);
  });

  it('offers a choice of the registered methods of the stage, the first by default', async () => {
    const flow = await gatehouse.container.cradle.flows.create({
      clientId: CLIENT_ID,
      stages: [['PASSWORD', 'BACKUPCODE', 'TOTP']],
      ttlSeconds: 600,
    });
    await page.goto(`${issuer}/login?request_id=${flow.id}`);
    const radios = page.locator('input[name="method"]');
    expect(await Promise.all((await radios.all()).map((r) => r.getAttribute('value')))).to.deep.equal([
      'PASSWORD',
      'TOTP',
    ]);
    expect(await page.getByRole('radio', { name: 'Password' }).isChecked()).to.equal(true);
    await page.getByRole('radio', { name: 'Authenticator app' }).check();
    const secret = page.locator('#gh-TOTP-pass_code');
    expect(await text('label[for="gh-TOTP-pass_code"]')).to.equal('Code from your authenticator app');
    expect(await secret.getAttribute('type')).to.equal('text');
    expect(await secret.getAttribute('autocomplete')).to.equal('one-time-code');
    expect(await secret.getAttribute('inputmode')).to.equal('numeric');
  });

  /** An app of the shop's site that authenticates with a secret (only its authorization request matters here). */
  const siteApp = (clientId: string): TestApp => ({
    client: { client_id: clientId },
    auth: oauth.None(),
    redirectUri: shop.redirectUri,
  });

  it('a method with its own page module signs in with nothing typed; the user is named with a way out', async () => {
    const bob = await enrolUser('browser-bob-devices');
    const { request } = await openLogin(siteApp(DEVICES_ID));
    await passwordStage(bob);
    // Only what bob can use: DEVICECHECK (anyone) and TOTP, not QUESTION (not set up); the first, as he used none.
    const values = await Promise.all(
      (await page.locator('input[name="method"]').all()).map((r) => r.getAttribute('value')),
    );
    expect(values).to.deep.equal(['DEVICECHECK', 'TOTP']);
    expect(await page.getByRole('radio', { name: 'This device' }).isChecked()).to.equal(true);
    expect(await text('section.method:not([hidden]) .note')).to.equal(
      'Confirms it is this browser, with nothing to type.',
    );
    expect(await text('.signed-in')).to.match(/^Signing in as browser-bob-devices\.\s+Not you\?$/);
    expect(await page.locator('#gh-not-you').getAttribute('href')).to.match(
      /^\/api\/oauth2\/authorize\/\?client_id=devices&/,
    );
    await Promise.all([
      page.waitForURL(atRedirectUri(request)),
      page.getByRole('button', { name: 'Continue' }).click(),
    ]);
    expect(callbackOf(request).searchParams.get('code')).to.be.a('string');
  });

  it('once the user is known: only the methods they set up, the one used last chosen first; a plain form for a method that describes nothing', async () => {
    const carl = await enrolUser('browser-carl-question');
    await gatehouse.container.cradle.services
      .credentials(carl.id, 'QUESTION')
      .add({ type: 'question', data: { answer: 'green' } });
    // carl signs in with TOTP once.
    const first = await openLogin(siteApp(DEVICES_ID));
    await passwordStage(carl);
    await page.getByRole('radio', { name: 'Authenticator app' }).check();
    await totpStage(carl, atRedirectUri(first.request));
    await context!.clearCookies();

    await openLogin(siteApp(DEVICES_ID));
    await passwordStage(carl);
    const values = await Promise.all(
      (await page.locator('input[name="method"]').all()).map((r) => r.getAttribute('value')),
    );
    expect(values).to.deep.equal(['DEVICECHECK', 'QUESTION', 'TOTP']);
    expect(await page.getByRole('radio', { name: 'Authenticator app' }).isChecked()).to.equal(true);
    // QUESTION declared no page: its id as the label, one input per verify field.
    await page.getByRole('radio', { name: 'QUESTION' }).check();
    const answer = page.getByRole('textbox', { name: 'Favourite colour' });
    await answer.fill('blue');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#gh-message.error').waitFor();
    expect(await text('#gh-message')).to.equal(FIRST_WRONG);
    await answer.fill('green');
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(shop.redirectUri)),
      page.getByRole('button', { name: 'Continue' }).click(),
    ]);
  });

  it('a stage with nothing set up for the user says so, with the way back to the app', async () => {
    const dana = await enrolUser('browser-dana-nothing');
    const { request } = await openLogin(siteApp(QUESTION_ID));
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill(dana.username);
    await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
    const [next] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === '/login' && r.request().method() === 'GET'),
      page.keyboard.press('Enter'),
    ]);
    expect(next.status()).to.equal(409);
    expect(await text('h1')).to.equal('No way to sign in to this app yet');
    await Promise.all([
      page.waitForURL(atRedirectUri(request)),
      page.getByRole('button', { name: /Cancel and go back/ }).click(),
    ]);
    const callback = callbackOf(request);
    expect(callback.searchParams.get('error')).to.equal('access_denied');
    expect(callback.searchParams.get('state')).to.equal(request.state);
  });

  it('"Cancel and go back" at the first stage answers access_denied with the state; the sign-in is over', async () => {
    const { request, requestId } = await openLogin();
    await Promise.all([
      page.waitForURL(atRedirectUri(request)),
      page.getByRole('button', { name: /Cancel and go back/ }).click(),
    ]);
    const callback = callbackOf(request);
    expect(callback.searchParams.get('error')).to.equal('access_denied');
    expect(callback.searchParams.get('iss')).to.equal(issuer);
    expect((await gatehouse.container.cradle.flows.get(requestId))!.status).to.equal('cancelled');
  });

  it('page modules are served from the plugin under a versioned, immutable path, and nothing else is', async () => {
    await openLogin(siteApp(DEVICES_ID));
    // No module on a page whose methods have none.
    expect(await page.locator('script[type="module"]').count()).to.equal(0);
    const flow = await gatehouse.container.cradle.flows.create({
      clientId: DEVICES_ID,
      stages: [['DEVICECHECK']],
      ttlSeconds: 600,
    });
    await page.goto(`${issuer}/login?request_id=${flow.id}`);
    const module = (await page.locator('script[type="module"]').getAttribute('src'))!;
    expect(module).to.match(/^\/login\/methods\/DEVICECHECK\/[0-9a-f]{16}\/page\.js$/);
    const res = await fetch(`${issuer}${module}`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect((await fetch(`${issuer}${module.replace('page.js', 'answer.js')}`)).status).to.equal(200);
    for (const other of [
      module.replace(/[0-9a-f]{16}/, '0000000000000000'),
      module.replace('page.js', 'index.js'),
      module.replace('page.js', '..%2Findex.js'),
    ]) {
      expect((await fetch(`${issuer}${other}`)).status, other).to.equal(404);
    }
  });

  it('unknown, expired and completed requests, an unknown app and a foreign redirect_uri get an error page, never a redirect', async () => {
    const { flows } = gatehouse.container.cradle;
    const cases: { url: string; status: number; title: string }[] = [];
    cases.push({ url: `${issuer}/login?request_id=no-such-request`, status: 404, title: 'Sign-in request not found' });
    cases.push({ url: `${issuer}/login`, status: 400, title: 'This sign-in link is incomplete' });
    const expired = await flows.create({ clientId: CLIENT_ID, stages: [['PASSWORD']], ttlSeconds: 0 });
    cases.push({
      url: `${issuer}/login?request_id=${expired.id}`,
      status: 410,
      title: 'This sign-in request has expired',
    });
    const finished = await flows.create({ clientId: CLIENT_ID, stages: [['PASSWORD']], ttlSeconds: 600 });
    expect(await flows.advance(finished, 0, { userId: alice.id, method: 'PASSWORD', amr: ['pwd'] })).to.include({
      status: 'completed',
    });
    cases.push({
      url: `${issuer}/login?request_id=${finished.id}`,
      status: 410,
      title: 'This sign-in is already complete',
    });
    // Before the redirect URI is trusted the authorization endpoint answers with a page (RFC 6749 §4.1.2.1).
    const unknownApp = new URL((await startLogin({ ...shop, client: { client_id: 'no-such-app' } })).url);
    cases.push({ url: unknownApp.href, status: 400, title: 'This sign-in request cannot be completed' });
    const foreign = new URL((await startLogin({ ...shop, redirectUri: 'https://attacker.example/cb' })).url);
    cases.push({ url: foreign.href, status: 400, title: 'This sign-in request cannot be completed' });

    const hitsBefore = site!.hits.length;
    for (const c of cases) {
      const response = await openWithoutRedirect(c.url);
      expect(response.status(), c.url).to.equal(c.status);
      expect(await text('h1')).to.equal(c.title);
      // A reference to quote to support: the request id the logs carry.
      expect(await text('.reference')).to.match(/^Reference: \S+\. Quote it if you contact support\.$/);
      expect(await page.locator('script').count()).to.equal(0);
      const headers = response.headers();
      expect(headers['content-security-policy']).to.equal(BASE_CSP);
      expect(headers['x-frame-options']).to.equal('DENY');
      expect(headers['referrer-policy']).to.equal('no-referrer');
      expect(headers['cache-control']).to.equal('no-store');
    }
    expect(site!.hits.length).to.equal(hitsBefore);
  });
});
