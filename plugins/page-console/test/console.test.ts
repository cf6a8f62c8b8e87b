/**
 * The admin console over HTTP (decisions 27, 39): it signs in through Gatehouse itself with a
 * hosted login for its app; it wants its two stages and an admin; the static admin token does
 * not open it; every POST needs the sign-in's CSRF token; each action is an event. The pages in
 * Chromium are console-browser.test.ts; the account page is @gatehouse-auth/page-account's.
 */
import { expect } from 'chai';
import { parseConfig } from '@gatehouse-auth/core';
import { adminCheck } from '../src/index.js';
import { withPostgresDatabase } from '../../../test/support/postgres.js';
import { startDemoServer } from '../../../test/oauth/demo-server.js';
import {
  ACCOUNT_PLUGIN,
  ADMINS,
  CONSOLE_PLUGIN,
  csrfOf,
  signInDemo,
  signInToSite,
  startConsoleServer,
  userWithTotp,
} from '../../../test/oauth/console-support.js';
import { resetVerdict, SCRIPTED_FDS } from '../../../test/verification/steps.js';
import {
  ADMIN_TOKEN,
  authorize,
  Browser,
  enrolTotp,
  locationOf,
  loginRequestId,
  passwordStage,
  startServer,
  WEB,
  WEB_CB,
  type OAuthServer,
} from '../../../test/oauth/support.js';

const BASE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

describe('@gatehouse-auth/page-console (HTTP)', function () {
  let server: OAuthServer;
  let admin: Awaited<ReturnType<typeof userWithTotp>>;
  let browser: Browser;
  let csrf: string;

  before(async () => {
    server = await startConsoleServer();
    admin = await userWithTotp(server, ADMINS[0]);
    browser = new Browser(server);
    const page = await signInToSite(browser, server, '/console/users', admin);
    expect(page.status).to.equal(200);
    csrf = csrfOf(await page.text());
  });
  after(() => server.close());

  const events = (userId: string, type: string) =>
    server.gatehouse.container.cradle.events.recent({ userId, types: [type], limit: 10 });

  describe('config', () => {
    const base = {
      issuer: 'http://localhost:3000',
      secrets: { encryption_key: Buffer.alloc(32, 1).toString('base64') },
    };
    const refused = async (plugin: { name: string; options: Record<string, unknown> }, apps: unknown[] = []) => {
      const started = startServer({ plugins: [plugin], apps: apps as never });
      const err = await started.then(
        (s) => s.close().then(() => null),
        (e: Error) => e,
      );
      expect(err, 'start-up refused').to.be.instanceOf(Error);
      return err!.message;
    };
    const consoleWith = (options: Record<string, unknown>) => ({ name: CONSOLE_PLUGIN.name, options });

    it('wants two stages at least and an admin for the console', async () => {
      expect(await refused(consoleWith({ admins: ['a'], login_stages: [['PASSWORD']] }))).to.match(
        /options\.login_stages: needs two stages at least/,
      );
      expect(await refused(consoleWith({ admins: [], login_stages: [['PASSWORD'], ['TOTP']] }))).to.match(
        /options\.admins: needs at least one username or user id/,
      );
      expect(await refused(consoleWith({ login_stages: [['PASSWORD'], ['TOTP']] }))).to.match(
        /options\.admins: is required/,
      );
      expect(await refused(consoleWith({ admins: ['a'], login_stages: [['PASSWORD'], ['PASSWORD']] }))).to.match(
        /app\.login_stages\[1\]: can only be met by a method already used/,
      );
      expect(await refused({ name: ACCOUNT_PLUGIN.name, options: {} })).to.match(/options\.login_stages/);
      expect(await refused(CONSOLE_PLUGIN, [{ client_id: 'gatehouse-console', redirect_uris: [WEB_CB] }])).to.match(
        /app "gatehouse-console" is already one of the config's apps/,
      );
    });

    it('registers its app: public, with its stages; none without the plugins', async () => {
      const clients = server.gatehouse.container.cradle.clients;
      expect(clients.get('gatehouse-console')).to.include({ isPublic: true, name: 'Gatehouse console' });
      expect(clients.get('gatehouse-console')!.loginStages).to.deep.equal([['PASSWORD'], ['TOTP']]);
      expect(clients.get('gatehouse-account')!.loginStages).to.deep.equal([['PASSWORD'], ['TOTP', 'BACKUPCODE']]);
      expect(parseConfig(base, {}).apps).to.deep.equal([]);
    });

    it('refuses the old top-level console: and account: keys, saying what to write instead', () => {
      expect(() => parseConfig({ ...base, console: { enabled: true } }, {})).to.throw(
        /console: the admin console is now the plugin @gatehouse-auth\/page-console; list it under plugins:/,
      );
      expect(() => parseConfig({ ...base, account: { enabled: true } }, {})).to.throw(
        /account: the account page is now the plugin @gatehouse-auth\/page-account/,
      );
    });
  });

  it('admins: an id-shaped entry matches that id only; an id-shaped username never matches', () => {
    const id = '6f1c2d4e-0000-4000-8000-000000000001';
    const isAdmin = adminCheck(['alice', id]);
    const user = (over: Partial<{ id: string; username: string }>) => ({
      id: '11111111-2222-4333-8444-555555555555',
      username: 'bob',
      email: null,
      phone: null,
      status: 'active' as const,
      ...over,
    });
    expect(isAdmin(user({ username: 'alice' }))).to.equal(true);
    expect(isAdmin(user({ id: id.toUpperCase() }))).to.equal(true);
    expect(isAdmin(user({ username: id }))).to.equal(false);
    expect(isAdmin(user({}))).to.equal(false);
  });

  describe('sign-in', () => {
    it("an admin who did both stages gets the console, with the login pages' CSP and its own cookie", async () => {
      const res = await browser.get('/console/users');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-security-policy')).to.equal(BASE_CSP);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('x-frame-options')).to.equal('DENY');
      expect(await res.text()).to.contain(admin.username);
      // Its own sign-in cookie, next to the browser session's (no __Host- on a plain-http issuer).
      expect(browser.cookieNames()).to.include.members(['gh_console_session', 'gh_session']);
      expect(browser.cookieNames()).to.not.include('gh_console_login');
      const fresh = new Browser(server);
      const start = await fresh.get('/console/users');
      const cookie = start.headers.getSetCookie().find((c) => c.startsWith('gh_console_login='));
      expect(cookie)
        .to.match(/HttpOnly/)
        .and.to.match(/SameSite=Lax/)
        .and.to.match(/Path=\//);
      // A hosted login for the console's app.
      const flow = await server.gatehouse.container.cradle.flows.get(loginRequestId(locationOf(start, server)));
      expect(flow!.clientId).to.equal('gatehouse-console');
    });

    it('a user who is not an admin signs in and gets 403', async () => {
      const member = await userWithTotp(server);
      const other = new Browser(server);
      const res = await signInToSite(other, server, '/console/users', member);
      expect(res.status).to.equal(403);
      expect(await res.text()).to.contain('may not use this page');
      expect((await other.get('/console/plugins')).status).to.equal(403);
    });

    it('the static admin token does not open the console', async () => {
      const res = await fetch(server.url('/console/users'), {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        redirect: 'manual',
      });
      expect(res.status).to.equal(303);
      expect(new URL(res.headers.get('location')!, server.issuer).pathname).to.equal('/login');
      const post = await fetch(server.url(`/console/users/${admin.id}/disable`), {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `csrf=${csrf}`,
        redirect: 'manual',
      });
      expect(post.status).to.equal(403);
    });

    it('factors proven more than 5 minutes ago are proven again (maxAge 300), fresher ones sign in at once', async () => {
      // A server of its own, whose clock the test moves: the browser's session outlives the window.
      const clock = { offset: 0, now: () => new Date(Date.now() + clock.offset * 1000) };
      const own = await startConsoleServer({ clock });
      try {
        const user = await userWithTotp(own, ADMINS[2]);
        const signedIn = new Browser(own);
        expect((await signInToSite(signedIn, own, '/account', user)).status).to.equal(200);
        // Both factors a moment ago: the console's login completes from the session, no page.
        const fresh = locationOf(await signedIn.get('/console/users'), own);
        expect(fresh.pathname).to.equal('/console/callback');
        const later = new Browser(own);
        expect((await signInToSite(later, own, '/account', user)).status).to.equal(200);
        clock.offset = 6 * 60;
        // Six minutes on (the session itself lives on): the console asks for both factors again.
        const stale = locationOf(await later.get('/console/users'), own);
        expect(stale.pathname).to.equal('/login');
        const page = await (await later.get(stale.pathname + stale.search)).text();
        expect(page).to.contain('data-method="PASSWORD"');
      } finally {
        await own.close();
      }
    });

    it("a password-only session does not satisfy the console's two stages", async () => {
      const second = await userWithTotp(server, ADMINS[1]);
      const other = new Browser(server);
      // Signed in to a password-only app first: the browser has a session with PASSWORD.
      const res = await authorize(
        other,
        server,
        { response_type: 'code', client_id: WEB.id, redirect_uri: WEB_CB, scope: 'openid', state: 'st-1234567890' },
        second,
      );
      expect(locationOf(res, server).origin).to.equal(new URL(WEB_CB).origin);
      // The console's factors must be recent (max_age 300): the session's password is, TOTP is not there.
      const requestId = loginRequestId(locationOf(await other.get('/console/users'), server));
      const page = await other.get(`/login?request_id=${requestId}`);
      const html = await page.text();
      // The session counted for PASSWORD only: what is left to do is the second factor.
      expect(html).to.contain(`data-sub="${second.id}"`);
      expect(html).to.contain('data-method="TOTP"');
      expect(html).to.not.contain('data-method="PASSWORD"');
      expect((await other.get('/console/users')).status).to.equal(303);
    });

    it('the callback refuses a login this browser did not start, and one that is not its result', async () => {
      const res = await new Browser(server).get('/console/callback?request_id=abc');
      expect(res.status).to.equal(400);
      expect(await res.text()).to.contain('was not started in this browser');
      const other = new Browser(server);
      const start = locationOf(await other.get('/console/users'), server);
      const wrong = await other.get('/console/callback?request_id=not-the-login');
      expect(wrong.status).to.equal(400);
      expect(await wrong.text()).to.contain('could not be completed');
      // The sign-in record is spent: the right request id afterwards finds nothing.
      const again = await other.get(`/console/callback?request_id=${start.searchParams.get('request_id')}`);
      expect(again.status).to.equal(400);
      expect(await again.text()).to.contain('was not started in this browser');
    });

    it('a login of this browser that is not complete is refused', async () => {
      const other = new Browser(server);
      const start = locationOf(await other.get('/console/users'), server);
      const res = await other.get(`/console/callback?request_id=${start.searchParams.get('request_id')}`);
      expect(res.status).to.equal(400);
      expect(await res.text()).to.contain('could not be completed');
    });

    it('signing out of the console signs the browser out of Gatehouse: the next sign-in asks for the password again', async () => {
      const third = await userWithTotp(server, ADMINS[2]);
      const other = new Browser(server);
      const page = await signInToSite(other, server, '/console/apps', third);
      expect(page.status).to.equal(200);
      const token = csrfOf(await page.text());
      expect((await other.postForm('/console/sign-out', { csrf: 'wrong' })).status).to.equal(403);
      expect(await server.gatehouse.container.cradle.sessions.ofUser(third.id)).to.have.length(1);
      const out = await other.postForm('/console/sign-out', { csrf: token });
      expect(out.status).to.equal(200);
      expect(await out.text()).to.contain('You are signed out of Gatehouse');
      expect(await server.gatehouse.container.cradle.sessions.ofUser(third.id)).to.deep.equal([]);
      const again = locationOf(await other.get('/console/apps'), server);
      expect(again.pathname).to.equal('/login');
      expect(await (await other.get(again.pathname + again.search)).text()).to.contain('data-method="PASSWORD"');
    });

    it('a signed-in user who is no admin gets 403 with a sign-out that leads out of it', async () => {
      const member = await userWithTotp(server);
      const other = new Browser(server);
      const denied = await signInToSite(other, server, '/console/users', member);
      expect(denied.status).to.equal(403);
      const page = await denied.text();
      expect(page).to.contain('action="/console/sign-out"');
      expect((await other.postForm('/console/sign-out', { csrf: csrfOf(page) })).status).to.equal(200);
      // Out of Gatehouse: the console's sign-in starts over, where an admin can sign in.
      expect(locationOf(await other.get('/console/users'), server).pathname).to.equal('/login');
    });

    it('ending the browser session ends the console sign-in', async () => {
      const fourth = await userWithTotp(server, ADMINS[3]);
      const other = new Browser(server);
      expect((await signInToSite(other, server, '/console/users', fourth)).status).to.equal(200);
      await server.gatehouse.container.cradle.logout.endUserSessions(fourth.id, 'test');
      expect((await other.get('/console/users')).status).to.equal(303);
    });
  });

  describe('user actions', () => {
    it('refuses a POST without the CSRF token, or with another', async () => {
      const target = await server.user('target');
      const bodies: Record<string, string>[] = [{}, { csrf: 'x'.repeat(43) }, { csrf: '' }];
      for (const body of bodies) {
        const res = await browser.postForm(`/console/users/${target.id}/disable`, body);
        expect(res.status).to.equal(403);
        expect(await res.text()).to.contain('The form has expired');
      }
      expect((await server.gatehouse.container.cradle.users.findById(target.id))!.status).to.equal('active');
      expect(await events(target.id, 'console.user_disabled')).to.have.length(0);
    });

    it('searches users by username, email or phone', async () => {
      const target = await server.user('findme');
      const res = await browser.get(`/console/users?q=${encodeURIComponent(target.email.toUpperCase())}`);
      const html = await res.text();
      expect(html).to.contain(`/console/users/${target.id}`);
      expect(html).to.not.contain(`/console/users/${admin.id}"`);
      const none = await (await browser.get('/console/users?q=%25%5F')).text();
      expect(none).to.contain('No users found.');
    });

    it('pages through the list, 50 users a page, keeping the query', async () => {
      const users = server.gatehouse.container.cradle.users;
      for (let i = 0; i < 55; i++) await users.create({ username: `pagetest-${String(i).padStart(2, '0')}` });
      const rows = (html: string) => [...html.matchAll(/<th scope="row"><a href=/g)].length;
      const first = await (await browser.get('/console/users?q=pagetest')).text();
      expect(rows(first)).to.equal(50);
      expect(first).to.contain('href="/console/users?q=pagetest&amp;page=2" rel="next"');
      expect(first).to.not.contain('rel="prev"');
      const second = await (await browser.get('/console/users?q=pagetest&page=2')).text();
      expect(rows(second)).to.equal(5);
      expect(second).to.contain('pagetest-54').and.to.contain('rel="prev"').and.to.not.contain('rel="next"');
      expect(rows(await (await browser.get('/console/users?q=pagetest&page=abc')).text())).to.equal(50);
    });

    it('creates a user, and says why not when the fields are wrong', async () => {
      const res = await browser.postForm('/console/users', {
        csrf,
        username: 'made-in-console',
        email: 'mic@example.test',
      });
      const to = locationOf(res, server);
      expect(to.pathname).to.match(/^\/console\/users\/[0-9a-f-]{36}$/);
      expect(to.searchParams.get('done')).to.equal('created');
      const id = to.pathname.split('/').pop()!;
      const page = await (await browser.get(to.pathname + to.search)).text();
      expect(page).to.contain('The user was created.');
      expect(page).to.contain('made-in-console');
      const [event] = await events(id, 'console.user_created');
      expect(event!.data).to.deep.equal({ actor: admin.id });
      const again = await browser.postForm('/console/users', { csrf, username: 'made-in-console' });
      expect(again.status).to.equal(409);
      expect(await again.text()).to.contain('already exists');
      const bad = await browser.postForm('/console/users', { csrf, username: 'no spaces' });
      expect(bad.status).to.equal(400);
    });

    it('disables a user (sessions end), enables again; not oneself', async () => {
      const target = await server.user('disable');
      const other = new Browser(server);
      await authorize(
        other,
        server,
        { response_type: 'code', client_id: WEB.id, redirect_uri: WEB_CB, scope: 'openid', state: 'st-1234567890' },
        target,
      );
      const cradle = server.gatehouse.container.cradle;
      expect(await cradle.sessions.ofUser(target.id)).to.have.length(1);
      const res = await browser.postForm(`/console/users/${target.id}/disable`, { csrf });
      expect(locationOf(res, server).searchParams.get('done')).to.equal('disabled');
      expect((await cradle.users.findById(target.id))!.status).to.equal('disabled');
      expect(await cradle.sessions.ofUser(target.id)).to.have.length(0);
      expect(await events(target.id, 'console.user_disabled')).to.have.length(1);
      locationOf(await browser.postForm(`/console/users/${target.id}/enable`, { csrf }), server);
      expect((await cradle.users.findById(target.id))!.status).to.equal('active');
      const [enabled] = await events(target.id, 'console.user_enabled');
      expect(enabled!.data).to.deep.equal({ actor: admin.id, was: 'disabled' });
      const self = await browser.postForm(`/console/users/${admin.id}/disable`, { csrf });
      expect(self.status).to.equal(409);
    });

    it('sets what the next sign-in requires; refuses an unknown action (400); no invitation without the plugin', async () => {
      const target = await server.user('required');
      const cradle = server.gatehouse.container.cradle;
      const path = `/console/users/${target.id}`;
      const page = await (await browser.get(path)).text();
      expect(page).to.contain('Required at the next sign-in');
      expect(page).not.to.contain('Send an invitation');
      const set = await browser.postForm(`${path}/required-actions`, { csrf, actions: 'change_password' });
      expect(locationOf(set, server).searchParams.get('done')).to.equal('required_set');
      expect(await cradle.requiredActions.of(target.id)).to.deep.equal(['change_password']);
      expect(await (await browser.get(path)).text()).to.match(/value="change_password"\s+checked/);
      const bad = await browser.postForm(`${path}/required-actions`, { csrf, actions: 'reboot' });
      expect(bad.status).to.equal(400);
      expect(await cradle.requiredActions.of(target.id)).to.deep.equal(['change_password']);
      locationOf(await browser.postForm(`${path}/required-actions`, { csrf }), server);
      expect(await cradle.requiredActions.of(target.id)).to.deep.equal([]);
      const [event] = await events(target.id, 'console.required_actions_set');
      expect(event!.data).to.deep.equal({ actor: admin.id, actions: '' });
      const invite = await browser.postForm(`${path}/invite`, { csrf });
      expect(invite.status).to.equal(409);
      const forged = await browser.postForm(`${path}/required-actions`, { actions: 'second_factor' });
      expect(forged.status).to.equal(403);
      expect(await cradle.requiredActions.of(target.id)).to.deep.equal([]);
    });

    it('unlocks and resets a factor; shows methods, sessions and events', async () => {
      const target = await server.user('factors');
      await enrolTotp(server, target);
      const cradle = server.gatehouse.container.cradle;
      const path = `/console/users/${target.id}`;
      const page = await (await browser.get(path)).text();
      expect(page).to.contain('id="gh-m-TOTP"');
      expect(page).to.contain('enrollment.verification');
      locationOf(await browser.postForm(`${path}/factors/TOTP/unlock`, { csrf }), server);
      const [unlocked] = await cradle.events.recent({ userId: target.id, types: ['factor.unlocked'], limit: 1 });
      expect(unlocked!.method).to.equal('TOTP');
      expect(await events(target.id, 'console.factor_unlocked')).to.have.length(1);
      locationOf(await browser.postForm(`${path}/factors/TOTP/reset`, { csrf }), server);
      expect(await cradle.services.credentials(target.id, 'TOTP').list()).to.have.length(0);
      const [reset] = await events(target.id, 'console.factor_reset');
      expect(reset!.data).to.deep.equal({ actor: admin.id, method: 'TOTP', removed: 1 });
      const unknown = await browser.postForm(`${path}/factors/NOPE/reset`, { csrf });
      expect(unknown.status).to.equal(404);
      expect(await unknown.text()).to.contain('There is no such sign-in method.');
      const device = await browser.postForm(`${path}/devices/no-such-device/remove`, { csrf });
      expect(device.status).to.equal(404);
      expect(await device.text()).to.contain('There is no such device.');
      expect((await browser.get('/console/users/no-such-user')).status).to.equal(404);
    });

    it('ends one session, then all', async () => {
      const target = await server.user('sessions');
      const sign = async () => {
        const b = new Browser(server);
        await authorize(
          b,
          server,
          { response_type: 'code', client_id: WEB.id, redirect_uri: WEB_CB, scope: 'openid', state: 'st-1234567890' },
          target,
        );
      };
      await sign();
      await sign();
      await sign();
      const cradle = server.gatehouse.container.cradle;
      const [first] = await cradle.sessions.ofUser(target.id);
      const path = `/console/users/${target.id}/sessions/end`;
      locationOf(await browser.postForm(path, { csrf, sid: first!.sid }), server);
      expect(await cradle.sessions.ofUser(target.id)).to.have.length(2);
      expect((await browser.postForm(path, { csrf, sid: first!.sid })).status).to.equal(404);
      expect(locationOf(await browser.postForm(path, { csrf }), server).searchParams.get('done')).to.equal(
        'sessions_ended',
      );
      expect(await cradle.sessions.ofUser(target.id)).to.have.length(0);
      expect(await events(target.id, 'console.sessions_ended')).to.have.length(1);
    });

    it("speaks the browser's language (German)", async () => {
      const res = await browser.get('/console/users', { 'Accept-Language': 'de-DE,de;q=0.9' });
      const html = await res.text();
      expect(html).to.contain('<html lang="de">').and.to.contain('Benutzer suchen').and.to.contain('Abmelden');
    });

    it('lists apps, plugins and health', async () => {
      const apps = await (await browser.get('/console/apps')).text();
      expect(apps).to.contain('<code>gatehouse-console</code>').and.to.contain('<code>web</code>');
      const plugins = await (await browser.get('/console/plugins')).text();
      expect(plugins).to.contain('@gatehouse-auth/method-totp').and.to.contain('Database');
      expect(plugins).to.match(/badge ok">OK/);
    });
  });

  describe('on PostgreSQL', function () {
    const db = withPostgresDatabase();
    let pg: OAuthServer;
    before(async function () {
      this.timeout(20_000);
      pg = await startConsoleServer({ databaseUrl: db.url });
    });
    after(() => pg?.close());

    it('signs in, searches (LIKE wildcards taken literally), disables and enables', async () => {
      const pgAdmin = await userWithTotp(pg, ADMINS[0]);
      const b = new Browser(pg);
      const token = csrfOf(await (await signInToSite(b, pg, '/console/users', pgAdmin)).text());
      const target = await pg.user('pg_target');
      const found = await (await b.get('/console/users?q=PG_TARGET')).text();
      expect(found).to.contain(`/console/users/${target.id}`);
      expect(await (await b.get('/console/users?q=pg%25target')).text()).to.contain('No users found.');
      locationOf(await b.postForm(`/console/users/${target.id}/disable`, { csrf: token }), pg);
      expect((await pg.gatehouse.container.cradle.users.findById(target.id))!.status).to.equal('disabled');
      locationOf(await b.postForm(`/console/users/${target.id}/enable`, { csrf: token }), pg);
      expect((await pg.gatehouse.container.cradle.users.findById(target.id))!.status).to.equal('active');
    });
  });

  it('the demo config: alice, its admin, signs in with her password and a backup code', async function () {
    this.timeout(20_000);
    const demo = await startDemoServer();
    try {
      const b = new Browser(demo);
      const users = locationOf(await signInDemo(b, demo, '/console'), demo);
      const page = await b.get(users.pathname);
      expect(page.status).to.equal(200);
      expect(await page.text()).to.contain('Signed in as <strong>alice</strong>');
    } finally {
      await demo.close();
    }
  });
});

describe('@gatehouse-auth/page-console with @gatehouse-auth/invitations', function () {
  let server: OAuthServer;
  let browser: Browser;
  let csrf: string;

  before(async () => {
    server = await startServer({
      plugins: [
        CONSOLE_PLUGIN,
        { name: '@gatehouse-auth/channel-outbox' },
        { name: '@gatehouse-auth/invitations', options: { email_channel: 'outbox' } },
      ],
    });
    const admin = await userWithTotp(server, ADMINS[0]);
    browser = new Browser(server);
    const page = await signInToSite(browser, server, '/console/users', admin);
    csrf = csrfOf(await page.text());
  });
  after(() => server.close());

  it('sends an invitation from the user page; a user with a password already gets a 409 page', async () => {
    const cradle = server.gatehouse.container.cradle;
    const invitee = await cradle.users.create({ username: 'invitee', email: 'invitee@example.test' });
    const path = `/console/users/${invitee.id}`;
    expect(await (await browser.get(path)).text()).to.contain('Send an invitation');
    const sent = await browser.postForm(`${path}/invite`, { csrf });
    expect(locationOf(sent, server).searchParams.get('done')).to.equal('invited');
    const [created] = await cradle.events.recent({ userId: invitee.id, types: ['invitation.created'], limit: 1 });
    expect(created!.data).to.include({ via: 'console' });
    expect((await browser.postForm(`${path}/invite`, {})).status).to.equal(403);

    const member = await server.user('member');
    const refused = await browser.postForm(`/console/users/${member.id}/invite`, { csrf });
    expect(refused.status).to.equal(409);
    expect(await refused.text()).to.contain('This user cannot be invited');
    // No email address: no button, and the action is refused.
    const bare = await cradle.users.create({ username: 'no-address' });
    expect(await (await browser.get(`/console/users/${bare.id}`)).text()).not.to.contain('Send an invitation');
    expect((await browser.postForm(`/console/users/${bare.id}/invite`, { csrf })).status).to.equal(409);
  });
});

describe('@gatehouse-auth/page-console: a blocked step folds its FDS verdicts (issue 29)', function () {
  this.timeout(20_000);
  let server: OAuthServer;
  let browser: Browser;

  before(async () => {
    server = await startConsoleServer({ plugins: [{ path: SCRIPTED_FDS }] });
    const admin = await userWithTotp(server, ADMINS[0]);
    browser = new Browser(server);
    expect((await signInToSite(browser, server, '/console/users', admin)).status).to.equal(200);
  });
  after(async () => {
    await resetVerdict();
    await server.close();
  });

  it('a second stage the rules refuse: its verdicts under verification.blocked, no verdict a row of its own', async () => {
    const target = await userWithTotp(server);
    const person = new Browser(server);
    // The console's own sign-in: PASSWORD, then TOTP.
    const requestId = loginRequestId(locationOf(await person.get('/console/users'), server));
    expect((await passwordStage(person, server, requestId, target)).pathname).to.equal('/login');
    const verdict = await resetVerdict();
    verdict.next = { action: 'deny', reason: 'scripted_block' };
    const res = await fetch(server.url('/verification-srv/authentication/TOTP/initiation'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: target.id }),
    });
    expect(res.status).to.equal(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('FDS_BLOCKED');
    verdict.next = { action: 'allow' };

    const cradle = server.gatehouse.container.cradle;
    const [blocked] = await cradle.events.recent({ userId: target.id, types: ['verification.blocked'], limit: 5 });
    expect(blocked).to.deep.include({
      method: 'TOTP',
      clientId: 'gatehouse-console',
      outcome: 'deny',
      reason: 'fds:scripted_block',
    });
    expect(blocked!.data).to.include({ phase: 'initiation' });
    const verdicts = await cradle.events.recent({ userId: target.id, types: ['fds.verdict'], limit: 50 });
    const mine = verdicts.filter((v) => v.data.step === blocked!.data.step);
    expect(mine.map((v) => [v.data.rule, v.outcome, v.reason])).to.deep.equal([['scripted', 'deny', 'scripted_block']]);

    const html = await (await browser.get(`/console/users/${target.id}`)).text();
    const rows = html.split('<tr>').slice(2);
    const blockedRow = rows.find((r) => r.includes('<code>verification.blocked</code>'));
    expect(blockedRow, 'a row for the blocked step').to.be.a('string');
    expect(blockedRow)
      .to.contain('<details class="verdicts">')
      .and.to.contain('<code>scripted</code> deny: scripted_block');
    // Every verdict (the first stage's too) is folded: no row is a lone verdict.
    const verdictRows = rows.filter((r) => r.includes('<code>fds.verdict</code>'));
    for (const row of verdictRows) expect(row).to.contain('<details class="verdicts">');
    const folded = rows.join('').match(/<li>/g) ?? [];
    expect(folded.length, 'every verdict is listed under a row').to.equal(
      (await cradle.events.recent({ userId: target.id, limit: 100 })).filter((e) => e.type === 'fds.verdict').length,
    );
  });
});
