/**
 * Issue 26, the contract for endpoint and page plugins (plugin API 1.2): a third-party plugin
 * (test/fixtures/plugins/web-contract.js, written against the public index only) authenticates
 * clients as /token does, reads the browser's session, starts a hosted login for an app and reads
 * its result, renders a page in the hosted layout with its own messages and a CSRF-protected form,
 * counts a named limit, and adds a discovery member; a member the core owns stops start-up.
 * Plugin API 1.3 (test/fixtures/plugins/web-app.js): a first-party app, a login with `maxAge`,
 * the hosted headers for a page of its own layout, the account service; clashing apps and the
 * old `console:`/`account:` keys stop start-up; without the page plugins /console is 404.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { buildApp, createLogger, parseConfig } from '@gatehouse-auth/core';
import { FakeClock } from '@gatehouse-auth/testing';
import { fixturePlugin } from '../support/paths.js';
import {
  Browser,
  WEB,
  WEB_CB,
  basic,
  passwordStage,
  locationOf,
  startServer,
  type OAuthServer,
  type TestUser,
} from '../oauth/support.js';

describe('endpoint and page plugins: the web API (plugin API 1.2, issue 26)', function () {
  let server: OAuthServer;
  let user: TestUser;

  before(async function () {
    server = await startServer({ plugins: [{ path: fixturePlugin('web-contract.js') }] });
    user = await server.user('web-api');
  });
  after(() => server?.close());

  const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(server.url(path), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });

  it('authenticates a client as /token does: Basic, a body secret, a public id; a wrong secret is 401 invalid_client', async function () {
    const ok = await post('/acme-web/client', {}, { Authorization: basic(WEB.id, WEB.secret) });
    expect(ok.status).to.equal(200);
    expect(await ok.json()).to.deep.equal({ client_id: 'web', public: false });
    const publicClient = await post('/acme-web/client', { client_id: 'spa' });
    expect(await publicClient.json()).to.deep.equal({ client_id: 'spa', public: true });
    const wrong = await post('/acme-web/client', {}, { Authorization: basic(WEB.id, 'nope') });
    expect(wrong.status).to.equal(401);
    expect(((await wrong.json()) as { error: string }).error).to.equal('invalid_client');
    const none = await post('/acme-web/client', {});
    expect(none.status).to.equal(401);
  });

  it('adds its member to the discovery document', async function () {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const doc = (await (await fetch(server.url(path))).json()) as Record<string, unknown>;
      expect(doc.acme_endpoint).to.equal(server.url('/acme-web/client'));
      expect(doc.issuer).to.equal(server.issuer);
    }
  });

  it('a hosted login it starts for an app goes through the app’s stages and comes back once; then the session is seen', async function () {
    const browser = new Browser(server);
    expect((await browser.get('/acme-web/whoami')).status).to.equal(401);
    const login = locationOf(await browser.get('/acme-web/login?client_id=web'), server, 303);
    expect(login.pathname).to.equal('/login');
    const requestId = login.searchParams.get('request_id')!;
    const back = await passwordStage(browser, server, requestId, user);
    expect(back.pathname).to.equal('/acme-web/back');
    expect(back.searchParams.get('request_id')).to.equal(requestId);
    // The authorization endpoint's own steps do not take a plugin's login: no code, no fault.
    for (const path of ['/api/oauth2/authorize/resume', '/login/consent']) {
      const page = await browser.get(`${path}?request_id=${requestId}`);
      expect(page.status, path).to.equal(400);
      expect(await page.text()).to.include('This sign-in is unknown or was started in another browser.');
    }
    // Another browser with the same link learns nothing.
    const other = new Browser(server);
    expect((await other.get(back.pathname + back.search)).status).to.equal(400);
    const result = await browser.get(back.pathname + back.search);
    expect(result.status).to.equal(200);
    const body = (await result.json()) as { sub: string; amr: string[]; sid: string };
    expect(body.sub).to.equal(user.id);
    expect(body.amr).to.deep.equal(['pwd']);
    expect(body.sid).to.be.a('string');
    // Once only.
    expect((await browser.get(back.pathname + back.search)).status).to.equal(400);
    const whoami = await browser.get('/acme-web/whoami');
    expect(await whoami.json()).to.deep.equal({ sub: user.id, methods: ['PASSWORD'] });
    // Signed in: the next login for the app is single sign-on, straight back.
    const again = locationOf(await browser.get('/acme-web/login?client_id=web'), server, 303);
    expect(again.pathname).to.equal('/acme-web/back');
    const sso = (await (await browser.get(again.pathname + again.search)).json()) as { sub: string };
    expect(sso.sub).to.equal(user.id);
  });

  it('renders a page in the hosted layout in the browser’s language, with its headers; its form needs the CSRF token', async function () {
    const browser = new Browser(server);
    const page = await browser.get('/acme-web/page?name=<b>Ann</b>', { 'Accept-Language': 'de' });
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).to.equal('DENY');
    expect(page.headers.get('cache-control')).to.equal('no-store');
    const text = await page.text();
    expect(text).to.include('<html lang="de">');
    expect(text).to.include('Hallo, &lt;b&gt;Ann&lt;/b&gt;');
    expect(text).to.include('/login/assets/login.css');
    // The tab's icon: browsers ask for /favicon.ico on every page (it used to be a 404).
    const icon = await browser.request('/favicon.ico');
    expect([icon.status, icon.headers.get('content-type')]).to.deep.equal([200, 'image/svg+xml; charset=utf-8']);
    expect(await icon.text()).to.match(/^<svg /);
    const csrf = /name="csrf" value="([^"]+)"/.exec(text)![1]!;
    // English where the catalog has no German.
    const saved = await browser.request('/acme-web/page', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Accept-Language': 'de' },
      body: new URLSearchParams({ csrf }).toString(),
    });
    expect(saved.status).to.equal(200);
    expect(await saved.text()).to.include('<p>Saved</p>');
    const forged = await browser.postForm('/acme-web/page', { csrf: 'x' });
    expect(forged.status).to.equal(403);
    // Another browser (no cookie) with the token, or the form posted from another site: refused.
    expect((await new Browser(server).postForm('/acme-web/page', { csrf })).status).to.equal(403);
    const crossSite = await browser.request('/acme-web/page', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://evil.example' },
      body: new URLSearchParams({ csrf }).toString(),
    });
    expect(crossSite.status).to.equal(403);
    // No Origin at all (a browser always sends one with a POST): not this site's form either.
    const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const noOrigin = await fetch(server.url('/acme-web/page'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
      body: new URLSearchParams({ csrf }).toString(),
    });
    expect(noOrigin.status).to.equal(403);
  });

  it('counts a named limit', async function () {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(server.url('/acme-web/ping'))).status);
    expect(statuses).to.deep.equal([200, 200, 429]);
  });

  it('left out of the config, the plugin is off: its paths answer 404 and its member is gone', async function () {
    const without = await startServer();
    try {
      expect((await fetch(without.url('/acme-web/page'))).status).to.equal(404);
      expect((await fetch(without.url('/acme-web/client'), { method: 'POST' })).status).to.equal(404);
      const doc = (await (await fetch(without.url('/.well-known/openid-configuration'))).json()) as Record<
        string,
        unknown
      >;
      expect(doc).to.not.have.property('acme_endpoint');
    } finally {
      await without.close();
    }
  });

  it('a discovery member the core sets stops start-up', async function () {
    const config = parseConfig(
      {
        issuer: 'http://127.0.0.1:1',
        database: { url: 'sqlite::memory:' },
        log: { level: 'silent' },
        plugins: [{ path: fixturePlugin('web-takes-issuer.js') }],
        apps: [],
      },
      {},
    );
    let error: Error | null = null;
    try {
      const app = await buildApp(config, { logger: createLogger('silent') });
      await app.close();
    } catch (err) {
      error = err as Error;
    }
    expect(error?.message).to.match(/discovery member "token_endpoint" is the core's/);
  });
});

describe('endpoint and page plugins: first-party apps, fresh logins, the account service (plugin API 1.3)', function () {
  let server: OAuthServer;
  let user: TestUser;
  const clock = new FakeClock(new Date('2026-03-01T09:00:00Z'));

  before(async function () {
    server = await startServer({ plugins: [{ path: fixturePlugin('web-app.js') }], clock });
    user = await server.user('web-app');
  });
  after(() => server?.close());

  /** Builds a server and answers why it did not start. */
  async function refusal(raw: Record<string, unknown>): Promise<string | undefined> {
    const base = { issuer: 'http://127.0.0.1:1', database: { url: 'sqlite::memory:' }, log: { level: 'silent' } };
    try {
      const app = await buildApp(parseConfig({ ...base, ...raw }, {}), { logger: createLogger('silent') });
      await app.close();
    } catch (err) {
      return (err as Error).message;
    }
    return undefined;
  }

  it('registers its app, served like a config app, and signs users in for it', async function () {
    const app = server.gatehouse.container.cradle.clients.get('acme-portal');
    expect(app).to.include({ name: 'Acme portal', isPublic: true });
    expect(app!.loginStages).to.deep.equal([['PASSWORD']]);
    const browser = new Browser(server);
    const login = locationOf(await browser.get('/portal/login'), server, 303);
    const back = await passwordStage(browser, server, login.searchParams.get('request_id')!, user);
    expect(await (await browser.get(back.pathname + back.search)).json()).to.deep.equal({ sub: user.id });
    // The server's overview (the account service) lists the app and the plugin.
    const overview = (await (await browser.get('/portal/overview')).json()) as { apps: string[]; plugins: string[] };
    expect(overview.apps).to.include('acme-portal');
    expect(overview.plugins).to.include('@acme/portal');
  });

  it('a login with maxAge does not take factors older than that; without, single sign-on', async function () {
    const browser = new Browser(server);
    const first = locationOf(await browser.get('/portal/login'), server, 303);
    const back = await passwordStage(browser, server, first.searchParams.get('request_id')!, user);
    await browser.get(back.pathname + back.search);
    clock.advance(600);
    expect(locationOf(await browser.get('/portal/login?max_age=300'), server, 303).pathname).to.equal('/login');
    expect(locationOf(await browser.get('/portal/login'), server, 303).pathname).to.equal('/portal/back');
  });

  it('a login it started cannot be cancelled at /login/cancel: 403, and the flow goes on', async function () {
    const browser = new Browser(server);
    const requestId = locationOf(await browser.get('/portal/login'), server, 303).searchParams.get('request_id')!;
    // The form's token as /authorize's flows have it: the hash of this browser's flow cookie.
    const flowCookie = browser.cookieNames().find((n) => n.includes('gh_flow_'))!;
    const csrf = createHash('sha256')
      .update(`csrf:${browser.cookies.get(flowCookie)!}`)
      .digest('base64url');
    const res = await browser.postForm('/login/cancel', { request_id: requestId, csrf });
    expect(res.status).to.equal(403);
    const back = await passwordStage(browser, server, requestId, user);
    expect(await (await browser.get(back.pathname + back.search)).json()).to.deep.equal({ sub: user.id });
  });

  it("sends a page of its own layout with the hosted pages' headers", async function () {
    const res = await fetch(server.url('/portal/own'), { headers: { Cookie: 'acme=ok' } });
    expect(res.headers.get('content-security-policy')).to.match(/^default-src 'none'; script-src 'self'/);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(await res.text()).to.include('<p>ok</p>');
  });

  it('two plugins with the same app id stop start-up; so does a config app with it', async function () {
    const plugins = [{ path: fixturePlugin('web-app.js') }, { path: fixturePlugin('web-app-twin.js') }];
    expect(await refusal({ plugins })).to.match(
      /plugin @acme\/portal-twin: app "acme-portal" is already registered by plugin @acme\/portal/,
    );
    expect(
      await refusal({ plugins: plugins.slice(0, 1), apps: [{ client_id: 'acme-portal', redirect_uris: [WEB_CB] }] }),
    ).to.match(/plugin @acme\/portal: app "acme-portal" is already one of the config's apps/);
  });

  it('without the console and account plugins the server starts, and /console and /account answer 404', async function () {
    const bare = await startServer();
    try {
      for (const path of ['/console', '/console/users', '/account', '/account/callback']) {
        expect((await fetch(bare.url(path), { redirect: 'manual' })).status, path).to.equal(404);
      }
      expect(bare.gatehouse.container.cradle.clients.get('gatehouse-console')).to.equal(undefined);
    } finally {
      await bare.close();
    }
  });

  it('an old top-level console: or account: key stops start-up, saying which plugin to list instead', async function () {
    expect(await refusal({ console: { enabled: true, admins: ['alice'] } })).to.equal(
      'console: the admin console is now the plugin @gatehouse-auth/page-console; list it under plugins: with these keys (without enabled) as its options',
    );
    expect(await refusal({ account: { enabled: false } })).to.match(/^account: .*@gatehouse-auth\/page-account/);
  });
});
