/**
 * Issue 27: the cidaas SDK's reset-password calls (`POST /password-srv/resetpassword?action=…`)
 * on the account-recovery plugin's service: the same answer for every identifier, a code spent
 * once, the PASSWORD policy, a second factor required when one is set up, JSON when asked and a
 * redirect to the app's login UI for the SDK's form posts; 404 without the recovery plugin.
 */
import { expect } from 'chai';
import { outboxMessage } from '../../../test/oauth/demo-server.js';
import { DEMO_ADMIN_TOKEN, startDemoServer, type DemoServer } from '../../../test/devices/support.js';
import { authenticatedStatus, Browser, startServer } from '../../../test/oauth/support.js';
import { DEMO_APP, startAuthorization } from '../../../test/oauth/demo-server.js';

const UI = 'https://login.app.example/signin';
const NEW_PASSWORD = 'the cidaas reset passphrase 9';

interface Reply {
  status: number;
  body: { success: boolean; data?: Record<string, unknown>; error?: { code: string } };
}

async function reset(server: Pick<DemoServer, 'url'>, action: string, body: Record<string, string>): Promise<Reply> {
  const res = await fetch(server.url(`/password-srv/resetpassword?action=${action}`), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Reply['body'] };
}

describe('compat-cidaas: the reset-password calls (issue 27)', function () {
  this.timeout(60_000);
  let server: DemoServer;
  let serial = 0;

  before(async () => {
    server = await startDemoServer({
      host: 'localhost',
      configure(config) {
        config.apps.find((a) => a.client_id === DEMO_APP.id)!.login_page_url = UI;
      },
    });
  });
  after(() => server?.close());

  /** A fresh user with a password (and an email address). */
  async function newUser(): Promise<{ id: string; username: string; email: string }> {
    serial += 1;
    const username = `cidaasreset${serial}x${process.pid}`;
    const email = `${username}@example.test`;
    const { id } = await server.gatehouse.container.cradle.users.create({ username, email });
    const res = await fetch(server.url('/verification-actions-srv/setup/PASSWORD/initiation'), {
      method: 'POST',
      headers: { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sub: id, password: 'the old password of them 1' }),
    });
    expect(res.status).to.equal(200);
    return { id, username, email };
  }

  /** A login of the demo app, which its own login UI shows: the request id in the UI's query. */
  async function uiRequestId(browser: Browser): Promise<string> {
    const { location } = await startAuthorization(browser, server, DEMO_APP);
    expect(location.origin + location.pathname).to.equal(UI);
    return location.searchParams.get('requestId') ?? location.searchParams.get('request_id')!;
  }

  const codeTo = async (email: string) =>
    /\b(\d{6})\b/.exec((await outboxMessage(server, email, (t) => /reset your password/.test(t))).text)![1]!;

  it('initiatereset: the same answer for a known and an unknown address', async () => {
    const user = await newUser();
    const known = await reset(server, 'initiatereset', {
      email: user.email,
      resetMedium: 'EMAIL',
      processingType: 'CODE',
    });
    const unknown = await reset(server, 'initiatereset', {
      email: 'nobody-here@example.test',
      resetMedium: 'EMAIL',
      processingType: 'CODE',
    });
    expect(known.status).to.equal(200);
    expect(unknown.status).to.equal(200);
    expect(Object.keys(unknown.body.data!)).to.deep.equal(Object.keys(known.body.data!));
    expect(known.body.data!.reset_initiated).to.equal(true);
    expect(known.body.data!.rprq).to.be.a('string').and.not.equal(unknown.body.data!.rprq);
    // Any code for the unknown one fails as a wrong one does.
    const wrong = await reset(server, 'validatecode', {
      resetRequestId: String(unknown.body.data!.rprq),
      code: '123456',
    });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.error!.code).to.equal('CODE_INVALID');
  });

  it('validatecode then acceptreset (JSON): a wrong code, the policy, single use; then the new password signs in', async () => {
    const user = await newUser();
    const started = await reset(server, 'initiatereset', { username: user.username, resetMedium: 'EMAIL' });
    const rprq = String(started.body.data!.rprq);
    const code = await codeTo(user.email);
    const wrong = await reset(server, 'validatecode', {
      resetRequestId: rprq,
      code: code === '111111' ? '222222' : '111111',
    });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.error!.code).to.equal('CODE_INVALID');
    const valid = await reset(server, 'validatecode', { resetRequestId: rprq, code });
    expect(valid.status).to.equal(200);
    const exchangeId = String(valid.body.data!.exchangeId);
    const again = await reset(server, 'validatecode', { resetRequestId: rprq, code });
    expect(again.status).to.equal(410);
    expect(again.body.error!.code).to.equal('RECOVERY_EXPIRED');
    // The exchange needs its own reset's id.
    const otherReset = await reset(server, 'acceptreset', {
      resetRequestId: 'not-this-reset',
      exchangeId,
      password: NEW_PASSWORD,
      confirmPassword: NEW_PASSWORD,
    });
    expect(otherReset.status).to.equal(410);
    const weak = await reset(server, 'acceptreset', {
      resetRequestId: rprq,
      exchangeId,
      password: 'short',
      confirmPassword: 'short',
    });
    expect(weak.status).to.equal(400);
    expect(weak.body.error!.code).to.equal('PASSWORD_TOO_SHORT');
    const accepted = await reset(server, 'acceptreset', {
      resetRequestId: rprq,
      exchangeId,
      password: NEW_PASSWORD,
      confirmPassword: NEW_PASSWORD,
    });
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(200);
    expect(accepted.body.data).to.deep.equal({ reseted: true });
    const replay = await reset(server, 'acceptreset', {
      resetRequestId: rprq,
      exchangeId,
      password: NEW_PASSWORD,
      confirmPassword: NEW_PASSWORD,
    });
    expect(replay.status).to.equal(410);
    // The new password passes a sign-in's PASSWORD stage (authenticatedStatus asserts a 200).
    const requestId = await uiRequestId(new Browser(server));
    const status = await authenticatedStatus(
      server,
      requestId,
      'PASSWORD',
      { identifier: user.username },
      { password: NEW_PASSWORD },
    );
    expect(status).to.be.a('string');
  });

  it('an unknown action is refused (400 INVALID_FIELD)', async () => {
    const res = await reset(server, 'resetnow', { email: 'someone@example.test' });
    expect(res.status).to.equal(400);
    expect(res.body.error!.code).to.equal('INVALID_FIELD');
  });

  it('a user with a second factor is sent to the hosted reset (403 SECOND_FACTOR_REQUIRED)', async () => {
    const started = await reset(server, 'initiatereset', { username: 'alice', resetMedium: 'EMAIL' });
    const code = await codeTo('alice@example.test');
    const res = await reset(server, 'validatecode', { resetRequestId: String(started.body.data!.rprq), code });
    expect(res.status).to.equal(403);
    expect(res.body.error!.code).to.equal('SECOND_FACTOR_REQUIRED');
  });

  it('form posts answer with a redirect to the app’s login UI: exchangeId (never the reset id), or the error', async () => {
    const user = await newUser();
    const browser = new Browser(server);
    const requestId = await uiRequestId(browser);
    const started = await reset(server, 'initiatereset', { email: user.email, resetMedium: 'EMAIL', requestId });
    const rprq = String(started.body.data!.rprq);
    const form = (fields: Record<string, string>) =>
      fetch(server.url('/password-srv/resetpassword?action=validatecode'), {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://login.app.example' },
        body: new URLSearchParams(fields).toString(),
      });
    const bad = await form({ resetRequestId: rprq, code: '000000', requestId });
    expect(bad.status).to.equal(303);
    const badTo = new URL(bad.headers.get('location')!);
    expect(badTo.origin + badTo.pathname).to.equal(UI);
    expect(badTo.searchParams.get('error')).to.equal('CODE_INVALID');
    const good = await form({ resetRequestId: rprq, code: await codeTo(user.email), requestId });
    expect(good.status).to.equal(303);
    const to = new URL(good.headers.get('location')!);
    expect(to.origin + to.pathname).to.equal(UI);
    expect(to.searchParams.get('exchangeId')).to.be.a('string');
    expect(to.searchParams.has('resetRequestId')).to.equal(false);
    expect(to.search).to.not.contain(rprq);
  });
});

describe('compat-cidaas: the reset-password calls without the recovery plugin', function () {
  it('answer 404 RECOVERY_NOT_ENABLED', async () => {
    const server = await startServer({ plugins: [{ name: '@gatehouse-auth/compat-cidaas' }] });
    try {
      const res = await reset(server, 'initiatereset', { email: 'someone@example.test', resetMedium: 'EMAIL' });
      expect(res.status).to.equal(404);
      expect(res.body.error!.code).to.equal('RECOVERY_NOT_ENABLED');
    } finally {
      await server.close();
    }
  });
});
