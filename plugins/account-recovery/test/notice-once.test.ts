/**
 * A reset password is told once (security review, decision 61): the reset ends in the PASSWORD
 * method's setup, whose `password_changed` security event @gatehouse-auth/notices-security sends
 * as a notice (with the ways to sign in set up since the last sign-in). With that plugin loaded
 * the reset's own "Your password was changed" is not sent as well; without it, it is
 * (recovery.test.ts). Every message is counted through a real registered channel.
 */
import { expect } from 'chai';
import { CAPTURE_CHANNEL, sentMessages } from '../../../test/verification/steps.js';
import { Browser, locationOf, type OAuthServer, startServer } from '../../../test/oauth/support.js';
import { postCode, startReset, submit } from './support.js';

const NEW_PASSWORD = 'a completely different passphrase 77';

const to = async (address: string) => (await sentMessages()).filter((m) => m.to === address);

/** A reset of a fresh user's password, by the email code; the user. */
async function reset(server: OAuthServer) {
  const user = await server.user('resetonce');
  const browser = new Browser(server);
  await startReset(server, browser, user.email);
  const [mail] = await to(user.email);
  const code = /\b(\d{6})\b/.exec(mail!.text)![1]!;
  expect(locationOf(await postCode(browser, code), server).pathname).to.equal('/recovery/password');
  const done = await submit(browser, '/recovery/password', '/recovery/password', {
    password: NEW_PASSWORD,
    confirm: NEW_PASSWORD,
  });
  expect(done.status).to.equal(200);
  await server.gatehouse.container.cradle.securityEvents.drain();
  await server.gatehouse.idle();
  return user;
}

/** A server with the recovery by email and the security notices with `notices` options. */
const serverWith = (notices: Record<string, unknown>) =>
  startServer({
    plugins: [
      { name: '@gatehouse-auth/method-backupcode', options: { memory_cost: 1024, time_cost: 2 } },
      { path: CAPTURE_CHANNEL },
      { name: '@gatehouse-auth/account-recovery', options: { email_channel: 'capture' } },
      { name: '@gatehouse-auth/notices-security', options: { min_interval_seconds: 0, ...notices } },
    ],
  });

describe('@gatehouse-auth/account-recovery with @gatehouse-auth/notices-security', function () {
  let server: OAuthServer;
  before(async () => {
    server = await serverWith({ email_channel: 'capture' });
  });
  after(() => server?.close());

  it('a reset password sends one notice of the change (the security notice), besides the code', async () => {
    const user = await reset(server);
    const subjects = (await to(user.email)).map((m) => m.subject);
    expect(subjects).to.deep.equal(['Your password reset code', 'Security alert: your password was changed']);
    const events = await server.gatehouse.container.cradle.events.recent({ userId: user.id, limit: 30 });
    expect(events.filter((e) => e.type === 'notification.sent').map((e) => e.outcome)).to.deep.equal([
      'password_changed',
    ]);
  });
});

describe('@gatehouse-auth/account-recovery with security notices that cannot reach the user', function () {
  let server: OAuthServer;
  before(async () => {
    server = await serverWith({ sms_channel: 'capture' });
  });
  after(() => server?.close());

  it('a user with an email and no phone gets the reset’s own notice: never none', async () => {
    const user = await reset(server);
    expect((await to(user.email)).map((m) => m.subject)).to.deep.equal([
      'Your password reset code',
      'Your password was changed',
    ]);
    const events = await server.gatehouse.container.cradle.events.recent({ userId: user.id, limit: 30 });
    expect(events.filter((e) => e.type.startsWith('notification.')).map((e) => [e.type, e.outcome])).to.deep.equal([
      ['notification.skipped', 'password_changed'],
    ]);
  });
});
