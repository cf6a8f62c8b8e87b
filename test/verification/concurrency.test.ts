/**
 * Single use under concurrent requests, enforced by conditional updates in the database: on
 * SQLite and on PostgreSQL (a fresh database per run; skipped with a message when PostgreSQL
 * does not answer, a failure under CI=true).
 */
import { expect } from 'chai';
import type { Response } from 'supertest';
import { withPostgresDatabase } from '../support/postgres.js';
import { startVerificationApp, type VerificationApp } from './support.js';
import {
  atStageTwo,
  continueLogin,
  enrolBackupCodes,
  enrolTotp,
  expectError,
  initiate,
  lastCodeTo,
  passwordStage,
  passwordUser,
  PASSWORD,
  totpCode,
  verify,
  WRONG_PASSWORD,
  type TestUser,
} from './steps.js';

const N = 8;

/** Status codes of the responses, counted: `{ 200: 1, 409: 7 }`. */
function tally(responses: Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

/** Exactly one 200; every other response is the given error. */
function expectOneWinner(responses: Response[], status: number, code: string): void {
  expect(tally(responses), JSON.stringify(responses.map((r) => r.body?.error?.code ?? r.status))).to.deep.equal({
    200: 1,
    [status]: responses.length - 1,
  });
  for (const r of responses.filter((x) => x.status !== 200)) expectError(r, status, code);
}

/** Exactly one 200; the others EXCHANGE_USED (409) or, past the attempt budget, TOO_MANY_ATTEMPTS (429). */
function expectOneWinnerOverBudget(responses: Response[]): void {
  const codes = responses.map((r) => (r.status === 200 ? 200 : r.body?.error?.code));
  expect(
    codes.filter((c) => c === 200),
    JSON.stringify(codes),
  ).to.have.length(1);
  for (const r of responses.filter((x) => x.status !== 200)) {
    if (r.status === 429) expectError(r, 429, 'TOO_MANY_ATTEMPTS');
    else expectError(r, 409, 'EXCHANGE_USED');
  }
  expect(codes.filter((c) => c === 'TOO_MANY_ATTEMPTS').length).to.be.at.most(N - 5);
}

function concurrencySuite(databaseUrl: () => string | undefined): void {
  let v: VerificationApp;

  before(async function () {
    this.timeout(30_000);
    v = await startVerificationApp({ databaseUrl: databaseUrl() });
  });
  after(async () => {
    await v?.close();
  });

  /** Two logins of `user` at stage 2, each with an exchange of `method` (set up one after the other). */
  const twoStageTwoExchanges = async (user: TestUser, method: string): Promise<string[]> => {
    const exchanges: string[] = [];
    for (let i = 0; i < 2; i++) {
      exchanges.push((await initiate(v, method, await atStageTwo(v, user), { sub: user.id })).exchangeId);
    }
    return exchanges;
  };

  // With N above the attempt budget (5), a loser may also find the budget spent before the
  // winner marked the exchange used: 429 TOO_MANY_ATTEMPTS is as correct as 409 for it.
  it(`${N} parallel verifications of one exchange with the right password: one 200, the rest 409 or 429`, async () => {
    const user = await passwordUser(v);
    for (let round = 0; round < 3; round++) {
      const { exchangeId, statusId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
      const responses = await Promise.all(
        Array.from({ length: N }, () => verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD })),
      );
      expectOneWinnerOverBudget(responses);
      expect(responses.find((r) => r.status === 200)!.body.data).to.deep.equal({ status_id: statusId, sub: user.id });
    }
  });

  it(`${N} parallel verifications of one exchange with the right SMS code: one 200, the rest 409 or 429`, async () => {
    const user = await passwordUser(v);
    for (let round = 0; round < 3; round++) {
      const { exchangeId } = await initiate(v, 'SMS', await v.flow(), { identifier: user.username });
      const code = await lastCodeTo(user.phone, 'sms');
      const responses = await Promise.all(
        Array.from({ length: N }, () => verify(v, 'SMS', { exchange_id: exchangeId, pass_code: code })),
      );
      expectOneWinnerOverBudget(responses);
    }
  });

  it(`${N} parallel continuations with one status_id: one succeeds, the rest 409 STATUS_USED`, async () => {
    const user = await passwordUser(v);
    for (let round = 0; round < 3; round++) {
      const requestId = await v.flow();
      const statusId = await passwordStage(v, requestId, user);
      const responses = await Promise.all(
        Array.from({ length: N }, () => continueLogin(v, { requestId, status_id: statusId })),
      );
      expectOneWinner(responses, 409, 'STATUS_USED');
      const flow = (await v.gatehouse.container.cradle.flows.get(requestId))!;
      expect(flow).to.include({ stage: 1, userId: user.id });
      expect(flow.methods).to.deep.equal(['PASSWORD']);
    }
  });

  it(`${N} parallel initiations in different logins all succeed`, async () => {
    const user = await passwordUser(v);
    const flows: string[] = [];
    for (let i = 0; i < N; i++) flows.push(await v.flow());
    const responses = await Promise.all(
      flows.map((requestId) =>
        v.http
          .post('/verification-srv/authentication/PASSWORD/initiation')
          .send({ request_id: requestId, usage_type: 'INITIAL_AUTHENTICATION', identifier: user.username }),
      ),
    );
    expect(tally(responses)).to.deep.equal({ 200: N });
  });

  it('the same backup code in two logins at once: exactly one succeeds', async () => {
    const user = await passwordUser(v);
    const codes = await enrolBackupCodes(v, user.id);
    for (const code of codes.slice(0, 3)) {
      const exchanges = await twoStageTwoExchanges(user, 'BACKUPCODE');
      const responses = await Promise.all(
        exchanges.map((exchangeId) => verify(v, 'BACKUPCODE', { exchange_id: exchangeId, pass_code: code })),
      );
      expectOneWinner(responses, 401, 'VERIFICATION_FAILED');
    }
  });

  it('the same TOTP code in two logins at once: exactly one succeeds', async () => {
    const user = await passwordUser(v);
    const secret = await enrolTotp(v, user.id);
    const exchanges = await twoStageTwoExchanges(user, 'TOTP');
    const code = await totpCode(secret, 1);
    const responses = await Promise.all(
      exchanges.map((exchangeId) => verify(v, 'TOTP', { exchange_id: exchangeId, pass_code: code })),
    );
    expectOneWinner(responses, 401, 'VERIFICATION_FAILED');
  });

  it('parallel wrong proofs burn the exchange once: the right proof afterwards → 429', async () => {
    const user = await passwordUser(v);
    const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    await Promise.all(
      Array.from({ length: N }, () => verify(v, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD })),
    );
    const exchange = (await v.gatehouse.container.cradle.exchanges.find(exchangeId))!;
    expect(exchange).to.include({ attempts: 5, revokedReason: 'attempts' });
    expectError(await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }), 429, 'TOO_MANY_ATTEMPTS');
  });

  it(`${N} parallel wrong proofs get at most max_attempts (5) answers of 401, the rest 429`, async () => {
    const user = await passwordUser(v);
    const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow(), { identifier: user.username });
    const responses = await Promise.all(
      Array.from({ length: N }, () => verify(v, 'PASSWORD', { exchange_id: exchangeId, password: WRONG_PASSWORD })),
    );
    expect(tally(responses)).to.deep.equal({ 401: 5, 429: N - 5 });
  });
}

describe('verification concurrency (SQLite)', () => {
  concurrencySuite(() => undefined);
});

describe('verification concurrency (PostgreSQL)', () => {
  const db = withPostgresDatabase();
  concurrencySuite(() => db.url);
});
