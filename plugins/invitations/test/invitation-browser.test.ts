/**
 * Accepting an invitation in Chromium: the admin API invites an address, the emailed link opens
 * the invitation page (its token in the fragment, dropped from the address bar), the invitee
 * chooses a password (German and English pages), then signs in to their app, whose second stage
 * they set up on the way (`enroll_on_login`), and lands there with tokens. The used link then
 * gets its clear page.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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
  type OutboundMessage,
  type RunningServer,
} from '@gatehouse-auth/core';

const CAPTURE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../test/verification/fixtures/capture-channel.js',
);
const { sent } = (await import(CAPTURE)) as { sent: OutboundMessage[] };
const KEY = Buffer.alloc(32, 5).toString('base64');
const ADMIN_TOKEN = 'invite-admin-token-0123456789abcdef0123456789';
const PASSWORD = 'my very own invited passphrase';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

describe('invitations (Chromium)', function () {
  this.timeout(90_000);

  let gatehouse: Gatehouse;
  let running: RunningServer | undefined;
  let chrome: Chromium | undefined;
  let context: BrowserContext;
  let page: Page;
  let issuer: string;
  let as: oauth.AuthorizationServer;
  let server: http.Server | undefined;
  let redirectUri: string;
  const client: oauth.Client = { client_id: 'team', token_endpoint_auth_method: 'none' };

  async function invite(email: string, locale?: string): Promise<string> {
    const res = await fetch(`${issuer}/admin/invitations`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, client_id: 'team', sign_in_url: `${new URL(redirectUri).origin}/home`, locale }),
    });
    expect(res.status).to.equal(201);
    for (let i = 0; i < 100; i++) {
      const mail = sent.find((m) => m.to === email);
      if (mail) return /(https?:\/\/\S+)/.exec(mail.text)![1]!;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('no invitation email');
  }

  before(async function () {
    requireChromium(this);
    server = http.createServer((_req, res) => res.writeHead(200).end('<h1>Team app</h1>'));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/team/cb`;
    const port = await freePort();
    issuer = `http://localhost:${port}`;
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
          { path: CAPTURE },
          { name: '@gatehouse-auth/invitations', options: { email_channel: 'capture' } },
          { name: '@gatehouse-auth/grant-authorization-code' },
          { name: '@gatehouse-auth/management' },
          { name: '@gatehouse-auth/page-login' },
          { name: '@gatehouse-auth/verification-api' },
        ],
        apps: [
          {
            client_id: 'team',
            name: 'Team',
            token_endpoint_auth_method: 'none',
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code'],
            scopes: ['openid'],
            login_stages: [['PASSWORD'], ['TOTP']],
            enroll_on_login: true,
          },
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

  after(async () => {
    await chrome?.close();
    await running?.shutdown();
    server?.closeAllConnections();
    server?.close();
  });

  it('opens the emailed link, sets a password, then signs in to the app (setting TOTP up) with tokens', async () => {
    const link = await invite('nora@example.com');
    const token = new URL(link).hash.slice(1);
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url() + (r.postData() ?? '')));
    await page.goto(link);
    await page.getByRole('heading', { name: 'Choose your password' }).waitFor();
    await page.getByLabel('Password', { exact: true }).waitFor();
    // The fragment left the address bar; no URL the browser asked for carried the token.
    expect(page.url()).not.to.contain(token);
    expect(requests.filter((r) => r.split('token=')[0]!.includes(token))).to.deep.equal([]);

    expect(await expectRevealButtons(page, 'Show', 'Hide')).to.equal(2);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set the password' }).click();
    await page.getByRole('heading', { name: 'Your account is ready' }).waitFor();
    expect(await page.getByRole('link', { name: 'Sign in' }).getAttribute('href')).to.equal(
      `${new URL(redirectUri).origin}/home`,
    );
    const user = (await gatehouse.container.cradle.users.findByIdentifier('nora@example.com'))!;
    expect(await gatehouse.container.cradle.services.accounts.verified(user, 'email')).to.equal(true);

    // The app starts a login; the invitee signs in with the new password and sets TOTP up.
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    await page.goto(url.href);
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill('nora@example.com');
    await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
    await Promise.all([page.waitForURL(/\/login\/enroll\?/), page.keyboard.press('Enter')]);
    await page.getByRole('button', { name: 'Set up' }).click();
    const secret = await page.locator('#gh-secret').innerText();
    await page.getByRole('textbox', { name: 'Code' }).fill(await generate({ secret }));
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(`${redirectUri}?`)),
      page.getByRole('button', { name: 'Confirm' }).click(),
    ]);
    const params = oauth.validateAuthResponse(as, client, new URL(page.url()), state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      redirectUri,
      codeVerifier,
      insecure,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { requireIdToken: true });
    expect(oauth.getValidatedIdTokenClaims(tokens)!.sub).to.equal(user.id);

    // The link was for one use.
    await context.clearCookies();
    await page.goto(link);
    await page.getByRole('heading', { name: 'This invitation was used already' }).waitFor();
  });

  it('speaks German to a German invitee', async () => {
    const link = await invite('otto@example.com', 'de-DE');
    expect(sent.find((m) => m.to === 'otto@example.com')!.subject).to.equal('Ihre Einladung');
    await page.setExtraHTTPHeaders({ 'Accept-Language': 'de-DE,de;q=0.9' });
    try {
      await page.goto(link);
      await page.getByRole('heading', { name: 'Wählen Sie Ihr Passwort' }).waitFor();
      expect(await expectRevealButtons(page, 'Anzeigen', 'Verbergen')).to.equal(2);
      await page.getByLabel('Passwort', { exact: true }).fill(PASSWORD);
      await page.getByLabel('Passwort wiederholen').fill(`${PASSWORD}x`);
      await page.getByRole('button', { name: 'Passwort festlegen' }).click();
      await page.getByText('Die beiden Passwörter sind verschieden.').waitFor();
    } finally {
      await page.setExtraHTTPHeaders({});
    }
  });
});
