/**
 * Decision 69: the device API's routes are the devices-api plugin's, on `web.devices`. The
 * device methods depend on it (start-up names it when it is missing); without device methods
 * and the plugin (the test suite's own config), the device paths answer 404; and a plugin that skips the checks skips none.
 */
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import {
  atSecondStage,
  boundDevice,
  call,
  initiate,
  onlyPush,
  signedCall,
  startDemoServer,
  type DemoServer,
} from '../../../test/devices/support.js';
import { startServer, type OAuthServer } from '../../../test/oauth/support.js';

const CARELESS = fileURLToPath(new URL('./fixtures/careless-devices.js', import.meta.url));
const DEVICES_API = '@gatehouse-auth/devices-api';

describe('devices-api left out of plugins: (decision 69)', function () {
  it('with a device method listed, start-up stops naming the plugin', async function () {
    let error: unknown;
    const server = await startDemoServer({
      configure(config) {
        config.plugins = config.plugins.filter((p) => p.name !== DEVICES_API);
      },
    }).catch((err: unknown) => (error = err));
    if (!error) await (server as DemoServer).close();
    expect(String(error)).to.include(
      `plugin @gatehouse-auth/method-push: depends on plugin ${DEVICES_API}, which is not configured`,
    );
  });

  describe('without device methods', function () {
    let server: OAuthServer;
    before(async function () {
      server = await startServer();
    });
    after(() => server?.close());

    it('answers 404 at every device path', async function () {
      const post = (path: string) =>
        fetch(server.url(path), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      for (const path of [
        '/verification-srv/devices/bind',
        '/verification-srv/devices/pushes',
        '/verification-srv/authentication/PUSH/push/allow',
      ]) {
        expect((await post(path)).status, path).to.equal(404);
      }
      const user = await server.user();
      const devices = server.url(`/verification-actions-srv/setup/users/${user.id}/devices`);
      expect((await fetch(devices)).status).to.equal(404);
      expect((await fetch(server.url('/devices/bind?code=abcdefghijklmnopqrstuvwxyz'))).status).to.equal(404);
    });
  });
});

describe('web.devices keeps its checks whatever the routes do (decision 69)', function () {
  let server: DemoServer;
  before(async function () {
    server = await startDemoServer({
      configure(config) {
        config.plugins.push({ path: CARELESS, options: {} });
      },
    });
  });
  after(() => server?.close());

  it('checks the binding body itself: 400 INVALID_FIELD from a route that checked nothing', async function () {
    const reply = await call(server, '/careless-devices/bind', { code: 'short' });
    expect(reply.data).to.deep.equal({ status: 400, code: 'INVALID_FIELD' });
  });

  it('refuses a step that is not one: 404', async function () {
    const reply = await call(server, '/careless-devices/PUSH/approve', {});
    expect(reply.data).to.deep.equal({ status: 404, code: 'NOT_FOUND' });
  });

  it('checks the proof against the step it runs: an acknowledge proof does not allow', async function () {
    const device = await boundDevice(server);
    const at = await atSecondStage(server);
    const started = await initiate(server, at, 'PUSH');
    const push = await onlyPush(device);
    const fields = {
      exchange_id: push.exchangeId,
      push_id: push.pushId,
      device_id: device.deviceId,
      client_id: 'gatehouse-authenticator',
    };
    const acknowledge = '/verification-srv/authentication/PUSH/push/acknowledge';
    const refused = await signedCall(server, device, '/careless-devices/PUSH/allow', fields, {
      nonce: push.challenge,
      signedPath: acknowledge,
    });
    expect(refused.data).to.deep.equal({ status: 401, code: 'DEVICE_PROOF_INVALID' });
    const status = await call(server, `/verification-srv/verificationstatus/${started.status_id}`, null, {}, 'GET');
    expect(status.data.status).to.equal('INITIATED');
    // The proof names the operation's path, whichever path the plugin was called on.
    const allowed = await signedCall(server, device, '/careless-devices/PUSH/allow', fields, {
      nonce: push.challenge,
      signedPath: '/verification-srv/authentication/PUSH/push/allow',
    });
    expect((allowed.data as { status: number }).status, JSON.stringify(allowed.data)).to.equal(200);
  });
});
