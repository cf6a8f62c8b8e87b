/**
 * Issue 8: six wrong passwords by a stranger used to make the right password fail for the
 * whole back-off (and 100 locked the factor): about four requests an hour kept a user out.
 * Now failures are told apart by the hosted page's device cookie: strangers share the user's
 * back-off and lock, while a browser the user already signed in from is held back only by its
 * own failures. The user is told when strangers are refused.
 */
import { expect } from 'chai';
import { defaultPlugins, startVerificationApp, type VerificationApp } from './support.js';
import { dataOf, expectError, passwordUser, PASSWORD, sentMessages, WRONG_PASSWORD, type TestUser } from './steps.js';

describe('verification: strangers cannot lock a user out of a known device', () => {
  let v: VerificationApp;
  let alice: TestUser;

  before(async () => {
    v = await startVerificationApp({
      stages: [['PASSWORD'], ['TOTP']],
      plugins: [...defaultPlugins(), { name: '@gatehouse-auth/fds-velocity' }],
      notifications: { email_channel: 'capture', min_interval_seconds: 0 },
    });
    alice = await passwordUser(v, 'lockout');
  });
  after(() => v.close());

  /** A browser: opens the hosted page of a new flow and keeps the device cookie it is given. */
  async function browser(): Promise<{ cookie: string }> {
    const requestId = await v.flow();
    const page = await v.http.get(`/login?request_id=${requestId}`);
    expect(page.status).to.equal(200);
    const set = ([] as string[]).concat(page.headers['set-cookie'] ?? []);
    const device = set.find((c) => c.startsWith('gh_device='));
    expect(device, 'device cookie').to.be.a('string');
    expect(device)
      .to.match(/HttpOnly/)
      .and.match(/SameSite=Lax/)
      .and.match(/Max-Age=34560000/);
    return { cookie: device!.split(';')[0]! };
  }

  /** A first-stage PASSWORD attempt from `cookie` (or none); returns the verification response. */
  async function attempt(password: string, cookie?: string) {
    const requestId = await v.flow();
    const init = await v.http
      .post('/verification-srv/authentication/PASSWORD/initiation')
      .set(cookie ? { Cookie: cookie } : {})
      .send({ request_id: requestId, usage_type: 'INITIAL_AUTHENTICATION', identifier: alice.username });
    await v.gatehouse.idle();
    const exchangeId = dataOf<{ exchange_id: { exchange_id: string } }>(init).exchange_id.exchange_id;
    return v.http
      .post('/verification-srv/authentication/PASSWORD/verification')
      .set(cookie ? { Cookie: cookie } : {})
      .send({ exchange_id: exchangeId, password });
  }

  it("after a stranger's wrong passwords, alice's own browser still signs in; a new one waits; alice is told", async () => {
    const home = await browser();
    dataOf(await attempt(PASSWORD, home.cookie)); // alice signs in once: the browser is known

    for (let i = 0; i < 8; i++) expectError(await attempt(WRONG_PASSWORD), 401, 'VERIFICATION_FAILED');
    // The stranger is backed off now: even the right password fails for them (and looks like a wrong one).
    expectError(await attempt(PASSWORD), 401, 'VERIFICATION_FAILED');
    // So does a browser alice never signed in from.
    const fresh = await browser();
    expectError(await attempt(PASSWORD, fresh.cookie), 401, 'VERIFICATION_FAILED');
    // Her known browser is not held back by them.
    expect(dataOf<{ sub: string }>(await attempt(PASSWORD, home.cookie)).sub).to.equal(alice.id);

    await v.gatehouse.idle();
    const notices = (await sentMessages()).filter((m) => m.to === alice.email);
    expect(notices.map((m) => m.subject)).to.include('Sign-in alert: a sign-in to your account was blocked');
    expect(notices.at(-1)!.text).to.include('a device you signed in from before is not held back');
  });

  it('a forged device cookie is just an unknown device', async () => {
    const forged = 'gh_device=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    for (let i = 0; i < 8; i++) await attempt(WRONG_PASSWORD);
    expectError(await attempt(PASSWORD, forged), 401, 'VERIFICATION_FAILED');
    const { sql } = v.gatehouse.container.cradle;
    // Only hashes of device cookies are stored.
    const keys = await sql.select<{ key: string | null }>(
      `SELECT DISTINCT key FROM events WHERE type LIKE 'verification.%' AND key IS NOT NULL`,
    );
    expect(keys).to.not.be.empty;
    for (const { key } of keys)
      expect(key)
        .to.match(/^[A-Za-z0-9_-]{43}$/)
        .and.not.include('AAAAAAAA');
  });
});
