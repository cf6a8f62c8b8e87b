/**
 * Issue 29: the device's inbox as a person reads it. Each push says when it was asked for and
 * until when the server takes it (the simulator shows both, relative and absolute); a push whose
 * login no longer waits on it (completed another way, or started again) is not listed, and the
 * steps that would approve it are refused with the login's reason. The server's state decides.
 */
import { expect } from 'chai';
import { describePush, type Authenticator } from '@gatehouse-auth/authenticator';
import { aliceTotp } from '../oauth/demo-server.js';
import {
  atSecondStage,
  boundDevice,
  call,
  continueLogin,
  failure,
  initiate,
  onlyPush,
  startDemoServer,
  type DemoServer,
} from './support.js';

describe('the device inbox: times, and pushes nobody waits on (issue 29)', function () {
  let server: DemoServer;
  let device: Authenticator;

  before(async function () {
    server = await startDemoServer();
    device = await boundDevice(server, { name: "Alice's phone" });
  });
  after(() => server?.close());
  // Each test starts with an empty inbox, past push-fatigue's windows.
  afterEach(async function () {
    for (const push of await device.pushes()) await device.cancel(push);
    server.clock.advance(1801);
  });

  it('lists each push with when it was asked for and when it expires; the simulator says both ways', async function () {
    const at = await atSecondStage(server);
    const asked = server.clock.now();
    await initiate(server, at, 'PUSH');
    server.clock.advance(150);

    const push = await onlyPush(device);
    expect(push.context.requested_at).to.equal(asked.toISOString());
    expect(push.requestedAt?.toISOString()).to.equal(asked.toISOString());
    // The exchange's lifetime (verification.exchange_ttl, 600 s in the demo config).
    expect(push.expiresAt.getTime()).to.equal(asked.getTime() + 600_000);

    const line = describePush(push, server.clock.now());
    const absolute = asked.toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
    expect(line).to.match(new RegExp(`^${push.pushId}  PUSH  INITIATED  Gatehouse demo app  \\(`));
    expect(line).to.include(`  requested 2 minutes ago (${absolute}), expires in 7 minutes`);
  });

  it('a push whose login completed another way leaves the inbox; its steps are refused (400 WRONG_FLOW_STAGE)', async function () {
    const at = await atSecondStage(server);
    await initiate(server, at, 'PUSH');
    const stale = await onlyPush(device);

    // The person used TOTP instead, at the same stage: the login completes without the push.
    const totp = await initiate(server, at, 'TOTP');
    const verified = await call(server, '/verification-srv/authentication/TOTP/verification', {
      exchange_id: totp.exchange_id.exchange_id,
      pass_code: await aliceTotp(server),
    });
    expect(verified.status, JSON.stringify(verified)).to.equal(200);
    await continueLogin(server, at, totp.status_id, 'TOTP');

    expect(await device.pushes()).to.deep.equal([]);
    // The steps refuse it as they did before the inbox hid it: the login is not at its stage.
    expect(await failure(device.acknowledge(stale))).to.deep.equal({ status: 400, code: 'WRONG_FLOW_STAGE' });
    expect(await failure(device.allow(stale))).to.deep.equal({ status: 400, code: 'WRONG_FLOW_STAGE' });
  });

  it('a login that started its push again lists only the new one (the earlier is superseded)', async function () {
    const at = await atSecondStage(server);
    await initiate(server, at, 'PUSH');
    server.clock.advance(30);
    const again = server.clock.now();
    const second = await initiate(server, at, 'PUSH');

    const push = await onlyPush(device);
    expect(push.requestedAt?.toISOString()).to.equal(again.toISOString());
    await device.approve(push, { passCode: String(second.push_selected_number) });
    const status = await call(server, `/verification-srv/verificationstatus/${second.status_id}`, null, {}, 'GET');
    expect(status.data.status).to.equal('AUTHENTICATED');
  });

  it('two open sign-ins each list their push, oldest first, each with its own time', async function () {
    const first = await atSecondStage(server);
    const firstAsked = server.clock.now();
    await initiate(server, first, 'PUSH');
    server.clock.advance(60);
    const second = await atSecondStage(server);
    await initiate(server, second, 'PUSH');

    const pushes = await device.pushes();
    expect(pushes.map((p) => p.requestedAt?.toISOString())).to.deep.equal([
      firstAsked.toISOString(),
      new Date(firstAsked.getTime() + 60_000).toISOString(),
    ]);
    const now = server.clock.now();
    expect(describePush(pushes[0]!, now)).to.include('requested 1 minute ago');
    expect(describePush(pushes[1]!, now)).to.include('requested now');
  });
});
