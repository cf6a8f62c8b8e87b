/**
 * Issue 12: calls cidaas clients make that Gatehouse now answers: identifier aliases and the
 * PASSWORDLESS usage type at initiation, cancelling an exchange, and the v2 status poll.
 */
import { expect } from 'chai';
import { ALICE_PASSWORD, aliceTotp, outboxCode } from '../oauth/demo-server.js';
import { admin, atSecondStage, call, startDemoServer, type DemoServer } from '../devices/support.js';
import { Browser, loginRequestId } from '../oauth/support.js';
import { DEMO_SPA, startAuthorization } from '../oauth/demo-server.js';

describe('cidaas-style verification calls (issue 12)', function () {
  let server: DemoServer;

  before(async function () {
    server = await startDemoServer();
  });
  after(() => server?.close());

  async function firstStage() {
    const browser = new Browser(server);
    return loginRequestId((await startAuthorization(browser, server, DEMO_SPA)).location);
  }

  for (const [field, value] of [
    ['username', 'alice'],
    ['email', 'alice@example.test'],
    ['mobile_number', '+15551230000'],
  ] as const) {
    it(`initiation names the user by ${field}, as cidaas clients do`, async function () {
      const requestId = await firstStage();
      const started = await call(server, '/verification-srv/authentication/PASSWORD/initiation', {
        request_id: requestId,
        usage_type: 'INITIAL_AUTHENTICATION',
        [field]: value,
      });
      expect(started.status, JSON.stringify(started)).to.equal(200);
      const verified = await call(server, '/verification-srv/authentication/PASSWORD/verification', {
        exchange_id: (started.data.exchange_id as { exchange_id: string }).exchange_id,
        password: ALICE_PASSWORD,
      });
      expect(verified.status, JSON.stringify(verified)).to.equal(200);
      expect(verified.data.sub).to.equal(server.alice.id);
    });
  }

  it('usage_type PASSWORDLESS_AUTHENTICATION is a first stage; an unknown usage_type is 400 INVALID_FIELD', async function () {
    const requestId = await firstStage();
    const started = await call(server, '/verification-srv/authentication/PASSWORD/initiation', {
      request_id: requestId,
      usage_type: 'PASSWORDLESS_AUTHENTICATION',
      identifier: 'alice',
    });
    expect(started.status).to.equal(200);
    const bogus = await call(server, '/verification-srv/authentication/PASSWORD/initiation', {
      request_id: requestId,
      usage_type: 'SOMETHING_ELSE',
      identifier: 'alice',
    });
    expect([bogus.status, bogus.code]).to.deep.equal([400, 'INVALID_FIELD']);
  });

  it('cancel: the exchange and its status end CANCELLED; a proof afterwards is refused; an unknown exchange is 404', async function () {
    const at = await atSecondStage(server);
    const started = await call(server, '/verification-srv/authentication/TOTP/initiation', {
      request_id: at.requestId,
      usage_type: 'MULTIFACTOR_AUTHENTICATION',
      sub: server.alice.id,
    });
    const exchangeId = (started.data.exchange_id as { exchange_id: string }).exchange_id;
    const cancelled = await call(server, '/verification-srv/authentication/TOTP/cancel', {
      exchange_id: exchangeId,
      reason: 'user_cancelled',
    });
    expect(cancelled.status, JSON.stringify(cancelled)).to.equal(200);
    expect(cancelled.data.status).to.equal('CANCELLED');
    const status = await call(
      server,
      `/verification-srv/v2/notification/status/${started.data.status_id as string}`,
      {},
    );
    expect(status.data.status).to.equal('CANCELLED');
    const late = await call(server, '/verification-srv/authentication/TOTP/verification', {
      exchange_id: exchangeId,
      pass_code: await aliceTotp(server),
    });
    expect([late.status, late.code]).to.deep.equal([400, 'EXCHANGE_INVALID']);
    const unknown = await call(server, '/verification-srv/authentication/TOTP/cancel', { exchange_id: 'nope' });
    expect([unknown.status, unknown.code]).to.deep.equal([404, 'EXCHANGE_INVALID']);
    const missing = await call(server, '/verification-srv/authentication/TOTP/cancel', {});
    expect(missing.status).to.equal(400);
  });

  it('the v2 status poll (POST) answers as the status GET', async function () {
    const at = await atSecondStage(server);
    const started = await call(server, '/verification-srv/authentication/TOTP/initiation', {
      request_id: at.requestId,
      usage_type: 'MULTIFACTOR_AUTHENTICATION',
      sub: server.alice.id,
    });
    const id = started.data.status_id as string;
    const viaPost = await call(server, `/verification-srv/v2/notification/status/${id}`, {});
    const viaGet = await call(server, `/verification-srv/verificationstatus/${id}`, null, {}, 'GET');
    expect(viaPost.data).to.deep.equal(viaGet.data);
    const unknown = await call(server, '/verification-srv/v2/notification/status/nope', {});
    expect([unknown.status, unknown.code]).to.deep.equal([404, 'STATUS_NOT_FOUND']);
  });

  describe('enrollment as cidaas clients do it', function () {
    const setup = (step: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
      call(server, `/verification-actions-srv/setup/SMS/${step}`, body, headers);

    it('initiation (mobile_number) answers an exchange_id; the code confirms with it and no bearer, once', async function () {
      const started = await setup('initiation', { sub: server.alice.id, mobile_number: '+15557654321' }, admin);
      expect(started.status, JSON.stringify(started)).to.equal(200);
      const exchangeId = (started.data.exchange_id as { exchange_id: string }).exchange_id;
      expect(exchangeId).to.be.a('string');
      const wrong = await setup('verification', { exchange_id: exchangeId, pass_code: '000000' });
      expect([wrong.status, wrong.code]).to.deep.equal([401, 'VERIFICATION_FAILED']);
      const confirmed = await setup('verification', {
        exchange_id: exchangeId,
        pass_code: await outboxCode(server, '+15557654321'),
      });
      expect(confirmed.status, JSON.stringify(confirmed)).to.equal(200);
      expect(confirmed.data.medium_text).to.be.a('string');
      const again = await setup('verification', { exchange_id: exchangeId, pass_code: '123456' });
      expect(again.status).to.be.oneOf([400, 401]);
    });

    it('an unknown exchange_id, or one of another method, is 400 EXCHANGE_INVALID; without either, 401', async function () {
      const started = await setup('initiation', { sub: server.alice.id, mobile_number: '+15557654322' }, admin);
      const exchangeId = (started.data.exchange_id as { exchange_id: string }).exchange_id;
      const otherMethod = await call(server, '/verification-actions-srv/setup/EMAIL/verification', {
        exchange_id: exchangeId,
        pass_code: '123456',
      });
      expect([otherMethod.status, otherMethod.code]).to.deep.equal([400, 'EXCHANGE_INVALID']);
      const unknown = await setup('verification', { exchange_id: 'not-a-setup', pass_code: '123456' });
      expect([unknown.status, unknown.code]).to.deep.equal([400, 'EXCHANGE_INVALID']);
      const anonymous = await setup('verification', { pass_code: '123456' });
      expect(anonymous.status).to.equal(401);
    });
  });
});
