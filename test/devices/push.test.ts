/**
 * Issue 10: PUSH end to end on the demo config, the device played by the simulator
 * (@gatehouse-auth/authenticator): binding, the inbox, acknowledge → allow → verification with
 * the number, the login continuing to tokens with the device's amr; and every failure row of
 * the device API with its exact status and code.
 */
import { expect } from 'chai';
import { Authenticator, type Push } from '@gatehouse-auth/authenticator';
import {
  admin,
  atSecondStage,
  bindingFor,
  boundDevice,
  call,
  idTokenAfter,
  removeDevice,
  failure,
  initiate,
  onlyPush,
  outboxMessage,
  signedCall,
  startDemoServer,
  type DemoServer,
} from './support.js';

const step = (method: string, name: string) => `/verification-srv/authentication/${method}/push/${name}`;
const VERIFY = '/verification-srv/authentication/PUSH/verification';
/** A two-digit number that is not `shown`: what a user typing a wrong one sends. */
const otherNumber = (shown: number) => String(shown === 99 ? 10 : shown + 1);

describe('PUSH with number matching, through the simulator (issue 10)', function () {
  let server: DemoServer;
  let device: Authenticator;

  before(async function () {
    server = await startDemoServer();
    device = await boundDevice(server, { name: "Alice's phone" });
  });
  after(() => server?.close());
  // Whatever a test left pending is cancelled, so each test's push is the only one.
  // and the clock moves past push-fatigue's windows (5 pushes / 10 min, 2 denials / 30 min).
  afterEach(async function () {
    for (const push of await device.pushes()) await device.cancel(push);
    server.clock.advance(1801);
  });

  const pushFields = (push: Push, d: Authenticator = device) => ({
    exchange_id: push.exchangeId,
    push_id: push.pushId,
    device_id: d.deviceId,
    client_id: 'gatehouse-authenticator',
  });

  it('signs in: the page gets a number, the device acknowledges, allows, picks it, and the login ends in tokens with amr swk+mca', async function () {
    const at = await atSecondStage(server);
    const started = await initiate(server, at, 'PUSH');
    expect(started.push_selected_number).to.be.within(10, 99);
    expect(started.medium_text).to.equal("Alice's phone");

    const push = await onlyPush(device);
    expect(push.method).to.equal('PUSH');
    expect(push.state).to.equal('INITIATED');
    expect(push.context).to.include({ app: 'Gatehouse demo app' });
    expect(push.exchangeId).to.not.equal(started.exchange_id.exchange_id);

    // The login page waits on the status: the acknowledgement answers its long poll at once.
    const waited = Date.now();
    const poll = fetch(server.url(`/verification-srv/verificationstatus/${started.status_id}?wait=20&state=INITIATED`));
    const { context } = await device.acknowledge(push);
    expect(context).to.include({ app: 'Gatehouse demo app' });
    const seen = (await (await poll).json()) as { data: { status: string } };
    expect(seen.data.status).to.equal('PUSH_ACKNOWLEDGED');
    expect(Date.now() - waited).to.be.below(10_000);

    // The device is told to ask for two digits, never the number or any choice of numbers.
    const allowed = await signedCall(server, device, step('PUSH', 'allow'), pushFields(push), {
      nonce: push.challenge,
    });
    expect(allowed.status).to.equal(200);
    expect(Object.keys(allowed.data).sort()).to.deep.equal(['exchange_id', 'number_digits', 'status']);
    expect(allowed.data.number_digits).to.equal(2);
    push.exchangeId = (allowed.data.exchange_id as { exchange_id: string }).exchange_id;
    const verified = await device.verify(push, { passCode: String(started.push_selected_number) });
    expect(verified).to.deep.equal({ status_id: started.status_id, sub: server.alice.id });

    const status = await call(server, `/verification-srv/verificationstatus/${started.status_id}`, null, {}, 'GET');
    expect(status.data.status).to.equal('AUTHENTICATED');
    expect((await idTokenAfter(server, at, started.status_id, 'PUSH')).amr).to.include.members(['pwd', 'swk', 'mca']);
    expect(await device.pushes()).to.deep.equal([]);
  });

  it('a wrong number ends the push: 401 VERIFICATION_FAILED, the status DENIED, the exchange dead, a push.denied event', async function () {
    const at = await atSecondStage(server);
    const started = await initiate(server, at, 'PUSH');
    const push = await onlyPush(device);
    expect(await device.allow(push)).to.deep.equal({ numberDigits: 2 });
    const wrong = otherNumber(started.push_selected_number!);
    const failed = await signedCall(
      server,
      device,
      VERIFY,
      { ...pushFields(push), pass_code: String(wrong) },
      { nonce: push.challenge },
    );
    expect([failed.status, failed.code]).to.deep.equal([401, 'VERIFICATION_FAILED']);
    const status = await call(server, `/verification-srv/verificationstatus/${started.status_id}`, null, {}, 'GET');
    expect(status.data.status).to.equal('DENIED');
    // The right number afterwards is too late.
    const late = await signedCall(
      server,
      device,
      VERIFY,
      { ...pushFields(push), pass_code: String(started.push_selected_number) },
      { nonce: push.challenge },
    );
    expect([late.status, late.code]).to.deep.equal([400, 'EXCHANGE_INVALID']);
    const denied = await server.gatehouse.container.cradle.events.recent({
      types: ['push.denied'],
      userId: server.alice.id,
      limit: 5,
    });
    expect(denied.map((e) => e.reason)).to.include('wrong_number');
  });

  it('a wrong number counts as a denial: two within block_seconds and the next push is refused (403 FDS_BLOCKED)', async function () {
    const at = await atSecondStage(server);
    for (let i = 0; i < 2; i++) {
      const started = await initiate(server, at, 'PUSH');
      const push = await onlyPush(device);
      await device.allow(push);
      const typed = otherNumber(started.push_selected_number!);
      expect(await failure(device.verify(push, { passCode: typed }))).to.deep.equal({
        status: 401,
        code: 'VERIFICATION_FAILED',
      });
    }
    const third = await call(server, '/verification-srv/authentication/PUSH/initiation', {
      request_id: at.requestId,
      usage_type: 'MULTIFACTOR_AUTHENTICATION',
      sub: server.alice.id,
    });
    expect([third.status, third.code]).to.deep.equal([403, 'FDS_BLOCKED']);
    // The refusal is push fatigue's (the clock stood still during this test).
    const verdicts = await server.gatehouse.container.cradle.events.recent({
      types: ['fds.verdict'],
      userId: server.alice.id,
      since: server.clock.now(),
      limit: 50,
    });
    const denials = verdicts.filter((v) => v.outcome === 'deny').map((v) => v.reason);
    expect(denials).to.deep.equal(['push_fatigue.denials']);
    expect(await device.pushes()).to.deep.equal([]);
  });

  it('the number as typed: surrounding spaces are fine; another form of it, or none, is not', async function () {
    const at = await atSecondStage(server);
    const started = await initiate(server, at, 'PUSH');
    const number = String(started.push_selected_number);
    const push = await onlyPush(device);
    await device.allow(push);
    // No pass_code at all is a malformed call, answered before an attempt is spent.
    const missing = await signedCall(server, device, VERIFY, pushFields(push), { nonce: push.challenge });
    expect([missing.status, missing.code]).to.deep.equal([400, 'FIELD_MISSING']);
    expect(await device.verify(push, { passCode: ` ${number} ` })).to.have.property('status_id', started.status_id);

    const again = await atSecondStage(server);
    const next = await initiate(server, again, 'PUSH');
    const second = await onlyPush(device);
    await device.allow(second);
    // "042" is not the number shown: any other text is a wrong number, and final.
    expect(await failure(device.verify(second, { passCode: `0${String(next.push_selected_number)}` }))).to.deep.equal({
      status: 401,
      code: 'VERIFICATION_FAILED',
    });
    const status = await call(server, `/verification-srv/verificationstatus/${next.status_id}`, null, {}, 'GET');
    expect(status.data.status).to.equal('DENIED');
  });

  it('deny: the status is DENIED, the login page learns it, and the exchange is gone (400 EXCHANGE_INVALID)', async function () {
    const at = await atSecondStage(server);
    const started = await initiate(server, at, 'PUSH');
    const push = await onlyPush(device);
    await device.acknowledge(push);
    const before = push.exchangeId;
    await device.deny(push, 'not_me');
    const status = await call(
      server,
      `/verification-srv/verificationstatus/${started.status_id}?wait=1&state=PUSH_ACKNOWLEDGED`,
      null,
      {},
      'GET',
    );
    expect(status.data.status).to.equal('DENIED');
    const again = await signedCall(
      server,
      device,
      step('PUSH', 'allow'),
      { ...pushFields(push), exchange_id: before },
      { nonce: push.challenge },
    );
    expect([again.status, again.code]).to.deep.equal([400, 'EXCHANGE_INVALID']);
    expect(await device.pushes()).to.deep.equal([]);
  });

  it('a step out of order: 409 PUSH_STATE (acknowledge after allow, allow twice)', async function () {
    const at = await atSecondStage(server);
    await initiate(server, at, 'PUSH');
    const push = await onlyPush(device);
    await device.allow(push);
    expect(await failure(device.acknowledge(push))).to.deep.equal({ status: 409, code: 'PUSH_STATE' });
    expect(await failure(device.allow(push))).to.deep.equal({ status: 409, code: 'PUSH_STATE' });
  });

  it('verification before allow: 409 PUSH_NOT_ALLOWED, and nothing is spent', async function () {
    const at = await atSecondStage(server);
    const started = await initiate(server, at, 'PUSH');
    const push = await onlyPush(device);
    await device.acknowledge(push);
    const early = await signedCall(
      server,
      device,
      VERIFY,
      { ...pushFields(push), pass_code: String(started.push_selected_number) },
      { nonce: push.challenge },
    );
    expect([early.status, early.code]).to.deep.equal([409, 'PUSH_NOT_ALLOWED']);
    await device.allow(push);
    expect(await device.verify(push, { passCode: String(started.push_selected_number) })).to.have.property(
      'status_id',
      started.status_id,
    );
  });

  it('each step retires the exchange_id it was called with', async function () {
    const at = await atSecondStage(server);
    await initiate(server, at, 'PUSH');
    const push = await onlyPush(device);
    const inboxId = push.exchangeId;
    await device.acknowledge(push);
    const stale = await signedCall(
      server,
      device,
      step('PUSH', 'allow'),
      { ...pushFields(push), exchange_id: inboxId },
      { nonce: push.challenge },
    );
    expect([stale.status, stale.code]).to.deep.equal([404, 'EXCHANGE_INVALID']);
  });

  describe('the proof', function () {
    let push: Push;
    let started: Awaited<ReturnType<typeof initiate>>;
    beforeEach(async function () {
      const at = await atSecondStage(server);
      started = await initiate(server, at, 'PUSH');
      push = await onlyPush(device);
    });
    afterEach(async function () {
      await device.cancel(push).catch(() => undefined);
    });

    const ack = step('PUSH', 'acknowledge');
    const refused = (reply: { status: number; code: string | undefined }) =>
      expect([reply.status, reply.code]).to.deep.equal([401, 'DEVICE_PROOF_INVALID']);

    it('missing: 401 DEVICE_PROOF_INVALID', async function () {
      refused(await call(server, ack, pushFields(push)));
    });

    it('replayed (the same jti twice): 401 DEVICE_PROOF_INVALID', async function () {
      const first = await signedCall(server, device, step('PUSH', 'acknowledge'), pushFields(push), {
        nonce: push.challenge,
      });
      expect(first.status).to.equal(200);
      const next = (first.data.exchange_id as { exchange_id: string }).exchange_id;
      push.exchangeId = next;
      // The same proof for another call is refused by its path first; for the same path, by its jti.
      refused(await signedCall(server, device, ack, pushFields(push), { proof: first.proof }));
    });

    it('for another call, another body, another challenge, or stale: 401 DEVICE_PROOF_INVALID', async function () {
      const fields = pushFields(push);
      refused(
        await signedCall(server, device, ack, fields, { nonce: push.challenge, signedPath: step('PUSH', 'allow') }),
      );
      refused(
        await signedCall(server, device, ack, fields, {
          nonce: push.challenge,
          signedFields: { ...fields, push_id: 'x' },
        }),
      );
      refused(await signedCall(server, device, ack, fields, { nonce: 'another-challenge' }));
      refused(
        await signedCall(server, device, ack, fields, {
          nonce: push.challenge,
          iat: Math.floor(server.clock.now().getTime() / 1000) - 120,
        }),
      );
      // None of them moved the push on.
      const status = await call(server, `/verification-srv/verificationstatus/${started.status_id}`, null, {}, 'GET');
      expect(status.data.status).to.equal('INITIATED');
    });

    it('signed by another key: 401 DEVICE_PROOF_INVALID', async function () {
      const impostor = await Authenticator.create({ deviceId: device.deviceId, now: () => server.clock.now() });
      const forged = Authenticator.restore({ ...impostor.state(), issuer: server.issuer });
      refused(await signedCall(server, forged, ack, pushFields(push), { nonce: push.challenge }));
    });

    it('a biometric claim (uv) by a key not bound to one: 401 DEVICE_PROOF_INVALID', async function () {
      refused(await signedCall(server, device, ack, pushFields(push), { nonce: push.challenge, uv: true }));
    });
  });

  it('another device on this push: 403 DEVICE_MISMATCH; an unknown device: 404 DEVICE_NOT_FOUND', async function () {
    const other = await boundDevice(server, { name: 'Second phone' });
    const at = await atSecondStage(server);
    await initiate(server, at, 'PUSH', { medium_id: device.deviceId });
    const push = await onlyPush(device);
    expect(await other.pushes()).to.deep.equal([]);
    const mismatch = await signedCall(
      server,
      other,
      step('PUSH', 'acknowledge'),
      { ...pushFields(push), device_id: other.deviceId },
      { nonce: push.challenge },
    );
    expect([mismatch.status, mismatch.code]).to.deep.equal([403, 'DEVICE_MISMATCH']);
    const wrongClient = await signedCall(
      server,
      device,
      step('PUSH', 'acknowledge'),
      { ...pushFields(push), client_id: 'another-app' },
      { nonce: push.challenge },
    );
    expect([wrongClient.status, wrongClient.code]).to.deep.equal([403, 'DEVICE_MISMATCH']);
    const unknown = await signedCall(
      server,
      device,
      step('PUSH', 'acknowledge'),
      { ...pushFields(push), device_id: 'no-such-device-0001' },
      { nonce: push.challenge },
    );
    expect([unknown.status, unknown.code]).to.deep.equal([404, 'DEVICE_NOT_FOUND']);
    await device.cancel(push);
    await removeDevice(server, other.deviceId);
  });

  it('push fatigue: a sixth push within ten minutes is refused (403 FDS_BLOCKED), as is any after two denials', async function () {
    const at = await atSecondStage(server);
    for (let i = 0; i < 5; i++) await initiate(server, at, 'PUSH');
    const start = () =>
      call(server, '/verification-srv/authentication/PUSH/initiation', {
        request_id: at.requestId,
        usage_type: 'MULTIFACTOR_AUTHENTICATION',
        sub: server.alice.id,
      });
    const sixth = await start();
    expect([sixth.status, sixth.code]).to.deep.equal([403, 'FDS_BLOCKED']);
    // Each initiation in a flow retires the one before: only the fifth push is still live.
    expect((await device.pushes()).length).to.equal(1);
    for (const push of await device.pushes()) await device.cancel(push);

    server.clock.advance(601);
    for (let i = 0; i < 2; i++) {
      await initiate(server, at, 'PUSH');
      await device.deny(await onlyPush(device), 'not_me');
    }
    const third = await start();
    expect([third.status, third.code]).to.deep.equal([403, 'FDS_BLOCKED']);
    expect(await device.pushes()).to.deep.equal([]);
  });

  it('a device with a push token is woken through the channel with the push id only (no number, no context)', async function () {
    const woken = await Authenticator.create({ now: () => server.clock.now(), name: 'Pushable phone' });
    await woken.bind((await bindingFor(server, 'PUSH')).binding_url, { pushToken: 'fcm:token-0123456789' });
    const at = await atSecondStage(server);
    await initiate(server, at, 'PUSH', { medium_id: woken.deviceId });
    const push = await onlyPush(woken);
    const sent = await outboxMessage(server, 'fcm:token-0123456789');
    expect(sent.kind).to.equal('push');
    expect(sent.data).to.deep.equal({ push_id: push.pushId, method: 'PUSH', issuer: server.issuer });
    // The token is kept encrypted.
    const rows = await server.gatehouse.container.cradle.sql.select<{ push_token: string }>(
      'SELECT push_token FROM devices WHERE id = :id',
      { id: woken.deviceId },
    );
    expect(rows[0]?.push_token).to.be.a('string').and.not.include('token-0123456789');
    await removeDevice(server, woken.deviceId);
  });

  describe('binding', function () {
    it('a binding code binds one device: again → 404 BINDING_INVALID; a bound device_id → 409 DEVICE_EXISTS', async function () {
      const { binding_url, qr_code } = await bindingFor(server, 'PUSH');
      expect(qr_code).to.match(/^data:image\/png;base64,/);
      const first = await Authenticator.create({ now: () => server.clock.now() });
      await first.bind(binding_url);
      const second = await Authenticator.create({ now: () => server.clock.now() });
      const reuse = await failure(second.bind(binding_url));
      expect([reuse.status, reuse.code]).to.deep.equal([404, 'BINDING_INVALID']);
      const twin = await Authenticator.create({ deviceId: first.deviceId, now: () => server.clock.now() });
      const { binding_url: fresh } = await bindingFor(server, 'PUSH');
      const exists = await failure(twin.bind(fresh));
      expect([exists.status, exists.code]).to.deep.equal([409, 'DEVICE_EXISTS']);
      await removeDevice(server, first.deviceId);
    });

    it('an expired code → 410 BINDING_EXPIRED; a TOUCHID binding refuses a key without a biometric unlock (400)', async function () {
      const { binding_url } = await bindingFor(server, 'PUSH');
      server.clock.advance(601);
      const late = await Authenticator.create({ now: () => server.clock.now() });
      const expired = await failure(late.bind(binding_url));
      expect([expired.status, expired.code]).to.deep.equal([410, 'BINDING_EXPIRED']);
      const touch = await bindingFor(server, 'TOUCHID');
      expect(touch.biometric_required).to.equal(true);
      const plain = await Authenticator.create({ now: () => server.clock.now() });
      const refused = await failure(plain.bind(touch.binding_url));
      expect([refused.status, refused.code]).to.deep.equal([400, 'INVALID_FIELD']);
    });

    it('a proof by another key than the one sent: 401 DEVICE_PROOF_INVALID, and the code stays usable', async function () {
      const { binding_url, binding_code } = await bindingFor(server, 'PUSH');
      const genuine = await Authenticator.create({ now: () => server.clock.now() });
      const other = await Authenticator.create({ deviceId: genuine.deviceId, now: () => server.clock.now() });
      const body = {
        code: binding_code,
        device_id: genuine.deviceId,
        client_id: 'gatehouse-authenticator',
        name: 'Forged',
        public_key: genuine.state().publicJwk,
        biometric: false,
      };
      const signer = Authenticator.restore({ ...other.state(), issuer: server.issuer });
      const reply = await signedCall(server, signer, '/verification-srv/devices/bind', body, { nonce: binding_code });
      expect([reply.status, reply.code]).to.deep.equal([401, 'DEVICE_PROOF_INVALID']);
      await genuine.bind(binding_url);
      await removeDevice(server, genuine.deviceId);
    });
  });

  describe('managing devices', function () {
    it('lists, renames and removes; removal ends the pending push (CANCELLED) and the device can do nothing more', async function () {
      const spare = await boundDevice(server, { name: 'Old phone' });
      const path = `/verification-actions-srv/setup/users/${server.alice.id}/devices`;
      const listed = await call(server, path, null, admin, 'GET');
      const names = (listed.data as unknown as { device_id: string; name: string }[]).map((d) => d.name);
      expect(names).to.include.members(["Alice's phone", 'Old phone']);
      expect(JSON.stringify(listed.data)).to.not.match(/public_key|push_token|"x"/);

      const renamed = await call(server, `${path}/${spare.deviceId}`, { name: 'Drawer phone' }, admin, 'PATCH');
      expect(renamed.status).to.equal(200);
      const blank = await call(server, `${path}/${spare.deviceId}`, { name: '' }, admin, 'PATCH');
      expect([blank.status, blank.code]).to.deep.equal([400, 'INVALID_FIELD']);

      const at = await atSecondStage(server);
      const started = await initiate(server, at, 'PUSH', { medium_id: spare.deviceId });
      const push = await onlyPush(spare);
      const removed = await call(server, `${path}/${spare.deviceId}`, null, admin, 'DELETE');
      expect(removed.status).to.equal(200);
      const status = await call(server, `/verification-srv/verificationstatus/${started.status_id}`, null, {}, 'GET');
      expect(status.data.status).to.equal('CANCELLED');
      const after = await failure(spare.allow(push));
      expect(after.status).to.be.oneOf([400, 404]);
      const gone = await call(server, `${path}/${spare.deviceId}`, null, admin, 'DELETE');
      expect([gone.status, gone.code]).to.deep.equal([404, 'DEVICE_NOT_FOUND']);
    });

    it("a device of another user cannot be named for alice's push: 404 DEVICE_NOT_FOUND", async function () {
      const { id: bob } = await server.gatehouse.container.cradle.users.create({ username: `bob-${Date.now()}` });
      const bobs = await Authenticator.create({ now: () => server.clock.now() });
      await bobs.bind((await bindingFor(server, 'PUSH', bob)).binding_url);
      const at = await atSecondStage(server);
      const reply = await call(server, '/verification-srv/authentication/PUSH/initiation', {
        request_id: at.requestId,
        usage_type: 'MULTIFACTOR_AUTHENTICATION',
        sub: server.alice.id,
        medium_id: bobs.deviceId,
      });
      expect([reply.status, reply.code]).to.deep.equal([404, 'DEVICE_NOT_FOUND']);
      expect(await bobs.pushes()).to.deep.equal([]);
    });
  });
});
