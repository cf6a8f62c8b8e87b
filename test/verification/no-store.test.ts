/**
 * Issue 8: every answer of the verification and setup APIs carries `Cache-Control: no-store`,
 * since they carry exchange and status ids, TOTP seeds and QR codes, and backup codes. Both the
 * fast JSON path and express (forms) are checked, successes and errors alike.
 */
import { expect } from 'chai';
import type { Response } from 'supertest';
import { startVerificationApp, type VerificationApp } from './support.js';
import { continueLogin, passwordUser, PASSWORD, setup, verify, type TestUser } from './steps.js';

function expectNoStore(res: Response, what: string): void {
  expect(res.headers['cache-control'], what).to.equal('no-store');
}

describe('verification: Cache-Control no-store on every answer', () => {
  let v: VerificationApp;
  let user: TestUser;

  before(async () => {
    v = await startVerificationApp();
    user = await passwordUser(v, 'nostore');
  });
  after(() => v.close());

  it('initiation, verification, status and continuation (JSON and form)', async () => {
    const requestId = await v.flow();
    const body = { request_id: requestId, usage_type: 'INITIAL_AUTHENTICATION', identifier: user.username };
    const json = await v.http.post('/verification-srv/authentication/PASSWORD/initiation').send(body);
    expectNoStore(json, 'initiation (JSON, fast path)');
    const form = await v.http.post('/verification-srv/authentication/PASSWORD/initiation').type('form').send(body);
    expectNoStore(form, 'initiation (form, express)');
    const exchangeId = (form.body.data as { exchange_id: { exchange_id: string } }).exchange_id.exchange_id;
    const verified = await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD });
    expectNoStore(verified, 'verification');
    const statusId = (verified.body.data as { status_id: string }).status_id;
    expectNoStore(await v.http.get(`/verification-srv/verificationstatus/${statusId}`), 'status');
    expectNoStore(await continueLogin(v, { requestId, status_id: statusId }), 'continuation');
  });

  it('errors of both paths', async () => {
    expectNoStore(await verify(v, 'PASSWORD', { exchange_id: 'nope', password: 'x' }), 'verification error');
    const res = await v.http.post('/verification-srv/authentication/PASSWORD/verification').type('form').send({});
    expectNoStore(res, 'form verification error');
    expectNoStore(await v.http.get('/verification-srv/nothing-here'), '404');
  });

  it('setup answers: the TOTP seed and QR code, backup codes, the method list', async () => {
    expectNoStore(await setup(v, 'TOTP', 'initiation', { sub: user.id }), 'TOTP seed');
    expectNoStore(await setup(v, 'BACKUPCODE', 'initiation', { sub: user.id }), 'backup codes');
    expectNoStore(await setup(v, 'TOTP', 'verification', { sub: user.id, pass_code: '000000' }), 'setup error');
    const list = await v.http
      .get(`/verification-actions-srv/setup/users/${user.id}/methods`)
      .set('Authorization', 'Bearer test-admin-token-0123456789abcdef0123456789');
    expectNoStore(list, 'method list');
  });
});
