/**
 * Issue 12: setting a method up in the middle of a login (`…/setup/{method}/initiation/{trackId}`,
 * the track id with the browser's flow cookie, issue 25), the account page's overview (`GET …/config`), naming a
 * credential the cidaas way (`PUT …/friendlyname/{METHOD}/{trackId}`), and code methods that send
 * only to a proven primary address (`primary_address: verified`).
 */
import type { MethodSetup } from '@gatehouse-auth/core';
import { expect } from 'chai';
import { generate } from 'otplib';
import {
  ALICE_PASSWORD,
  DEMO_APP,
  codeFrom,
  outboxCode,
  outboxLatestText,
  startAuthorization,
} from '../../../test/oauth/demo-server.js';
import {
  admin,
  atSecondStage,
  call,
  startAccountVerification,
  startDemoServer,
  type DemoServer,
} from '../../../test/devices/support.js';
import { Browser, completeStage, locationOf } from '../../../test/oauth/support.js';

const BOB_PASSWORD = 'bob has a long enough password';

describe('setting a method up during a login, and the account overview (issue 12)', function () {
  let server: DemoServer;
  let bob: string;

  before(async function () {
    // demo-app with its own login UI: the track id comes back to it with `sub`.
    server = await startDemoServer({
      host: 'localhost',
      configure(config) {
        config.apps.find((a) => a.client_id === 'demo-app')!.login_page_url = 'http://127.0.0.1:9/login';
      },
    });
    bob = await passwordUser('bob-setup');
  });
  after(() => server?.close());

  /** A user with a password and nothing else. */
  async function passwordUser(username: string): Promise<string> {
    const { users } = server.gatehouse.container.cradle;
    const id = (await users.create({ username })).id;
    const user = (await users.findById(id))!;
    // Setting methods up is @gatehouse-auth/management's service (decision 81); no request here.
    await server.gatehouse.container
      .resolve<MethodSetup>('methodSetup')
      .step('initiation', 'PASSWORD', user, { password: BOB_PASSWORD }, { headers: {}, socket: {} } as never);
    return id;
  }

  /** A demo-app login through its UI with the password done: the UI's Location (requestId, sub, track_id). */
  async function atSecondStageOf(username: string, password: string) {
    const browser = new Browser(server);
    const auth = await startAuthorization(browser, server, DEMO_APP);
    const requestId = auth.location.searchParams.get('requestId')!;
    const ui = locationOf(await browser.postForm('/login-srv/login', { requestId, username, password }), server);
    expect(ui.searchParams.get('error'), ui.search).to.equal(null);
    return { browser, auth, requestId, trackId: ui.searchParams.get('track_id')! };
  }
  const bobAtSecondStage = () => atSecondStageOf('bob-setup', BOB_PASSWORD);

  /** The UI's XHR with `credentials: 'include'`: the browser doing the login sends its cookies. */
  const cookiesOf = (browser: Browser) => ({
    Cookie: [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
  });
  const setupAs = (browser: Browser | null, method: string, trackId: string, body: Record<string, string> = {}) =>
    call(
      server,
      `/verification-actions-srv/setup/${method}/initiation/${trackId}`,
      body,
      browser ? cookiesOf(browser) : {},
    );

  it('bob sets TOTP up with the track id his UI got, confirms it by exchange_id, and finishes the login with it', async function () {
    const at = await bobAtSecondStage();
    expect(at.trackId).to.match(/^[\w-]+\.[\w-]+$/);
    const started = await setupAs(at.browser, 'TOTP', at.trackId);
    expect(started.status, JSON.stringify(started)).to.equal(200);
    const secret = started.data.secret as string;
    const exchangeId = (started.data.exchange_id as { exchange_id: string }).exchange_id;
    const now = () => Math.floor(server.clock.now().getTime() / 1000);
    const confirmed = await call(server, '/verification-actions-srv/setup/TOTP/verification', {
      exchange_id: exchangeId,
      pass_code: await generate({ secret, epoch: now() }),
    });
    expect(confirmed.status, JSON.stringify(confirmed)).to.equal(200);
    // The login's second stage, with the next code (the confirmation's code is spent).
    server.clock.advance(30);
    const totp = { pass_code: await generate({ secret, epoch: now() }) };
    const resume = await completeStage(at.browser, server, at.requestId, 'TOTP', { sub: bob }, totp);
    expect(await codeFrom(at.browser, server, resume, at.auth, DEMO_APP)).to.be.a('string');
    // The login moved on: its track id is spent.
    expect(await setupAs(at.browser, 'SMS', at.trackId)).to.include({ status: 409, code: 'REQUEST_COMPLETED' });
  });

  it('refuses an unknown login (404 REQUEST_NOT_FOUND) and a forged or bare track id (403 FLOW_NOT_BOUND)', async function () {
    const at = await bobAtSecondStage();
    const setup = (trackId: string) => setupAs(at.browser, 'TOTP', trackId);
    expect(await setup('no-such-request.x')).to.include({ status: 404, code: 'REQUEST_NOT_FOUND' });
    expect(await setup(at.requestId)).to.include({ status: 403, code: 'FLOW_NOT_BOUND' });
    const forged = `${at.requestId}.${at.trackId.split('.')[1]!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))}`;
    expect(await setup(forged)).to.include({ status: 403, code: 'FLOW_NOT_BOUND' });
  });

  it('the track id alone sets nothing up: without the browser’s flow cookie, or with another browser’s, 403 FLOW_NOT_BOUND (issue 25)', async function () {
    await passwordUser('carol-setup');
    const at = await atSecondStageOf('carol-setup', BOB_PASSWORD);
    // Whoever read the UI's URL (history, logs, Referer) holds the track id, not the cookie.
    expect(await setupAs(null, 'TOTP', at.trackId)).to.include({ status: 403, code: 'FLOW_NOT_BOUND' });
    const elsewhere = await atSecondStageOf('carol-setup', BOB_PASSWORD);
    expect(await setupAs(elsewhere.browser, 'TOTP', at.trackId)).to.include({ status: 403, code: 'FLOW_NOT_BOUND' });
    // Nothing was set up: the right browser still can.
    expect(await setupAs(at.browser, 'TOTP', at.trackId)).to.include({ status: 200 });
  });

  it('a UI on another site: its back end calls with the app’s client authentication and the track id (issue 25)', async function () {
    await passwordUser('dan-setup');
    const at = await atSecondStageOf('dan-setup', BOB_PASSWORD);
    const basic = (id: string, secret: string) => ({
      Authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
    });
    const backEnd = (headers: Record<string, string>, body: Record<string, string> = {}) =>
      call(server, `/verification-actions-srv/setup/TOTP/initiation/${at.trackId}`, body, headers);
    expect(await backEnd(basic(DEMO_APP.id, 'not the secret'))).to.include({ status: 401, code: 'UNAUTHORIZED' });
    // Another app's back end is not this login's.
    const service = basic('demo-service', 'demo-service-secret-change-me-0123456789');
    expect(await backEnd(service)).to.include({ status: 403, code: 'FLOW_NOT_BOUND' });
    // A public client has no secret that proves a back end.
    expect(await backEnd({}, { client_id: 'demo-spa', client_secret: 'x' })).to.include({
      status: 401,
      code: 'UNAUTHORIZED',
    });
    const started = await backEnd(basic(DEMO_APP.id, DEMO_APP.secret));
    expect(started.status, JSON.stringify(started)).to.equal(200);
    expect(started.data.secret).to.be.a('string');
    // As at /token, only the method the app registered (client_secret_basic) counts.
    const posted = await backEnd({}, { client_id: DEMO_APP.id, client_secret: DEMO_APP.secret });
    expect(posted).to.include({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('a password alone does not bind a passkey (it signs in by itself), even for a user with no second factor: 403 SETUP_NOT_ALLOWED (issue 25)', async function () {
    await passwordUser('erin-setup');
    const at = await atSecondStageOf('erin-setup', BOB_PASSWORD);
    expect(await setupAs(at.browser, 'FIDO2', at.trackId)).to.include({ status: 403, code: 'SETUP_NOT_ALLOWED' });
    // The same login may still add a second factor that does not sign in alone.
    expect(await setupAs(at.browser, 'TOTP', at.trackId)).to.include({ status: 200 });
  });

  it('refuses a method the stage does not ask for: 403 METHOD_NOT_ENABLED', async function () {
    const at = await bobAtSecondStage();
    expect(await setupAs(at.browser, 'PASSWORD', at.trackId)).to.include({ status: 403, code: 'METHOD_NOT_ENABLED' });
  });

  it('a password alone cannot add a factor for a user who has one (alice), nor set up one she has (403 SETUP_NOT_ALLOWED)', async function () {
    const alice = await atSecondStageOf('alice', ALICE_PASSWORD);
    expect(await setupAs(alice.browser, 'TOTP', alice.trackId)).to.include({ status: 403, code: 'SETUP_NOT_ALLOWED' });
    expect(await setupAs(alice.browser, 'PUSH', alice.trackId)).to.include({ status: 403, code: 'SETUP_NOT_ALLOWED' });
  });

  it('GET /verification-actions-srv/config: the app’s methods, their stages, what alice has set up, her verified addresses', async function () {
    const res = await call(
      server,
      `/verification-actions-srv/config?sub=${server.alice.id}&client_id=demo-app`,
      {},
      admin,
      'GET',
    );
    expect(res.status, JSON.stringify(res)).to.equal(200);
    const methods = res.data.methods as { type: string; stages: number[]; enrolled: boolean; can_setup: boolean }[];
    expect(methods.find((m) => m.type === 'PASSWORD')).to.deep.include({ stages: [1], enrolled: true });
    expect(methods.find((m) => m.type === 'TOTP')).to.deep.include({ stages: [2], enrolled: true, can_setup: true });
    expect(methods.find((m) => m.type === 'FIDO2')).to.deep.include({ stages: [1, 2], enrolled: false });
    expect(res.data).to.include({ client_id: 'demo-app', sub: server.alice.id, email_verified: false });
    const noApp = await call(
      server,
      `/verification-actions-srv/config?sub=${server.alice.id}&client_id=nope`,
      {},
      admin,
      'GET',
    );
    expect(noApp).to.include({ status: 400, code: 'INVALID_FIELD' });
    const noBearer = await call(server, `/verification-actions-srv/config?sub=${server.alice.id}`, {}, {}, 'GET');
    expect(noBearer.status).to.equal(401);
  });

  it('PUT …/setup/users/friendlyname/{METHOD}/{trackId} names a credential; a bad name is 400, an unknown credential 404', async function () {
    const listed = await call(
      server,
      `/verification-actions-srv/setup/users/${server.alice.id}/methods`,
      {},
      admin,
      'GET',
    );
    const totp = (listed.data as unknown as { method: string; credentials: { id: string }[] }[]).find(
      (m) => m.method === 'TOTP',
    )!;
    const id = totp.credentials[0]!.id;
    const path = `/verification-actions-srv/setup/users/friendlyname/TOTP/${id}`;
    const renamed = await call(server, path, { sub: server.alice.id, friendly_name: 'Phone app' }, admin, 'PUT');
    expect(renamed.status, JSON.stringify(renamed)).to.equal(200);
    expect(renamed.data).to.deep.equal({ id, friendly_name: 'Phone app' });
    expect(await call(server, path, { sub: server.alice.id, friendly_name: '' }, admin, 'PUT')).to.include({
      status: 400,
      code: 'INVALID_FIELD',
    });
    const unknown = `/verification-actions-srv/setup/users/friendlyname/TOTP/nope`;
    expect(await call(server, unknown, { sub: server.alice.id, friendly_name: 'x' }, admin, 'PUT')).to.include({
      status: 404,
      code: 'CREDENTIAL_NOT_FOUND',
    });
  });
});

describe('code methods with primary_address: verified (issue 12)', function () {
  let server: DemoServer;

  before(async function () {
    server = await startDemoServer({
      configure(config) {
        const email = config.plugins.find((p) => p.name?.endsWith('method-email'))!;
        email.options = { ...email.options, primary_address: 'verified' };
        const app = config.apps.find((a) => a.client_id === 'demo-app')!;
        app.login_stages = [app.login_stages[0]!, [...app.login_stages[1]!, 'EMAIL']];
      },
    });
  });
  after(() => server?.close());

  it('EMAIL is not set up for alice until she proves her address; then it sends there', async function () {
    const initiateEmail = async () =>
      call(server, '/verification-srv/authentication/EMAIL/initiation', {
        request_id: (await atSecondStage(server)).requestId,
        usage_type: 'MULTIFACTOR_AUTHENTICATION',
        sub: server.alice.id,
      });
    expect(await initiateEmail()).to.include({ status: 403, code: 'METHOD_NOT_ENABLED' });
    const before = await outboxLatestText(server, 'alice@example.test');
    const { exchangeId } = await startAccountVerification(server, 'email');
    const code = await outboxCode(server, 'alice@example.test', (text) => text !== before);
    const proven = await call(server, '/verification-actions-srv/account', { exchange_id: exchangeId, code });
    expect(proven.status, JSON.stringify(proven)).to.equal(200);
    expect(await initiateEmail()).to.include({ status: 200 });
  });
});
