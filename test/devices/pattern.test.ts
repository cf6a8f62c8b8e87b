/**
 * Issue 10: PATTERN through the simulator. The pattern is set up per device; the push goes to
 * the device that holds one; a wrong pattern fails and counts, the right one ends in tokens
 * with amr swk+pin; removing the device removes its pattern.
 */
import { expect } from 'chai';
import {
  admin,
  atSecondStage,
  boundDevice,
  call,
  idTokenAfter,
  removeDevice,
  failure,
  initiate,
  onlyPush,
  startDemoServer,
  type DemoServer,
  methodOf,
} from './support.js';

const PATTERN = 'BLUE[1,5,9,6]';

describe('PATTERN through the simulator (issue 10)', function () {
  let server: DemoServer;

  before(async function () {
    server = await startDemoServer();
  });
  after(() => server?.close());
  afterEach(() => server.clock.advance(1801));

  const setUp = (deviceId: string, pattern = PATTERN) =>
    call(
      server,
      '/verification-actions-srv/setup/PATTERN/initiation',
      { sub: server.alice.id, device_id: deviceId, pattern },
      admin,
    );

  it('is set up per device: a malformed pattern is 400 INVALID_FIELD, another user’s device 404 DEVICE_NOT_FOUND', async function () {
    const phone = await boundDevice(server, { name: 'Pattern phone' });
    const short = await setUp(phone.deviceId, 'RED[1,2]');
    expect([short.status, short.code]).to.deep.equal([400, 'INVALID_FIELD']);
    const unknown = await setUp('no-such-device-42');
    expect([unknown.status, unknown.code]).to.deep.equal([404, 'DEVICE_NOT_FOUND']);
    await removeDevice(server, phone.deviceId);
  });

  it('the push goes to the device with the pattern; wrong pattern 401, right pattern → tokens with amr swk+pin', async function () {
    const withPattern = await boundDevice(server, { name: 'Pattern phone' });
    expect((await setUp(withPattern.deviceId)).status).to.equal(200);
    // Bound later, so used last: without its own pattern it must not get the push.
    const newer = await boundDevice(server, { name: 'Newer phone' });

    const at = await atSecondStage(server);
    const started = await initiate(server, at, 'PATTERN');
    expect(started.medium_text).to.equal('Pattern phone');
    expect(await newer.pushes()).to.deep.equal([]);
    const push = await onlyPush(withPattern);
    await withPattern.acknowledge(push);
    await withPattern.allow(push);
    expect(await failure(withPattern.verify(push, { passCode: 'BLUE[1,5,9,8]' }))).to.deep.equal({
      status: 401,
      code: 'VERIFICATION_FAILED',
    });
    // The exchange lives on for another try (a wrong pattern is not final, unlike a wrong number).
    const [again] = await withPattern.pushes();
    const verified = await withPattern.verify(again!, { passCode: 'blue[1, 5, 9, 6]' });
    expect(verified.status_id).to.equal(started.status_id);

    expect((await idTokenAfter(server, at, started.status_id, 'PATTERN')).amr).to.include.members([
      'pwd',
      'swk',
      'pin',
    ]);

    // Removing the device removes its pattern: PATTERN is no longer set up.
    await removeDevice(server, withPattern.deviceId);
    expect((await methodOf(server, server.alice.id, 'PATTERN')).enrolled).to.equal(false);
    await removeDevice(server, newer.deviceId);
  });
});
