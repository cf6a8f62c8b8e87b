/**
 * Issue 12: calls cidaas clients make that Gatehouse now answers: identifier aliases and the
 * PASSWORDLESS usage type at initiation, cancelling an exchange, and the v2 status poll.
 */
import { expect } from 'chai';
import { ALICE_PASSWORD, aliceTotp, outboxCode } from '../oauth/demo-server.js';
import {
  admin,
  atSecondStage,
  call,
  startAccountVerification,
  startDemoServer,
  type DemoServer,
} from '../devices/support.js';
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

  describe('the configured list (graph/user/setup) and configured/check', function () {
    const list = (body: Record<string, string>) =>
      call(server, '/verification-srv/public/graph/user/setup', body).then(
        (r) => (r.data.configured_list as { type: string; mediums: unknown[] }[]) ?? r,
      );

    it('once the user is known (second stage): the truth, with medium ids for medium_id', async function () {
      const at = await atSecondStage(server);
      const types = (await list({ request_id: at.requestId })).map((m) => m.type);
      expect(types).to.include('TOTP').and.include('BACKUPCODE');
      expect(types).to.not.include('PUSH');
      const check = await call(server, '/verification-srv/v2/setup/public/configured/check/PUSH', {
        request_id: at.requestId,
      });
      expect(check.data).to.deep.equal({ type: 'PUSH', configured: false });
      const totp = await call(server, '/verification-srv/v2/setup/public/configured/check/TOTP', {
        request_id: at.requestId,
      });
      expect(totp.data.configured).to.equal(true);
    });

    it('first stage: a real and an unknown identifier get answers of the same shape; the unknown one is stable', async function () {
      const requestId = await firstStage();
      const real = await list({ request_id: requestId, email: 'alice@example.test' });
      expect(real.map((m) => m.type)).to.deep.equal(['PASSWORD']);
      const unknown = await list({ request_id: requestId, email: 'nobody-here@example.test' });
      expect(unknown.map((m) => m.type)).to.include('PASSWORD');
      expect(Object.keys(unknown[0]!)).to.deep.equal(Object.keys(real[0]!));
      expect(await list({ request_id: requestId, email: 'NOBODY-here@example.test' })).to.deep.equal(unknown);
    });

    it('errors: no identifier at the first stage → 400 FIELD_MISSING; an unknown request → 404', async function () {
      const requestId = await firstStage();
      const missing = await call(server, '/verification-srv/public/graph/user/setup', { request_id: requestId });
      expect([missing.status, missing.code]).to.deep.equal([400, 'FIELD_MISSING']);
      const unknown = await call(server, '/verification-srv/public/graph/user/setup', {
        request_id: 'nope',
        email: 'a@b.c',
      });
      expect([unknown.status, unknown.code]).to.deep.equal([404, 'REQUEST_NOT_FOUND']);
      const badMethod = await call(server, '/verification-srv/v2/setup/public/configured/check/NOPE', {
        request_id: requestId,
        email: 'a@b.c',
      });
      expect([badMethod.status, badMethod.code]).to.deep.equal([404, 'METHOD_NOT_FOUND']);
    });
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

  describe('account verification', function () {
    const verified = (medium: 'email' | 'sms') =>
      server.gatehouse.container.cradle.accounts.verified(
        {
          id: server.alice.id,
          username: 'alice',
          email: 'alice@example.test',
          phone: '+15551230000',
          status: 'active',
        },
        medium,
      );

    it('a code to the email address verifies it (no bearer needed for the code); once', async function () {
      expect(await verified('email')).to.equal(false);
      const { data, exchangeId } = await startAccountVerification(server, 'email');
      expect(data.medium_text).to.equal('a***@example.test');
      const wrong = await call(server, '/verification-actions-srv/account', {
        exchange_id: exchangeId,
        code: '000000',
      });
      expect([wrong.status, wrong.code]).to.deep.equal([401, 'VERIFICATION_FAILED']);
      const code = await outboxCode(server, 'alice@example.test', (text) => text.includes('verify'));
      const done = await call(server, '/verification-actions-srv/account', { exchange_id: exchangeId, code });
      expect(done.data).to.deep.equal({ verified: true, medium: 'email', sub: server.alice.id });
      expect(await verified('email')).to.equal(true);
      expect(await verified('sms')).to.equal(false);
      const again = await call(server, '/verification-actions-srv/account', { exchange_id: exchangeId, code });
      expect([again.status, again.code]).to.deep.equal([400, 'EXCHANGE_INVALID']);
    });

    it('five wrong codes end it (429 TOO_MANY_ATTEMPTS); a bad medium is 400; no bearer at initiation is 401', async function () {
      const started = await call(
        server,
        '/verification-actions-srv/account/initiation',
        { sub: server.alice.id, verification_medium: 'sms' },
        admin,
      );
      const exchangeId = (started.data.exchange_id as { exchange_id: string }).exchange_id;
      const answers = [];
      for (let i = 0; i < 5; i++)
        answers.push(
          (await call(server, '/verification-actions-srv/account', { exchange_id: exchangeId, code: '000000' })).code,
        );
      expect(answers).to.deep.equal([...Array(4).fill('VERIFICATION_FAILED'), 'TOO_MANY_ATTEMPTS']);
      const bad = await call(
        server,
        '/verification-actions-srv/account/initiation',
        { sub: server.alice.id, verification_medium: 'fax' },
        admin,
      );
      expect([bad.status, bad.code]).to.deep.equal([400, 'INVALID_FIELD']);
      const anonymous = await call(server, '/verification-actions-srv/account/initiation', {
        sub: server.alice.id,
        verification_medium: 'email',
      });
      expect(anonymous.status).to.equal(401);
    });
  });
});
