/**
 * Issue 12: an app's own login UI on another site, as cidaas-based apps have one. demo-app gets
 * login_page_url (http://127.0.0.1:<ui>/login, a different site from Gatehouse at
 * http://localhost:<port>) and that origin in allowed_origins. Headless Chromium follows
 * /api/oauth2/authorize/ to the UI, posts the password form cross-site to /login-srv/login,
 * does TOTP by XHR (CORS) and the continuation form POST, and arrives at the redirect URI with
 * a code; a UI opened without a request id asks for one (generate) first. A wrong password comes back to the UI as error parameters; a page of an unlisted
 * origin cannot read the API. Issue 25: a page of another site cannot force the attacker's login
 * into the browser (login CSRF), and a track id read from the UI's URL sets nothing up.
 */
import { createServer, type Server } from 'node:http';
import type { MethodSetup } from '@gatehouse-auth/core';
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import { freshTab, openChromium, requireChromium, type Chromium } from '../../../test/support/chromium.js';
import { authenticatedStatus, freePort, pkcePair } from '../../../test/oauth/support.js';
import {
  ALICE_PASSWORD,
  DEMO_APP,
  aliceTotp,
  generateRequest,
  outboxCode,
  outboxLatestText,
  outboxMessage,
  redeemDemo,
  startDemoServer,
  type DemoServer,
} from '../../../test/oauth/demo-server.js';

/** The app's login UI: a password form, then a TOTP step done with the verification API. */
function loginUi(gatehouse: string): string {
  return String.raw`<!doctype html><html><head><meta charset="utf-8"><title>Shop login</title></head><body>
<p id="error"></p>
<form id="password" method="post" action="${gatehouse}/login-srv/login" hidden>
  <input type="hidden" name="requestId" />
  <label>Username <input name="username" /></label>
  <label>Password <input name="password" type="password" /></label>
  <button type="submit">Sign in</button>
</form>
<div id="totp" hidden>
  <label>Code <input id="code" /></label>
  <button id="verify" type="button">Verify</button>
</div>
<form id="continue" method="post" action="${gatehouse}/login-srv/verification/login" hidden>
  <input type="hidden" name="requestId" /><input type="hidden" name="status_id" />
  <input type="hidden" name="verificationType" value="TOTP" /><input type="hidden" name="sub" />
</form>
<script>
  const q = new URLSearchParams(location.search);
  const requestId = q.get('requestId');
  // Opened without a request id: ask Gatehouse for one by XHR (cidaas getRequestId), then show it.
  if (!requestId) {
    fetch('${gatehouse}/authz-srv/authrequest/authz/generate', { method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_id: '${DEMO_APP.id}', redirect_uri: '${DEMO_APP.redirectUri}', response_type: 'code',
        response_mode: 'query', scope: 'openid', nonce: 'n', state: 'ui', code_challenge: q.get('challenge'),
        code_challenge_method: 'S256' }) })
      .then((r) => r.json()).then((r) => location.replace('?requestId=' + encodeURIComponent(r.data.requestId)));
  }
  document.getElementById('error').textContent = q.get('error') ? q.get('error') + ': ' + q.get('error_description') : '';
  const api = (path, body) =>
    fetch('${gatehouse}' + path, { method: 'POST', headers: { 'Content-Type': 'application/json', requestid: requestId },
      body: JSON.stringify(body) }).then((r) => r.json());
  if (!requestId) {
    // waiting for generate
  } else if (!q.get('sub')) {
    const form = document.getElementById('password');
    form.elements.requestId.value = requestId;
    form.hidden = false;
  } else {
    document.getElementById('totp').hidden = false;
    const started = api('/verification-srv/authentication/TOTP/initiation',
      { request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: q.get('sub') });
    started.then(() => document.body.dataset.ready = 'yes');
    document.getElementById('verify').onclick = async () => {
      const s = await started;
      const v = await api('/verification-srv/authentication/TOTP/verification',
        { exchange_id: s.data.exchange_id.exchange_id, pass_code: document.getElementById('code').value });
      continueWith(v.data.status_id, 'TOTP', v.data.sub);
    };
  }
  // The continuation: a form POST to Gatehouse (cross-site), for whichever method was done.
  function continueWith(statusId, type, sub) {
    const f = document.getElementById('continue');
    f.elements.requestId.value = requestId;
    f.elements.status_id.value = statusId;
    f.elements.verificationType.value = type;
    f.elements.sub.value = sub;
    f.submit();
  }
  window.continueWith = continueWith;
</script></body></html>`;
}

function serve(html: string): Promise<{ server: Server; origin: string }> {
  return new Promise((resolve) => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(html);
    });
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ server, origin: `http://127.0.0.1:${port}` });
    });
  });
}

describe('an app’s own login UI on another site (Chromium, issue 12)', function () {
  this.timeout(60_000);
  let server: DemoServer;
  let ui: { server: Server; origin: string };
  let stranger: { server: Server; origin: string };
  let sameSite: { server: Server; origin: string };
  let chrome: Chromium | undefined;
  let context: BrowserContext;
  let page: Page;

  before(async function () {
    requireChromium(this);
    // The UI's origin must be known before Gatehouse starts: reserve a port for it first.
    const uiPort = await freePort();
    const uiOrigin = `http://127.0.0.1:${uiPort}`;
    // A page of the app on Gatehouse's own site (localhost, another port): same-site, so its XHR
    // carries Gatehouse's cookies.
    const sameSitePort = await freePort();
    const sameSiteOrigin = `http://localhost:${sameSitePort}`;
    server = await startDemoServer({
      host: 'localhost',
      configure(config) {
        const app = config.apps.find((a) => a.client_id === 'demo-app')!;
        app.login_page_url = `${uiOrigin}/login`;
        app.allowed_origins = [uiOrigin, sameSiteOrigin];
        // Passwordless: an emailed code may start the login (then a second factor).
        app.login_stages = [[...app.login_stages[0]!, 'EMAIL'], app.login_stages[1]!];
      },
    });
    ui = await new Promise((resolve) => {
      const s = createServer((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
        res.end(loginUi(server.issuer));
      });
      s.listen(uiPort, '127.0.0.1', () => resolve({ server: s, origin: uiOrigin }));
    });
    stranger = await serve('<!doctype html><title>elsewhere</title>');
    sameSite = await new Promise((resolve) => {
      const s = createServer((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
        res.end('<!doctype html><title>shop, same site</title>');
      });
      s.listen(sameSitePort, '127.0.0.1', () => resolve({ server: s, origin: sameSiteOrigin }));
    });
    chrome = await openChromium();
    context = chrome.context;
  });

  beforeEach(async function () {
    page = await freshTab(context, page);
  });

  after(async function () {
    await chrome?.close();
    await server?.close();
    ui?.server.close();
    stranger?.server.close();
    sameSite?.server.close();
  });

  /** The UI's TOTP step, once it shows the second stage, to the redirect URI: the callback and the tokens. */
  async function totpToTokens(tab: Page, verifier: string) {
    await tab.waitForURL((u) => u.origin === ui.origin && u.searchParams.has('sub'));
    await tab.locator('body[data-ready="yes"]').waitFor();
    await tab.getByLabel('Code').fill(await aliceTotp(server));
    const [request] = await Promise.all([
      tab.waitForRequest((r) => r.url().startsWith(DEMO_APP.redirectUri), { timeout: 15_000 }),
      tab.getByRole('button', { name: 'Verify' }).click(),
    ]);
    const callback = new URL(request.url());
    const tokens = await redeemDemo(server, DEMO_APP, callback.searchParams.get('code')!, verifier);
    expect(tokens.access_token).to.be.a('string');
    return { callback, tokens };
  }

  function authorizeUrl() {
    const { verifier, challenge } = pkcePair();
    const params = new URLSearchParams({
      client_id: DEMO_APP.id,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: DEMO_APP.redirectUri,
      state: 'ui',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    return { url: server.url(`/api/oauth2/authorize/?${params.toString()}`), verifier };
  }

  it('authorize → the app’s UI → password form (cross-site POST) → TOTP by XHR → continuation → a code', async function () {
    const { url, verifier } = authorizeUrl();
    await page.goto(url);
    expect(new URL(page.url()).origin).to.equal(ui.origin);
    const requestId = new URL(page.url()).searchParams.get('requestId');
    expect(requestId).to.be.a('string');
    const info = (await page.evaluate(
      (u) => fetch(u).then((r) => r.json()),
      server.url(`/public-srv/public/${requestId}`),
    )) as { data: { client_id: string; client_name: string; allowed_methods: string[] } };
    expect(info.data).to.include({ client_id: 'demo-app', client_name: 'Gatehouse demo app' });
    expect(info.data.allowed_methods).to.include('PASSWORD');

    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill(ALICE_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.origin === ui.origin && u.searchParams.has('sub'));
    expect(new URL(page.url()).searchParams.get('sub')).to.equal(server.alice.id);
    await totpToTokens(page, verifier);
  });

  it('a UI opened without a request id generates one by XHR, and the login it starts ends in a code', async function () {
    const { verifier, challenge } = pkcePair();
    await page.goto(`${ui.origin}/login?challenge=${challenge}`);
    await page.waitForURL((u) => u.searchParams.has('requestId'));
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill(ALICE_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const { callback } = await totpToTokens(page, verifier);
    expect(callback.searchParams.get('state')).to.equal('ui');
  });

  /** A user with nothing but a password: the kind whose login may set a first second factor up. */
  async function passwordOnlyUser(username: string, password: string): Promise<string> {
    const { users } = server.gatehouse.container.cradle;
    const id = (await users.create({ username })).id;
    // Setting methods up is @gatehouse-auth/management's service (decision 81); no request here.
    await server.gatehouse.container
      .resolve<MethodSetup>('methodSetup')
      .step('initiation', 'PASSWORD', (await users.findById(id))!, { password }, { headers: {}, socket: {} } as never);
    return id;
  }

  it('a setup call during the login needs the browser doing it: the track id from the URL alone is refused (issue 25)', async function () {
    const password = 'carol has a long enough password';
    await passwordOnlyUser('carol-ui', password);
    await page.goto(authorizeUrl().url);
    const requestId = new URL(page.url()).searchParams.get('requestId')!;
    await page.getByLabel('Username').fill('carol-ui');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.origin === ui.origin && u.searchParams.has('sub'));
    // What leaks with the UI's URL (history, logs, analytics, Referer).
    const trackId = new URL(page.url()).searchParams.get('track_id')!;
    const setupUrl = (method: string, track: string) =>
      server.url(`/verification-actions-srv/setup/${method}/initiation/${track}`);
    /** An XHR of the page open now, with or without the browser's cookies: the error code, or 'ok'. */
    const xhr = (method: string, track: string, credentials: 'omit' | 'include') =>
      page.evaluate(
        ([u, c]) =>
          fetch(u!, {
            method: 'POST',
            credentials: c as 'omit' | 'include',
            headers: { 'Content-Type': 'application/json' },
            body: '{}',
          }).then((r) => r.json().then((b) => (b as { error?: { code: string } }).error?.code ?? 'ok')),
        [setupUrl(method, track), credentials],
      );
    // Whoever holds the URL, from anywhere else: no cookie of this login, no client secret.
    const stolen = await fetch(setupUrl('TOTP', trackId), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: stranger.origin },
      body: '{}',
    });
    expect(stolen.status).to.equal(403);
    expect(((await stolen.json()) as { error: { code: string } }).error.code).to.equal('FLOW_NOT_BOUND');
    expect(await xhr('TOTP', trackId, 'omit')).to.equal('FLOW_NOT_BOUND');
    // A page of the app on Gatehouse's site sends the login's cookie with credentials: 'include'.
    await page.goto(`${sameSite.origin}/`);
    expect(await xhr('TOTP', requestId, 'include')).to.equal('FLOW_NOT_BOUND');
    // A passkey would sign in by itself: a password alone does not bind one.
    expect(await xhr('FIDO2', trackId, 'include')).to.equal('SETUP_NOT_ALLOWED');
    expect(await xhr('TOTP', trackId, 'include')).to.equal('ok');
    // The cross-site UI's back end: the track id with the app's own credentials.
    const backEnd = await fetch(setupUrl('TOTP', trackId), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Basic ${Buffer.from(`${DEMO_APP.id}:${DEMO_APP.secret}`).toString('base64')}`,
      },
      body: '{}',
    });
    expect(backEnd.status).to.equal(200);
  });

  it('login CSRF: a page on another site posts the attacker’s generated request: refused, no session, no silent sign-in (issue 25)', async function () {
    await context.clearCookies();
    // The attacker's own account (not alice's: her mailbox is other tests' outbox).
    const attackerPassword = 'mallory has a long enough password';
    await passwordOnlyUser('mallory-ui', attackerPassword);
    // The attacker's own request id, and a proof of the attacker's own login through the JSON API.
    const { requestId } = await generateRequest(server);
    const statusId = await authenticatedStatus(
      server,
      requestId,
      'PASSWORD',
      { identifier: 'mallory-ui' },
      { password: attackerPassword },
    );
    /** The attacker's form: the values are ids and a password, escaped all the same. */
    const attackerForm = (action: string, fields: Record<string, string>) => {
      const attr = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
      const inputs = Object.entries(fields).map(([n, v]) => `<input name="${attr(n)}" value="${attr(v)}">`);
      return `<form method="post" action="${attr(action)}">${inputs.join('')}</form>`;
    };
    /** The attacker's page auto-submits a form to Gatehouse; what the victim's browser got. */
    const forcedPost = async (path: string, fields: Record<string, string>) => {
      await page.goto(`${stranger.origin}/`);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url() === server.url(path)),
        page.evaluate(
          (html) => {
            // No DOM types in the suite: the page's document, as much of it as this needs.
            const doc = (
              globalThis as unknown as { document: { body: { innerHTML: string }; forms: { submit(): void }[] } }
            ).document;
            doc.body.innerHTML = html;
            doc.forms[0]!.submit();
          },
          attackerForm(server.url(path), fields),
        ),
      ]);
      return { status: response.status(), body: await response.text() };
    };
    const password = await forcedPost('/login-srv/login', {
      requestId,
      username: 'mallory-ui',
      password: attackerPassword,
    });
    expect(password.status).to.equal(403);
    expect(password.body).to.include('ORIGIN_NOT_ALLOWED');
    const status = await forcedPost('/login-srv/verification/login', {
      requestId,
      status_id: statusId,
      verificationType: 'PASSWORD',
    });
    expect(status.status).to.equal(403);
    expect(status.body).to.include('ORIGIN_NOT_ALLOWED');
    // Nothing of Gatehouse's landed in the victim's browser ...
    const cookies = await context.cookies(server.url('/'));
    expect(cookies.map((c) => c.name).filter((n) => /gh_(session|flow)/.test(n))).to.deep.equal([]);
    // ... so another app asking silently signs no one in.
    const { challenge } = pkcePair();
    const silent = new URLSearchParams({
      client_id: 'demo-spa',
      response_type: 'code',
      scope: 'openid',
      redirect_uri: 'http://127.0.0.1:5173/callback',
      state: 'silent',
      prompt: 'none',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const [answer] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith('http://127.0.0.1:5173/callback'), { timeout: 15_000 }),
      page.goto(server.url(`/api/oauth2/authorize/?${silent.toString()}`)).catch(() => null),
    ]);
    expect(new URL(answer.url()).searchParams.get('error')).to.equal('login_required');
    // The request is still the attacker's to use, from the app's own UI only.
    const info = await fetch(server.url(`/public-srv/public/${requestId}`));
    expect(((await info.json()) as { data: { stage: number } }).data.stage).to.equal(1);
  });

  it('a wrong password comes back to the UI as error and error_description, not as a JSON page', async function () {
    await page.goto(authorizeUrl().url);
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.origin === ui.origin && u.searchParams.has('error'));
    expect(new URL(page.url()).searchParams.get('error')).to.equal('VERIFICATION_FAILED');
    expect(await page.locator('#error').textContent()).to.include('VERIFICATION_FAILED');
  });

  it('passwordless EMAIL from the UI by XHR (PASSWORDLESS_AUTHENTICATION, email), then TOTP, to a code', async function () {
    const { url, verifier } = authorizeUrl();
    await page.goto(url);
    const requestId = new URL(page.url()).searchParams.get('requestId')!;
    const api = (path: string, body: Record<string, string>) =>
      page.evaluate(
        ([u, b]) =>
          fetch(u!, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: b }).then((r) => r.json()),
        [server.url(path), JSON.stringify(body)],
      ) as Promise<{ data: Record<string, unknown> }>;
    // The code goes out after the answer: wait for a new message, not an earlier test's.
    const before = await outboxLatestText(server, 'alice@example.test');
    const started = await api('/verification-srv/authentication/EMAIL/initiation', {
      request_id: requestId,
      usage_type: 'PASSWORDLESS_AUTHENTICATION',
      email: 'alice@example.test',
    });
    const exchangeId = (started.data.exchange_id as { exchange_id: string }).exchange_id;
    const code = await outboxCode(server, 'alice@example.test', (text) => text !== before);
    const verified = await api('/verification-srv/authentication/EMAIL/verification', {
      exchange_id: exchangeId,
      pass_code: code,
    });
    expect(verified.data.sub).to.equal(server.alice.id);
    // The UI continues with a form POST (cross-site), as for any method.
    await page.evaluate(
      ([statusId, sub]) =>
        (globalThis as unknown as { continueWith(s: string, t: string, u: string): void }).continueWith(
          statusId!,
          'EMAIL',
          sub!,
        ),
      [verified.data.status_id as string, verified.data.sub as string],
    );
    await totpToTokens(page, verifier);
  });

  it('a sign-in link (processingType LINK) opened in a new tab of the same browser moves the login on to its UI', async function () {
    const { url, verifier } = authorizeUrl();
    await page.goto(url);
    const requestId = new URL(page.url()).searchParams.get('requestId')!;
    const started = (await page.evaluate(
      ([u, b]) =>
        fetch(u!, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: b }).then((r) => r.json()),
      [
        server.url('/verification-srv/authentication/EMAIL/initiation'),
        JSON.stringify({
          request_id: requestId,
          usage_type: 'PASSWORDLESS_AUTHENTICATION',
          email: 'alice@example.test',
          processingType: 'LINK',
        }),
      ],
    )) as { data: { exchange_id: { exchange_id: string } } };
    const exchangeId = started.data.exchange_id.exchange_id;
    const message = await outboxMessage(server, 'alice@example.test', (t) => t.includes(exchangeId));
    const link = /https?:\/\/\S+/.exec(message.text)![0];
    const tab = await context.newPage();
    try {
      await tab.goto(link);
      await totpToTokens(tab, verifier);
    } finally {
      await tab.close();
    }
  });

  it('a page of an unlisted origin cannot read the API; the listed one can', async function () {
    const read = (origin: string) =>
      page.goto(`${origin}/`).then(() =>
        page.evaluate(
          (u) =>
            fetch(u, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }).then(
              (r) => r.status,
              () => 'blocked',
            ),
          server.url('/verification-srv/authentication/PASSWORD/initiation'),
        ),
      );
    expect(await read(stranger.origin)).to.equal('blocked');
    expect(await read(ui.origin)).to.equal(400);
  });
});
