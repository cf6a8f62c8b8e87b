/**
 * Initiation and verification with a JSON body are served outside express (decision 11); other
 * bodies go through express. Both must answer alike, and the JSON rules are express.json's.
 */
import { expect } from 'chai';
import { expectError, initiate, passwordUser, dataOf, PASSWORD } from './steps.js';
import { startVerificationApp, type VerificationApp } from './support.js';

describe('verification endpoints: fast path and express', function () {
  this.timeout(20_000);
  let v: VerificationApp;
  before(async () => {
    v = await startVerificationApp();
  });
  after(() => v?.close());

  const INIT = '/verification-srv/authentication/PASSWORD/initiation';
  const raw = (path: string, body: string, headers: Record<string, string>) => {
    let req = v.http.post(path);
    for (const [k, value] of Object.entries(headers)) req = req.set(k, value);
    return req.send(body);
  };

  it('the same login works with a JSON body (fast path) and a form body (express)', async () => {
    const user = await passwordUser(v, 'fastpath');
    for (const type of ['json', 'form'] as const) {
      const requestId = await v.flow();
      const started = await v.http
        .post(INIT)
        .type(type)
        .send({ request_id: requestId, usage_type: 'INITIAL_AUTHENTICATION', identifier: user.username });
      const exchangeId = dataOf<{ exchange_id: { exchange_id: string } }>(started).exchange_id.exchange_id;
      const done = await v.http
        .post('/verification-srv/authentication/PASSWORD/verification')
        .type(type)
        .send({ exchange_id: exchangeId, password: PASSWORD });
      expect(dataOf<{ sub: string }>(done).sub, type).to.equal(user.id);
      expect(done.headers['x-request-id'], type).to.be.a('string');
      expect(done.headers['content-type'], type).to.equal('application/json; charset=utf-8');
    }
  });

  it('the same error envelope from both paths (a missing field)', async () => {
    const requestId = await v.flow();
    const json = await v.http.post(INIT).type('json').send({ request_id: requestId });
    const form = await v.http.post(INIT).type('form').send({ request_id: requestId });
    expectError(json, 400, 'FIELD_MISSING');
    expectError(form, 400, 'FIELD_MISSING');
    const strip = (body: { error: Record<string, unknown> }) => ({
      ...body,
      error: { ...body.error, referenceNumber: 'x' },
    });
    expect(strip(json.body)).to.deep.equal(strip(form.body));
  });

  it('JSON that is not valid, or not an object or array, is 400 INVALID_REQUEST_BODY', async () => {
    for (const body of ['{"request_id":', '"just a string"', '123', 'null', '\u00a0{}']) {
      expectError(await raw(INIT, body, { 'Content-Type': 'application/json' }), 400, 'INVALID_REQUEST_BODY');
    }
  });

  it('an empty JSON body counts as {} (as express.json): the fields are missing', async () => {
    expectError(await raw(INIT, '', { 'Content-Type': 'application/json' }), 400, 'FIELD_MISSING');
  });

  it('a JSON body over 100 kB is 413 PAYLOAD_TOO_LARGE', async () => {
    const big = JSON.stringify({ request_id: 'x'.repeat(101 * 1024) });
    expectError(await raw(INIT, big, { 'Content-Type': 'application/json' }), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('another charset or a compressed body goes to express, which refuses it as before', async () => {
    const body = JSON.stringify({ request_id: 'x' });
    expectError(
      await raw(INIT, body, { 'Content-Type': 'application/json; charset=latin1' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(
      await raw(INIT, body, { 'Content-Type': 'application/json', 'Content-Encoding': 'br-unknown' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('a method name with an escaped character reaches the service decoded (unknown method)', async () => {
    const requestId = await v.flow();
    const res = await v.http
      .post('/verification-srv/authentication/PASS%57ORD/initiation')
      .send({ request_id: requestId, usage_type: 'INITIAL_AUTHENTICATION', identifier: 'nobody' });
    // PASS%57ORD is PASSWORD: the fast path decodes it as express would.
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  });

  it('a malformed escape in the path goes to express: 400 INVALID_REQUEST, not a fault', async () => {
    const res = await raw('/verification-srv/authentication/%E0%A4%A/initiation', '{}', {
      'Content-Type': 'application/json',
    });
    expectError(res, 400, 'INVALID_REQUEST');
  });

  it('initiate() helper still works (used by every other verification test)', async () => {
    const user = await passwordUser(v, 'helper');
    const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    expect(exchangeId).to.be.a('string');
  });
});
