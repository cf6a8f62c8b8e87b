/**
 * Issue 8: requests anyone can make without an account must not write rows without bound.
 * 500 token requests with made-up client ids, and 100 initiations on one request_id, measured
 * in rows of the events and exchanges tables.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startVerificationApp, type VerificationApp } from './support.js';
import { expectError, passwordUser } from './steps.js';

describe('verification: bounded writes from unauthenticated requests', () => {
  let v: VerificationApp;
  before(async () => {
    v = await startVerificationApp();
  });
  after(() => v.close());

  const rows = async (sql: string, params: Record<string, unknown> = {}) =>
    Number((await v.gatehouse.container.cradle.sql.one<{ n: unknown }>(sql, params))!.n);

  it('500 token requests with random client ids write one aggregated event row, counting 500', async () => {
    const before = await rows('SELECT COUNT(*) AS n FROM events');
    for (let i = 0; i < 500; i++) {
      const res = await v.http
        .post('/oauth/token')
        .type('form')
        .send({ grant_type: 'client_credentials', client_id: randomUUID(), client_secret: 'x'.repeat(40) });
      expect(res.status).to.equal(401);
      expect(res.body.error).to.equal('invalid_client');
    }
    // One row per address and minute: two if the test straddled a minute.
    expect((await rows('SELECT COUNT(*) AS n FROM events')) - before).to.be.within(1, 2);
    const { events } = v.gatehouse.container.cradle;
    expect(await events.count({ types: ['client_auth.failure'] })).to.equal(500);
  });

  it('a flow takes verification.max_initiations_per_flow initiations, then 429 TOO_MANY_INITIATIONS', async () => {
    const user = await passwordUser(v, 'bounded');
    const requestId = await v.flow();
    const initiate = (identifier: string) =>
      v.http
        .post('/verification-srv/authentication/PASSWORD/initiation')
        .send({ request_id: requestId, usage_type: 'INITIAL_AUTHENTICATION', identifier });
    const statuses: number[] = [];
    // Real and unknown identifiers alike: the cap must not tell them apart.
    for (let i = 0; i < 100; i++) statuses.push((await initiate(i % 2 ? user.username : `nobody-${i}`)).status);
    expect(statuses.slice(0, 20).every((s) => s === 200)).to.equal(true);
    expect(statuses.slice(20).every((s) => s === 429)).to.equal(true);
    expectError(await initiate(user.username), 429, 'TOO_MANY_INITIATIONS');
    expect(await rows('SELECT COUNT(*) AS n FROM exchanges WHERE flow_id = :id', { id: requestId })).to.equal(20);
    // The ten unknown-identifier initiations share a row.
    const phantom = await rows(
      `SELECT COUNT(*) AS n FROM events WHERE type = 'verification.initiated' AND user_id IS NULL`,
    );
    expect(phantom).to.be.within(1, 2);
  });
});
