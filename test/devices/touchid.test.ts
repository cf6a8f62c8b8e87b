/**
 * Issue 10: TOUCHID through the simulator. Only a device whose key is bound to a biometric
 * unlock can do it, and only with proofs that claim the unlock (`uv`); the login ends in tokens
 * with amr swk+fpt.
 */
import { expect } from 'chai';
import {
  atSecondStage,
  boundDevice,
  call,
  idTokenAfter,
  removeDevice,
  initiate,
  onlyPush,
  signedCall,
  startDemoServer,
  type DemoServer,
} from './support.js';

describe('TOUCHID through the simulator (issue 10)', function () {
  let server: DemoServer;

  before(async function () {
    server = await startDemoServer();
  });
  after(() => server?.close());

  it('without a biometric-bound device TOUCHID is not set up: 403 METHOD_NOT_ENABLED', async function () {
    const plain = await boundDevice(server, { name: 'Plain phone' });
    const at = await atSecondStage(server);
    const reply = await call(server, '/verification-srv/authentication/TOUCHID/initiation', {
      request_id: at.requestId,
      usage_type: 'MULTIFACTOR_AUTHENTICATION',
      sub: server.alice.id,
    });
    expect([reply.status, reply.code]).to.deep.equal([403, 'METHOD_NOT_ENABLED']);
    expect(await plain.pushes()).to.deep.equal([]);
    await removeDevice(server, plain.deviceId);
  });

  it('a proof without the biometric claim fails (401 VERIFICATION_FAILED); with it, the login ends in tokens with amr swk+fpt', async function () {
    const phone = await boundDevice(server, { name: 'Face ID phone', biometric: true, alg: 'EdDSA' });
    const at = await atSecondStage(server);
    const started = await initiate(server, at, 'TOUCHID');
    expect(started.push_selected_number).to.equal(undefined);
    expect(started.medium_text).to.equal('Face ID phone');
    const push = await onlyPush(phone);
    expect(push.method).to.equal('TOUCHID');
    await phone.acknowledge(push);
    await phone.allow(push);
    const fields = {
      exchange_id: push.exchangeId,
      push_id: push.pushId,
      device_id: phone.deviceId,
      client_id: 'gatehouse-authenticator',
    };
    const noUnlock = await signedCall(server, phone, '/verification-srv/authentication/TOUCHID/verification', fields, {
      nonce: push.challenge,
    });
    expect([noUnlock.status, noUnlock.code]).to.deep.equal([401, 'VERIFICATION_FAILED']);

    const verified = await phone.verify(push, { uv: true });
    expect(verified.status_id).to.equal(started.status_id);
    expect((await idTokenAfter(server, at, started.status_id, 'TOUCHID')).amr).to.include.members([
      'pwd',
      'swk',
      'fpt',
    ]);
  });
});
