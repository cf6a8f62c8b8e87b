/**
 * Issue 27, recovery: "Forgot password?" on the hosted pages. One answer for every identifier, a
 * single-use code that expires and allows a few wrong guesses, CSRF on every form, the PASSWORD
 * method's policy, a second factor proven when the user has one, every session ended, a notice.
 */
import { expect } from 'chai';
import {
  ADMIN_TOKEN,
  authorize,
  authorizePath,
  Browser,
  completeStage,
  enrolTotp,
  locationOf,
  loginRequestId,
  PASSWORD,
  pkcePair,
  sleep,
  startServer,
  totpCode,
  WEB,
  WEB_CB,
  type OAuthServer,
  type TestUser,
} from '../../../test/oauth/support.js';
import { outboxMessage } from '../../../test/oauth/demo-server.js';
import {
  noticeCode,
  postCode,
  RECOVERY_PLUGINS,
  resetCode,
  startRecoveryServer,
  startReset,
  submit,
} from './support.js';

const NEW_PASSWORD = 'a brand new passphrase 2026';
const AUTHORIZE = {
  response_type: 'code',
  client_id: WEB.id,
  redirect_uri: WEB_CB,
  scope: 'openid',
  state: 'st-1234567890',
};

/** Minutes the server's clock is moved ahead by (the expiry test). */
let shift = 0;

describe('@gatehouse-auth/account-recovery: the hosted reset pages', function () {
  this.timeout(60_000);
  let server: OAuthServer;

  before(async () => {
    server = await startRecoveryServer({ clock: { now: () => new Date(Date.now() + shift * 60_000) } });
  });
  after(() => server?.close());
  afterEach(() => {
    shift = 0;
  });

  /** Signs in to the web app with `password` (the PASSWORD stage only): whether it worked. */
  async function signsIn(user: TestUser, password: string): Promise<boolean> {
    const browser = new Browser(server);
    const requestId = loginRequestId(locationOf(await browser.get(authorizePath(AUTHORIZE)), server));
    const res = await fetch(server.url('/verification-srv/authentication/PASSWORD/initiation'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ request_id: requestId, usage_type: 'INITIAL_AUTHENTICATION', identifier: user.username }),
    });
    const exchange = ((await res.json()) as { data: { exchange_id: { exchange_id: string } } }).data.exchange_id;
    const verified = await fetch(server.url('/verification-srv/authentication/PASSWORD/verification'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ exchange_id: exchange.exchange_id, password }),
    });
    return verified.status === 200;
  }

  it('the hosted login page links "Forgot password?" beside the password, back to this login', async () => {
    const browser = new Browser(server);
    const requestId = loginRequestId(locationOf(await browser.get(authorizePath(AUTHORIZE)), server));
    const page = await (await browser.get(`/login?request_id=${requestId}`)).text();
    const link = /<a href="([^"]+)" id="gh-PASSWORD-link">Forgot password\?<\/a>/.exec(page);
    expect(link?.[1]).to.equal(server.url(`/recovery?request_id=${requestId}`));
    const german = await (await browser.get(`/login?request_id=${requestId}`, { 'Accept-Language': 'de' })).text();
    expect(german).to.contain('Passwort vergessen?');
  });

  it('speaks German: the pages and the code email, for a German browser', async () => {
    const user = await server.user('deutsch');
    const browser = new Browser(server);
    const de = { 'Accept-Language': 'de-DE,de;q=0.9' };
    const form = await (await browser.get('/recovery', de)).text();
    expect(form).to.contain('Passwort zurücksetzen').and.contain('Benutzername, E-Mail-Adresse oder Telefonnummer');
    const csrf = /name="csrf" value="([^"]+)"/.exec(form)![1]!;
    const started = await browser.request('/recovery', {
      method: 'POST',
      headers: { ...de, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, identifier: user.username }).toString(),
    });
    expect(locationOf(started, server).pathname).to.equal('/recovery/code');
    expect(await (await browser.get('/recovery/code', de)).text()).to.contain(
      'Wenn es zu Ihrer Eingabe ein Konto gibt',
    );
    const mail = await outboxMessage(server, user.email, (t) => t.includes('Zurücksetzen Ihres Passworts'));
    expect(mail.text).to.match(/lautet \d{6}\. Er gilt 15 Minuten/);
  });

  it("keeps the login's ui_locales through the reset's pages (German for an app that asked for it)", async () => {
    const browser = new Browser(server);
    const requestId = loginRequestId(
      locationOf(await browser.get(authorizePath({ ...AUTHORIZE, ui_locales: 'de' })), server),
    );
    const login = await (await browser.get(`/login?request_id=${requestId}`)).text();
    expect(login).to.contain('Passwort vergessen?');
    const form = await (await browser.get(`/recovery?request_id=${requestId}`)).text();
    expect(form).to.contain('Passwort zurücksetzen');
    await startReset(server, browser, 'nobody-de@example.test');
    expect(await (await browser.get('/recovery/code')).text()).to.contain('Wenn es zu Ihrer Eingabe ein Konto gibt');
    // Without the login's locale: the browser's languages (English here).
    expect(await (await new Browser(server).get('/recovery')).text()).to.contain('Reset your password');
  });

  it('resets the password of a password-only user: sessions end, a notice goes out, nobody is signed in', async () => {
    const user = await server.user('pwonly');
    // Signed in elsewhere before the reset.
    await authorize(new Browser(server), server, AUTHORIZE, user);
    expect(await server.gatehouse.container.cradle.sessions.ofUser(user.id)).to.have.length(1);

    const browser = new Browser(server);
    await startReset(server, browser, user.email);
    const code = await resetCode(server, user.email);
    const proven = await postCode(browser, code);
    expect(locationOf(proven, server).pathname).to.equal('/recovery/password');
    const done = await submit(browser, '/recovery/password', '/recovery/password', {
      password: NEW_PASSWORD,
      confirm: NEW_PASSWORD,
    });
    expect(done.status).to.equal(200);
    expect(await done.text()).to.contain('Your password was changed');
    // Not signed in by the reset, and signed out everywhere.
    expect(browser.cookieNames().some((n) => n.includes('session'))).to.equal(false);
    expect(await server.gatehouse.container.cradle.sessions.ofUser(user.id)).to.have.length(0);
    const notice = await outboxMessage(server, user.email, (t) => t.includes('was reset'));
    expect(notice.text).to.contain('you were signed out everywhere');
    const types = (await server.gatehouse.container.cradle.events.recent({ userId: user.id, limit: 30 })).map(
      (e) => e.type,
    );
    expect(types).to.include('recovery.password_reset').and.include('recovery.sessions_ended');
    expect(await signsIn(user, PASSWORD)).to.equal(false);
    expect(await signsIn(user, NEW_PASSWORD)).to.equal(true);
  });

  it('answers an unknown identifier exactly as a known one, and sends nothing', async () => {
    const user = await server.user('known');
    const known = new Browser(server);
    const unknown = new Browser(server);
    await startReset(server, known, user.username);
    await startReset(server, unknown, 'nobody-at-all@example.test');
    const strip = (page: string) => page.replace(/value="[^"]+"/g, 'value=""');
    const a = await (await known.get('/recovery/code')).text();
    const b = await (await unknown.get('/recovery/code')).text();
    expect(strip(b)).to.equal(strip(a));
    expect(unknown.cookieNames()).to.deep.equal(known.cookieNames());
    // Any code for the unknown one fails as a wrong code does.
    const res = await postCode(unknown, '123456');
    expect(res.status).to.equal(400);
    expect(noticeCode(await res.text())).to.equal('CODE_INVALID');
    await sleep(100);
    const none = await fetch(server.url(`/dev/outbox/latest?to=${encodeURIComponent('nobody-at-all@example.test')}`));
    expect(none.status).to.equal(404);
  });

  it('sends at most 3 codes per identifier an hour; further starts answer the same and send nothing', async () => {
    const user = await server.user('bombed');
    for (let i = 0; i < 4; i++) await startReset(server, new Browser(server), user.username);
    const started = await server.gatehouse.container.cradle.events.recent({
      types: ['recovery.started'],
      userId: user.id,
      limit: 10,
    });
    const sent = started.map((e) => (e.data as { sent: boolean }).sent).reverse();
    expect(sent).to.deep.equal([true, true, true, false]);
  });

  it('refuses a wrong code (400 CODE_INVALID), then too many (429 TOO_MANY_ATTEMPTS): the reset is gone', async () => {
    const user = await server.user('guess');
    const browser = new Browser(server);
    await startReset(server, browser, user.username);
    const code = await resetCode(server, user.email);
    const wrong = code === '000000' ? '000001' : '000000';
    for (let i = 0; i < 5; i++) {
      const res = await postCode(browser, wrong);
      expect(res.status).to.equal(400);
      expect(noticeCode(await res.text())).to.equal('CODE_INVALID');
    }
    const blocked = await postCode(browser, code);
    expect(blocked.status).to.equal(429);
    expect(noticeCode(await blocked.text())).to.equal('TOO_MANY_ATTEMPTS');
  });

  it('refuses an expired code (410 RECOVERY_EXPIRED)', async () => {
    const user = await server.user('late');
    const browser = new Browser(server);
    await startReset(server, browser, user.username);
    const code = await resetCode(server, user.email);
    shift = 16;
    const res = await postCode(browser, code);
    expect(res.status).to.equal(410);
    expect(noticeCode(await res.text())).to.equal('RECOVERY_EXPIRED');
  });

  it('spends a code once (a replay gets 410 RECOVERY_EXPIRED), and the exchange once', async () => {
    const user = await server.user('twice');
    const browser = new Browser(server);
    await startReset(server, browser, user.username);
    const code = await resetCode(server, user.email);
    const copy = new Browser(server);
    for (const [k, v] of browser.cookies) copy.cookies.set(k, v);
    expect((await postCode(browser, code)).status).to.equal(303);
    const again = await postCode(copy, code);
    expect(again.status).to.equal(410);
    expect(noticeCode(await again.text())).to.equal('RECOVERY_EXPIRED');
    // The exchange: one new password, then nothing.
    const exchangeCopy = new Browser(server);
    for (const [k, v] of browser.cookies) exchangeCopy.cookies.set(k, v);
    const fields = { password: NEW_PASSWORD, confirm: NEW_PASSWORD };
    expect((await submit(browser, '/recovery/password', '/recovery/password', fields)).status).to.equal(200);
    const replay = await submit(exchangeCopy, '/recovery', '/recovery/password', fields);
    expect(replay.status).to.equal(410);
    expect(noticeCode(await replay.text())).to.equal('RECOVERY_EXPIRED');
  });

  it('refuses a weak password (400 PASSWORD_TOO_COMMON / PASSWORD_TOO_SHORT) and two that differ; the reset stays usable', async () => {
    const user = await server.user('weak');
    const browser = new Browser(server);
    await startReset(server, browser, user.username);
    await postCode(browser, await resetCode(server, user.email));
    const attempt = (password: string, confirm = password) =>
      submit(browser, '/recovery/password', '/recovery/password', { password, confirm });
    for (const [password, code] of [
      ['short', 'PASSWORD_TOO_SHORT'],
      ['password123', 'PASSWORD_TOO_COMMON'],
    ] as const) {
      const res = await attempt(password);
      expect(res.status).to.equal(400);
      expect(noticeCode(await res.text())).to.equal(code);
    }
    const differ = await attempt(NEW_PASSWORD, `${NEW_PASSWORD}!`);
    expect(differ.status).to.equal(400);
    expect(noticeCode(await differ.text())).to.equal('PASSWORD_MISMATCH');
    expect((await attempt(NEW_PASSWORD)).status).to.equal(200);
    expect(await signsIn(user, NEW_PASSWORD)).to.equal(true);
  });

  it('refuses every form without its CSRF token or from another origin (403 CSRF)', async () => {
    const user = await server.user('csrf');
    const browser = new Browser(server);
    await browser.get('/recovery');
    const noToken = await browser.postForm('/recovery', { identifier: user.username });
    expect(noToken.status).to.equal(403);
    expect(noticeCode(await noToken.text())).to.equal('CSRF');
    await startReset(server, browser, user.username);
    const noCsrfCode = await browser.postForm('/recovery/code', { code: await resetCode(server, user.email) });
    expect(noCsrfCode.status).to.equal(403);
    expect(noticeCode(await noCsrfCode.text())).to.equal('CSRF');
    // From another site: the token is right, the Origin is not.
    const page = await (await browser.get('/recovery/code')).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    const foreign = await browser.request('/recovery/code', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://evil.example' },
      body: new URLSearchParams({ csrf, code: '123456' }).toString(),
    });
    expect(foreign.status).to.equal(403);
    const noCsrfPassword = await browser.postForm('/recovery/password', {
      password: NEW_PASSWORD,
      confirm: NEW_PASSWORD,
    });
    expect(noCsrfPassword.status).to.equal(403);
    expect(noticeCode(await noCsrfPassword.text())).to.equal('CSRF');
  });

  it('a user with TOTP proves it on the hosted page (a login pinned to them) before the new password', async () => {
    const user = await server.user('totp');
    const seed = await enrolTotp(server, user);
    await authorize(new Browser(server), server, AUTHORIZE, user);
    const browser = new Browser(server);
    await startReset(server, browser, user.username);
    const proven = await postCode(browser, await resetCode(server, user.email));
    expect(proven.status).to.equal(200);
    expect(await proven.text()).to.contain('Confirm my second factor');
    // No new password before the second factor.
    const early = await browser.get('/recovery/password');
    expect(early.status).to.equal(403);
    expect(noticeCode(await early.text())).to.equal('SECOND_FACTOR_REQUIRED');
    const login = locationOf(await submit(browser, '/recovery/password', '/recovery/verify', {}), server);
    const requestId = loginRequestId(login);
    // The login is pinned: another user's TOTP (or a password) cannot do it; the page asks for TOTP only.
    const page = await (await browser.get(login.pathname + login.search)).text();
    expect(page).to.contain('data-method="TOTP"').and.not.contain('data-method="PASSWORD"');
    expect(page).to.not.contain('id="gh-identifier"');
    const other = await server.user('other');
    const foreign = await fetch(server.url('/verification-srv/authentication/TOTP/initiation'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: other.id }),
    });
    expect(foreign.status).to.equal(400);
    expect(((await foreign.json()) as { error: { code: string } }).error.code).to.equal('INVALID_FIELD');
    const back = await completeStage(
      browser,
      server,
      requestId,
      'TOTP',
      { sub: user.id },
      { pass_code: await totpCode(seed, 0) },
    );
    expect(back.pathname).to.equal('/recovery/verified');
    const onward = await browser.get(back.pathname + back.search);
    expect(locationOf(onward, server).pathname).to.equal('/recovery/password');
    // The second factor's login signed no one in: only the session from before is left, until the reset.
    expect(await server.gatehouse.container.cradle.sessions.ofUser(user.id)).to.have.length(1);
    const done = await submit(browser, '/recovery/password', '/recovery/password', {
      password: NEW_PASSWORD,
      confirm: NEW_PASSWORD,
    });
    expect(done.status).to.equal(200);
    expect(await signsIn(user, NEW_PASSWORD)).to.equal(true);
  });
});

describe('@gatehouse-auth/account-recovery: a second factor the reset cannot take', function () {
  this.timeout(60_000);
  let server: OAuthServer;

  before(async () => {
    // Only backup codes prove a second factor here: a TOTP-only user cannot prove theirs.
    server = await startServer({
      plugins: [
        RECOVERY_PLUGINS[0]!,
        RECOVERY_PLUGINS[1]!,
        {
          name: '@gatehouse-auth/account-recovery',
          options: { email_channel: 'outbox', second_factors: ['BACKUPCODE'], max_starts_per_address: 3 },
        },
      ],
    });
  });
  after(() => server?.close());

  it('refuses the reset with a clear message (409 SECOND_FACTOR_UNAVAILABLE): the account needs an admin', async () => {
    const user = await server.user('stuck');
    await enrolTotp(server, user);
    const browser = new Browser(server);
    await startReset(server, browser, user.username);
    const res = await postCode(browser, await resetCode(server, user.email));
    expect(res.status).to.equal(409);
    const page = await res.text();
    expect(noticeCode(page)).to.equal('SECOND_FACTOR_UNAVAILABLE');
    expect(page).to.contain('ask your administrator');
    // Nothing left to go on with.
    const password = await browser.get('/recovery/password');
    expect(password.status).to.equal(410);
    const types = (await server.gatehouse.container.cradle.events.recent({ userId: user.id, limit: 30 })).map(
      (e) => e.type,
    );
    expect(types).to.include('recovery.refused').and.not.include('recovery.password_reset');
  });

  it('refuses a fourth reset from one address within 15 minutes (429 TOO_MANY_REQUESTS, Retry-After)', async () => {
    // The test before started one; max_starts_per_address is 3 here.
    await startReset(server, new Browser(server), 'someone-1@example.test');
    await startReset(server, new Browser(server), 'someone-2@example.test');
    const res = await submit(new Browser(server), '/recovery', '/recovery', { identifier: 'someone-3@example.test' });
    expect(res.status).to.equal(429);
    expect(Number(res.headers.get('retry-after'))).to.be.within(1, 900);
    expect(noticeCode(await res.text())).to.equal('TOO_MANY_REQUESTS');
  });
});

describe('@gatehouse-auth/account-recovery: a lost second factor, by backup code', function () {
  this.timeout(60_000);
  let server: OAuthServer;

  before(async () => {
    server = await startServer({
      plugins: [
        RECOVERY_PLUGINS[0]!,
        RECOVERY_PLUGINS[1]!,
        { name: '@gatehouse-auth/account-recovery', options: { email_channel: 'outbox', lost_factor: true } },
      ],
      apps: [
        {
          client_id: 'backup-ok',
          redirect_uris: ['https://backup-ok.example.test/cb'],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code'],
          scopes: ['openid'],
          login_stages: [['PASSWORD'], ['TOTP', 'BACKUPCODE']],
        },
      ],
    });
  });
  after(() => server?.close());

  /** A user with a password, TOTP and backup codes (the codes returned). */
  async function userWithBackupCodes(): Promise<{ user: TestUser; codes: string[] }> {
    const user = await server.user('lost');
    await enrolTotp(server, user);
    const res = await fetch(server.url('/verification-actions-srv/setup/BACKUPCODE/initiation'), {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sub: user.id }),
    });
    expect(res.status).to.equal(200);
    return { user, codes: ((await res.json()) as { data: { codes: string[] } }).data.codes };
  }

  /** The lost-factor login (password, then a backup code): the choice page. */
  async function proveWithBackupCode(browser: Browser, user: TestUser, code: string): Promise<Response> {
    const login = locationOf(await submit(browser, '/recovery/factor', '/recovery/factor', {}), server);
    const requestId = loginRequestId(login);
    const second = await completeStage(
      browser,
      server,
      requestId,
      'PASSWORD',
      { identifier: user.username },
      { password: PASSWORD },
    );
    expect(second.pathname).to.equal('/login');
    const back = await completeStage(browser, server, requestId, 'BACKUPCODE', { sub: user.id }, { pass_code: code });
    expect(back.pathname).to.equal('/recovery/factor/verified');
    return browser.get(back.pathname + back.search);
  }

  it('the hosted login page links "Lost it? Use a backup code" beside TOTP at a stage that allows backup codes', async () => {
    const { user } = await userWithBackupCodes();
    const browser = new Browser(server);
    const { challenge } = pkcePair();
    const start = await browser.get(
      authorizePath({
        response_type: 'code',
        client_id: 'backup-ok',
        redirect_uri: 'https://backup-ok.example.test/cb',
        scope: 'openid',
        state: 'st-1234567890',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    );
    const requestId = loginRequestId(locationOf(start, server));
    const first = await (await browser.get(`/login?request_id=${requestId}`)).text();
    expect(first).to.contain('id="gh-PASSWORD-link"').and.not.contain('Lost it?');
    const second = await completeStage(
      browser,
      server,
      requestId,
      'PASSWORD',
      { identifier: user.username },
      { password: PASSWORD },
    );
    expect(second.pathname).to.equal('/login');
    const page = await (await browser.get(`/login?request_id=${requestId}`)).text();
    const link = /<a href="([^"]+)" id="gh-TOTP-link">Lost it\? Use a backup code<\/a>/.exec(page);
    expect(link?.[1]).to.equal(server.url('/recovery/factor'));
    expect(page).to.not.contain('id="gh-PASSWORD-link"');
  });

  it('password + a backup code removes the lost TOTP: sessions end, a notice of its own, an event; once', async () => {
    const { user, codes } = await userWithBackupCodes();
    const browser = new Browser(server);
    const choice = await proveWithBackupCode(browser, user, codes[0]!);
    expect(choice.status).to.equal(200);
    const page = await choice.text();
    expect(page).to.contain('name="method" value="TOTP"').and.not.contain('value="BACKUPCODE"');
    const copy = new Browser(server);
    for (const [k, v] of browser.cookies) copy.cookies.set(k, v);
    const removed = await submit(browser, '/recovery/factor', '/recovery/factor/remove', { method: 'TOTP' });
    expect(removed.status).to.equal(200);
    expect(await removed.text()).to.contain('was removed from your account');
    const listed = await fetch(server.url(`/verification-actions-srv/setup/users/${user.id}/methods`), {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const methods = ((await listed.json()) as { data: { method: string; enrolled: boolean }[] }).data;
    expect(methods.find((m) => m.method === 'TOTP')?.enrolled).to.equal(false);
    expect(await server.gatehouse.container.cradle.sessions.ofUser(user.id)).to.have.length(0);
    const notice = await outboxMessage(server, user.email, (t) => t.includes('was removed from your account'));
    expect(notice.text).to.contain('Set up a new second factor');
    const types = (await server.gatehouse.container.cradle.events.recent({ userId: user.id, limit: 30 })).map(
      (e) => e.type,
    );
    expect(types).to.include('recovery.factor_removed');
    // The choice is spent.
    const again = await submit(copy, '/recovery/factor', '/recovery/factor/remove', { method: 'BACKUPCODE' });
    expect(again.status).to.equal(410);
    expect(noticeCode(await again.text())).to.equal('RECOVERY_EXPIRED');
  });

  it('refuses a method the user does not have (400 NOT_ENROLLED), the backup codes themselves, and a form without CSRF (403)', async () => {
    const { user, codes } = await userWithBackupCodes();
    const browser = new Browser(server);
    expect((await proveWithBackupCode(browser, user, codes[1]!)).status).to.equal(200);
    for (const method of ['FIDO2', 'BACKUPCODE', 'PASSWORD']) {
      const res = await submit(browser, '/recovery/factor', '/recovery/factor/remove', { method });
      expect(res.status).to.equal(400);
      expect(noticeCode(await res.text())).to.equal('NOT_ENROLLED');
    }
    const noCsrf = await browser.postForm('/recovery/factor/remove', { method: 'TOTP' });
    expect(noCsrf.status).to.equal(403);
    expect(noticeCode(await noCsrf.text())).to.equal('CSRF');
    const start = await new Browser(server).postForm('/recovery/factor', {});
    expect(start.status).to.equal(403);
  });

  it('without a sign-in by backup code there is nothing to remove (410 RECOVERY_EXPIRED)', async () => {
    const browser = new Browser(server);
    const res = await submit(browser, '/recovery/factor', '/recovery/factor/remove', { method: 'TOTP' });
    expect(res.status).to.equal(410);
    expect(noticeCode(await res.text())).to.equal('RECOVERY_EXPIRED');
  });
});

describe('pinned_logins (plugin API 1.3): only a plugin’s own app', function () {
  it('a config app with pinned_logins stops start-up, naming the key', async () => {
    let error: unknown = null;
    try {
      const server = await startServer({
        apps: [{ client_id: 'pinned-by-config', login_stages: [['TOTP']], pinned_logins: true }],
      });
      await server.close();
    } catch (err) {
      error = err;
    }
    expect((error as Error | null)?.message).to.match(/apps\[\d+\]\.pinned_logins: only a plugin's own app/);
  });
});
