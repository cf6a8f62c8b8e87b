/**
 * Issue 12, the plugin's part: the configured list an app's own login UI shows, and account
 * verification (a code to the user's email address or phone number).
 */
import { expect } from 'chai';
import { outboxCode } from '../../../test/oauth/demo-server.js';
import {
  admin,
  atSecondStage,
  call,
  startAccountVerification,
  startDemoServer,
  type DemoServer,
} from '../../../test/devices/support.js';
import { Browser, loginRequestId } from '../../../test/oauth/support.js';
import { DEMO_SPA, startAuthorization } from '../../../test/oauth/demo-server.js';

describe('cidaas-style calls of the compat-cidaas plugin (issue 12)', function () {
  let server: DemoServer;

  before(async function () {
    server = await startDemoServer();
  });
  after(() => server?.close());

  async function firstStage() {
    const browser = new Browser(server);
    return loginRequestId((await startAuthorization(browser, server, DEMO_SPA)).location);
  }

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
