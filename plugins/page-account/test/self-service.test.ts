/**
 * The account page's self-service over HTTP (issue 27): adding TOTP, a phone and a device under
 * the binding rule (a recent sign-in; a password alone binds neither a passkey nor a factor
 * beside a second one), changing the password (policy, every session ended, a notice), and
 * deleting the account (disabled at once, every row gone after the grace period, an event
 * without personal data). Every refusal with its exact status. The page in Chromium is
 * self-service-browser.test.ts.
 */
import { expect } from 'chai';
import { generate } from 'otplib';
import { csrfOf, signInToSite, userWithTotp } from '../../../test/oauth/console-support.js';
import {
  Browser,
  completeStage,
  locationOf,
  loginRequestId,
  PASSWORD,
  sleep,
  startServer,
  type OAuthServer,
  type TestUser,
} from '../../../test/oauth/support.js';
import type { Clock, UserAccounts } from '@gatehouse-auth/core';
import { rowsOf } from './rows.js';
import { withPostgresDatabase } from '../../../test/support/postgres.js';

/** A clock the tests move forward. */
class TestClock implements Clock {
  offset = 0;
  now(): Date {
    return new Date(Date.now() + this.offset);
  }
}

const PHONE = '+4915112345678';

function accountServer(
  clock: Clock,
  stages: string[][],
  extra: Record<string, unknown> = {},
  databaseUrl?: string,
): Promise<OAuthServer> {
  return startServer({
    clock,
    ...(databaseUrl ? { databaseUrl } : {}),
    plugins: [
      { name: '@gatehouse-auth/method-backupcode', options: { memory_cost: 1024, time_cost: 2 } },
      { name: '@gatehouse-auth/channel-outbox', options: { expose_route: true } },
      { name: '@gatehouse-auth/notices-security', options: { email_channel: 'outbox' } },
      { name: '@gatehouse-auth/method-sms', options: { channel: 'outbox' } },
      { name: '@gatehouse-auth/devices-api' },
      { name: '@gatehouse-auth/method-push', options: {} },
      { name: '@gatehouse-auth/method-fido2', options: { rp_id: 'localhost', origins: ['http://localhost:1'] } },
      {
        name: '@gatehouse-auth/page-account',
        options: { login_stages: stages, deletion_grace: 2, deletion_sweep: 1, ...extra },
      },
    ],
  });
}

/** Signs `user` in to the account page with their password only (a one-stage page). */
async function signInWithPassword(b: Browser, server: OAuthServer, user: TestUser): Promise<string> {
  const requestId = loginRequestId(locationOf(await b.get('/account'), server));
  const callback = await completeStage(
    b,
    server,
    requestId,
    'PASSWORD',
    { identifier: user.username },
    { password: PASSWORD },
  );
  expect(callback.pathname).to.equal('/account/callback');
  const back = locationOf(await b.get(callback.pathname + callback.search), server);
  const page = await b.get(back.pathname + back.search);
  expect(page.status).to.equal(200);
  return page.text();
}

/** The newest message to `to` in the outbox (sent in the background: waited for a little). */
async function outbox(
  server: OAuthServer,
  to: string,
  after?: string,
): Promise<{ subject: string | null; text: string; sent_at: string } | null> {
  for (let i = 0; i < 20; i++) {
    const res = await fetch(server.url(`/dev/outbox/latest?to=${encodeURIComponent(to)}`));
    if (res.status === 200) {
      const { data } = (await res.json()) as { data: { subject: string | null; text: string; sent_at: string } };
      if (after === undefined || data.sent_at > after) return data;
    }
    await sleep(100);
  }
  return null;
}

/** The code of the newest message to `to` (sent after `after`, an ISO time, when given). */
async function latestCode(server: OAuthServer, to: string, after?: string): Promise<string> {
  const message = await outbox(server, to, after);
  expect(message, `a message to ${to}`).to.not.equal(null);
  return /(\d{6,8})/.exec(message!.text)![1]!;
}

describe('@gatehouse-auth/page-account self-service (HTTP)', function () {
  this.timeout(30_000);

  describe('a password-only sign-in (a one-stage page)', () => {
    const clock = new TestClock();
    let server: OAuthServer;
    before(async () => {
      server = await accountServer(clock, [['PASSWORD']]);
    });
    after(() => server.close());

    it('adds TOTP: QR code and key, a wrong code 401, the right one adds it; then nothing more on a password alone', async () => {
      const user = await server.user('totp');
      const b = new Browser(server);
      const page = await signInWithPassword(b, server, user);
      expect(page).to.contain('href="/account/add/TOTP"').and.to.contain('href="/account/add/SMS"');
      const csrf = csrfOf(page);
      expect((await b.get('/account/add/TOTP')).status).to.equal(200);
      expect((await b.postForm('/account/add/TOTP/start', {})).status).to.equal(403);
      const started = await b.postForm('/account/add/TOTP/start', { csrf });
      expect(started.status).to.equal(200);
      const html = await started.text();
      expect(html).to.contain('<img id="gh-qr" src="data:image/png;base64,');
      const secret = /<code id="gh-secret">([A-Z2-7]+)<\/code>/.exec(html)![1]!;
      expect((await b.postForm('/account/add/TOTP/verify', { csrf })).status).to.equal(400);
      const wrong = await b.postForm('/account/add/TOTP/verify', { csrf, pass_code: '000000' });
      expect(wrong.status).to.equal(401);
      expect(await wrong.text()).to.contain('It could not be set up.');
      const code = await generate({ secret, epoch: Math.floor(clock.now().getTime() / 1000) });
      const done = await b.postForm('/account/add/TOTP/verify', { csrf, pass_code: code });
      expect(locationOf(done, server).search).to.equal('?done=method_added');
      const cradle = server.gatehouse.container.cradle;
      expect(await cradle.services.credentials(user.id, 'TOTP').list()).to.have.length(1);
      const [event] = await cradle.events.recent({ userId: user.id, types: ['account.method_added'], limit: 5 });
      expect(event!.method).to.equal('TOTP');
      // Now the user has a second factor: this password-only sign-in adds nothing beside it.
      const refused = await b.postForm('/account/add/SMS/start', { csrf, address: PHONE });
      expect(refused.status).to.equal(403);
      expect(await refused.text()).to.contain('sign in with your second factor');
      expect((await b.get('/account/add/SMS')).status).to.equal(403);
      // …and neither changes the password nor deletes the account.
      expect((await b.get('/account/password')).status).to.equal(403);
      expect((await b.postForm('/account/delete', { csrf })).status).to.equal(403);
    });

    it('never binds a passkey on a password alone (403 page, 403 SETUP_NOT_ALLOWED from the script route)', async () => {
      const user = await server.user('passkey');
      const b = new Browser(server);
      const csrf = csrfOf(await signInWithPassword(b, server, user));
      expect((await b.get('/account/add/FIDO2')).status).to.equal(403);
      const res = await b.postForm('/account/add/FIDO2/setup/initiation', { csrf, name: 'x' });
      expect(res.status).to.equal(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('SETUP_NOT_ALLOWED');
      expect(await server.gatehouse.container.cradle.services.credentials(user.id, 'FIDO2').list()).to.have.length(0);
    });

    it('refuses what it cannot add (404), a bad step (404), an empty address (400)', async () => {
      const user = await server.user('refusals');
      const b = new Browser(server);
      const csrf = csrfOf(await signInWithPassword(b, server, user));
      expect((await b.get('/account/add/PASSWORD')).status).to.equal(404);
      expect((await b.get('/account/add/BACKUPCODE')).status).to.equal(404);
      expect((await b.get('/account/add/NOPE')).status).to.equal(404);
      const step = await b.postForm('/account/add/TOTP/setup/initiation', { csrf });
      expect(step.status).to.equal(404);
      expect(((await step.json()) as { error: { code: string } }).error.code).to.equal('METHOD_NOT_FOUND');
      const bad = await b.postForm('/account/add/FIDO2/setup/scan', { csrf });
      expect(bad.status).to.equal(404);
      expect(((await bad.json()) as { error: { code: string } }).error.code).to.equal('ENROLLMENT_NOT_SUPPORTED');
      expect((await b.postForm('/account/add/SMS/start', { csrf, address: '' })).status).to.equal(400);
      const wrong = await b.postForm('/account/add/SMS/start', { csrf, address: 'not a phone' });
      expect(wrong.status).to.equal(400);
    });

    it('adds a phone proven by a code, and binds a device by QR code', async () => {
      const user = await server.user('phone');
      const b = new Browser(server);
      const csrf = csrfOf(await signInWithPassword(b, server, user));
      const started = await b.postForm('/account/add/SMS/start', { csrf, address: PHONE });
      expect(started.status).to.equal(200);
      expect(await started.text()).to.contain('We sent a code to');
      expect((await b.postForm('/account/add/SMS/verify', { csrf, pass_code: '00000000' })).status).to.equal(401);
      const done = await b.postForm('/account/add/SMS/verify', { csrf, pass_code: await latestCode(server, PHONE) });
      expect(locationOf(done, server).search).to.equal('?done=method_added');
      const [medium] = await server.gatehouse.container.cradle.services.credentials(user.id, 'SMS').list();
      expect(medium!.data).to.deep.equal({ address: PHONE });

      const other = await server.user('device');
      const d = new Browser(server);
      const token = csrfOf(await signInWithPassword(d, server, other));
      const device = await d.postForm('/account/add/PUSH/start', { csrf: token });
      expect(device.status).to.equal(200);
      const html = await device.text();
      expect(html).to.contain('<img id="gh-qr" src="data:image/png;base64,').and.to.contain('Scan the QR code');
    });

    it('asks for the sign-in again when it is older than setup_max_age (303 to the login; 403 for a POST)', async () => {
      const user = await server.user('stale');
      const b = new Browser(server);
      const csrf = csrfOf(await signInWithPassword(b, server, user));
      clock.offset += 301_000;
      try {
        const res = await b.get('/account/add/TOTP');
        expect(res.status).to.equal(303);
        expect(locationOf(res, server).pathname).to.equal('/login');
        const post = await b.postForm('/account/add/TOTP/start', { csrf });
        expect(post.status).to.equal(403);
        expect(await post.text()).to.contain('Sign in again first');
        const json = await b.postForm('/account/add/FIDO2/setup/initiation', { csrf });
        expect(((await json.json()) as { error: { code: string } }).error.code).to.equal('REAUTHENTICATION_REQUIRED');
        // The hosted login again (max_age 0: every factor anew), then the page does it.
        const requestId = loginRequestId(locationOf(res, server));
        const callback = await completeStage(
          b,
          server,
          requestId,
          'PASSWORD',
          { identifier: user.username },
          { password: PASSWORD },
        );
        const back = locationOf(await b.get(callback.pathname + callback.search), server);
        expect(back.pathname).to.equal('/account/add/TOTP');
        expect((await b.get('/account/add/TOTP')).status).to.equal(200);
      } finally {
        clock.offset -= 301_000;
      }
    });

    it('speaks German: the page, its forms and its refusals', async () => {
      const user = await server.user('deutsch');
      const b = new Browser(server);
      await signInWithPassword(b, server, user);
      const page = await (await b.get('/account', { 'Accept-Language': 'de-DE,de;q=0.9' })).text();
      expect(page).to.contain('Anmeldeweg hinzufügen').and.to.contain('Mein Passwort ändern');
      expect(page).to.contain('Mein Konto löschen').and.to.contain('Meine E-Mail-Adresse ändern');
      const add = await (await b.get('/account/add/SMS', { 'Accept-Language': 'de' })).text();
      expect(add).to.contain('Telefonnummer (mit Ländervorwahl');
      const refused = await b.get('/account/add/FIDO2', { 'Accept-Language': 'de' });
      expect(refused.status).to.equal(403);
      expect(await refused.text()).to.contain('nur mit Ihrem Passwort angemeldet');
    });
  });

  describe('two factors: password change and deletion', () => {
    const clock = new TestClock();
    let server: OAuthServer;
    before(async () => {
      server = await accountServer(clock, [['PASSWORD'], ['TOTP', 'BACKUPCODE']]);
    });
    after(() => server.close());

    it('changes the password: confirmation and policy refused (400), then every session ends and a notice goes out', async () => {
      const user = await userWithTotp(server);
      const elsewhere = new Browser(server);
      await signInToSite(elsewhere, server, '/account', user);
      const b = new Browser(server);
      const page = await (await signInToSite(b, server, '/account', user)).text();
      const csrf = csrfOf(page);
      expect((await b.get('/account/password')).status).to.equal(200);
      expect((await b.postForm('/account/password', { new_password: 'x' })).status).to.equal(403);
      const missing = await b.postForm('/account/password', { csrf });
      expect(missing.status).to.equal(400);
      const mismatch = await b.postForm('/account/password', {
        csrf,
        new_password: 'a long new passphrase 1',
        confirm_password: 'a long new passphrase 2',
      });
      expect(mismatch.status).to.equal(400);
      expect(await mismatch.text()).to.contain('The two passwords are not the same.');
      const weak = await b.postForm('/account/password', { csrf, new_password: 'short', confirm_password: 'short' });
      expect(weak.status).to.equal(400);
      expect(await weak.text()).to.contain('The password was not changed.');
      const next = 'a brand new passphrase 77';
      const done = await b.postForm('/account/password', { csrf, new_password: next, confirm_password: next });
      expect(locationOf(done, server).search).to.equal('?done=password_changed');
      const cradle = server.gatehouse.container.cradle;
      expect(await cradle.sessions.ofUser(user.id)).to.have.length(0);
      expect((await elsewhere.get('/account')).status).to.equal(303);
      const types = (await cradle.events.recent({ userId: user.id, limit: 50 })).map((e) => e.type);
      expect(types).to.include('account.password_changed');
      // The core's notice of a replaced password, to the user's address.
      const notice = await outbox(server, user.email);
      expect(notice, 'a notice email').to.not.equal(null);
    });

    it('changes the email address: proven by a code at the new one (wrong 401, used 400), the old one told', async () => {
      const user = await userWithTotp(server);
      const b = new Browser(server);
      const csrf = csrfOf(await (await signInToSite(b, server, '/account', user)).text());
      const cradle = server.gatehouse.container.cradle;
      expect((await b.get('/account/address/email')).status).to.equal(200);
      expect((await b.get('/account/address/name')).status).to.equal(404);
      expect((await b.postForm('/account/address/email/start', { address: 'x@example.test' })).status).to.equal(403);
      expect((await b.postForm('/account/address/email/start', { csrf, address: 'not an address' })).status).to.equal(
        400,
      );
      expect((await b.postForm('/account/address/email/start', { csrf, address: user.email })).status).to.equal(400);
      expect((await b.postForm('/account/address/email/verify', { csrf, code: '123456' })).status).to.equal(400);
      const fresh = `new-${user.username}@example.test`;
      const sent = await b.postForm('/account/address/email/start', { csrf, address: fresh });
      expect(sent.status).to.equal(200);
      const code = await latestCode(server, fresh);
      const wrong = await b.postForm('/account/address/email/verify', {
        csrf,
        code: code === '000000' ? '111111' : '000000',
      });
      expect(wrong.status).to.equal(401);
      expect(await wrong.text()).to.contain('The code is wrong.');
      const done = await b.postForm('/account/address/email/verify', { csrf, code });
      expect(locationOf(done, server).search).to.equal('?done=email_changed');
      const changed = (await cradle.users.findById(user.id))!;
      expect(changed.email).to.equal(fresh);
      expect(await cradle.users.findByIdentifier(fresh)).to.deep.include({ id: user.id });
      expect(await cradle.users.findByIdentifier(user.email)).to.equal(null);
      expect(await server.gatehouse.container.cradle.accounts.verified(changed, 'email')).to.equal(true);
      const told = await outbox(server, user.email);
      expect(told!.subject).to.equal('Your email address was changed');
      expect(told!.text).to.not.contain(fresh);
      expect((await b.postForm('/account/address/email/verify', { csrf, code })).status).to.equal(400);
      const [event] = await cradle.events.recent({ userId: user.id, types: ['account.address_changed'], limit: 1 });
      expect(event!.data).to.deep.equal({ actor: user.id, field: 'email' });
    });

    it('changes the phone number; five wrong codes end it (429); an address of another account 409 after the code', async () => {
      const user = await userWithTotp(server);
      const other = await server.user('taken');
      const b = new Browser(server);
      const csrf = csrfOf(await (await signInToSite(b, server, '/account', user)).text());
      expect((await b.postForm('/account/address/phone/start', { csrf, address: '12345' })).status).to.equal(400);
      const phone = '+4915100000' + String(Math.floor(Math.random() * 900) + 100);
      expect((await b.postForm('/account/address/phone/start', { csrf, address: phone })).status).to.equal(200);
      const right = await latestCode(server, phone);
      const wrongCode = right === '000000' ? '111111' : '000000';
      for (let i = 1; i < 5; i++) {
        expect((await b.postForm('/account/address/phone/verify', { csrf, code: wrongCode })).status).to.equal(401);
      }
      expect((await b.postForm('/account/address/phone/verify', { csrf, code: wrongCode })).status).to.equal(429);
      expect((await b.postForm('/account/address/phone/verify', { csrf, code: right })).status).to.equal(400);
      const before = (await outbox(server, phone))!.sent_at;
      expect((await b.postForm('/account/address/phone/start', { csrf, address: phone })).status).to.equal(200);
      const again = await latestCode(server, phone, before);
      const done = await b.postForm('/account/address/phone/verify', { csrf, code: again });
      expect(locationOf(done, server).search).to.equal('?done=phone_changed');
      expect((await server.gatehouse.container.cradle.users.findById(user.id))!.phone).to.equal(phone);
      // Another account's email: only the one who proves it learns it is taken.
      expect((await b.postForm('/account/address/email/start', { csrf, address: other.email })).status).to.equal(200);
      const taken = await b.postForm('/account/address/email/verify', {
        csrf,
        code: await latestCode(server, other.email),
      });
      expect(taken.status).to.equal(409);
      expect((await server.gatehouse.container.cradle.users.findById(user.id))!.email).to.equal(user.email);
    });

    it('sends at most 5 address codes an hour per user (429 with Retry-After)', async () => {
      const user = await userWithTotp(server);
      const b = new Browser(server);
      const csrf = csrfOf(await (await signInToSite(b, server, '/account', user)).text());
      for (let i = 0; i < 5; i++) {
        const address = `limit${i}-${user.username}@example.test`;
        expect((await b.postForm('/account/address/email/start', { csrf, address })).status).to.equal(200);
      }
      const limited = await b.postForm('/account/address/email/start', {
        csrf,
        address: `x-${user.username}@example.test`,
      });
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
    });

    it('deletes the account: disabled at once, a notice, then every row of the user gone after the grace period', async () => {
      const user = await userWithTotp(server);
      const b = new Browser(server);
      const page = await (await signInToSite(b, server, '/account', user)).text();
      const csrf = csrfOf(page);
      expect((await b.get('/account/delete')).status).to.equal(200);
      expect((await b.postForm('/account/delete', {})).status).to.equal(403);
      const res = await b.postForm('/account/delete', { csrf });
      expect(res.status).to.equal(200);
      expect(await res.text()).to.contain('will be deleted on');
      const cradle = server.gatehouse.container.cradle;
      expect((await cradle.users.findById(user.id))!.status).to.equal('disabled');
      expect(await cradle.sessions.ofUser(user.id)).to.have.length(0);
      const mail = await outbox(server, user.email);
      expect(mail!.subject).to.equal('Your account will be deleted');
      await waitFor(async () => (await cradle.users.findById(user.id)) === null, 8000);
      expect(await rowsOf(server, user)).to.deep.equal({});
      // The event is written after the rows are gone: wait for it too.
      const deletions = () => cradle.events.recent({ types: ['account.user_deleted'], limit: 5 });
      await waitFor(async () => (await deletions()).length > 0, 8000);
      const [deleted] = await deletions();
      expect(deleted!.userId).to.equal(null);
      const text = JSON.stringify(deleted);
      expect(text).to.not.contain(user.id).and.not.contain(user.username).and.not.contain(user.email);
      expect(deleted!.data.user).to.match(/^[0-9a-f]{64}$/);
    });

    it('keeps an account an admin enabled again within the grace period, even if disabled again later', async () => {
      const user = await userWithTotp(server);
      const b = new Browser(server);
      const csrf = csrfOf(await (await signInToSite(b, server, '/account', user)).text());
      expect((await b.postForm('/account/delete', { csrf })).status).to.equal(200);
      const cradle = server.gatehouse.container.cradle;
      // Enabled (kept), then disabled again for another reason: still kept.
      const admin = { via: 'console', userId: 'some-admin', ip: null };
      await cradle.services
        .resolve<UserAccounts>('userAccounts')
        .enable(admin, (await cradle.users.findById(user.id))!);
      await cradle.services
        .resolve<UserAccounts>('userAccounts')
        .disable(admin, (await cradle.users.findById(user.id))!);
      await waitFor(
        async () =>
          (await cradle.events.recent({ userId: user.id, types: ['account.deletion_cancelled'], limit: 1 })).length > 0,
        8000,
      );
      expect(await cradle.users.findById(user.id)).to.not.equal(null);
    });
  });

  describe('on PostgreSQL: an address moves, and a deletion leaves no row', () => {
    const db = withPostgresDatabase();
    const clock = new TestClock();
    let server: OAuthServer;
    before(async function () {
      server = await accountServer(clock, [['PASSWORD'], ['TOTP', 'BACKUPCODE']], {}, db.url);
    });
    after(() => server?.close());

    it('changes the email address, then deletes the account: every row gone', async () => {
      const user = await userWithTotp(server);
      const b = new Browser(server);
      const csrf = csrfOf(await (await signInToSite(b, server, '/account', user)).text());
      const fresh = `pg-${user.username}@example.test`;
      expect((await b.postForm('/account/address/email/start', { csrf, address: fresh })).status).to.equal(200);
      const done = await b.postForm('/account/address/email/verify', { csrf, code: await latestCode(server, fresh) });
      expect(locationOf(done, server).search).to.equal('?done=email_changed');
      const cradle = server.gatehouse.container.cradle;
      expect(await cradle.users.findByIdentifier(fresh)).to.deep.include({ id: user.id });
      expect((await b.postForm('/account/delete', { csrf })).status).to.equal(200);
      await waitFor(async () => (await cradle.users.findById(user.id)) === null, 8000);
      expect(await rowsOf(server, { ...user, email: fresh })).to.deep.equal({});
      expect(await rowsOf(server, user)).to.deep.equal({});
    });
  });
});

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(200);
  }
}
