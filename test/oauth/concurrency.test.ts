/**
 * Single use under concurrency (checklist §10), on SQLite and on PostgreSQL: parallel
 * redemptions of one code and parallel refreshes with one refresh token. Both are conditional
 * updates in the database; the losers of the race are treated as a replay, which revokes the
 * grant (the grant plugins' READMEs promise exactly that).
 */
import { expect } from 'chai';
import { withPostgresDatabase } from '../support/postgres.js';
import {
  WEB,
  basic,
  expectOAuthError,
  introspect,
  obtainCode,
  postForm,
  redeem,
  startServer,
  type JsonResponse,
  type OAuthServer,
  type TestUser,
} from './support.js';

const N = 8;

/** Status codes counted: `{ 200: 1, 400: 7 }`. */
function tally(responses: JsonResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

function concurrencySuite(databaseUrl: () => string | undefined): void {
  let server: OAuthServer;
  let user: TestUser;

  before(async function () {
    this.timeout(20_000);
    const url = databaseUrl();
    server = await startServer(url ? { databaseUrl: url } : {});
    user = await server.user('race');
  });
  after(() => server?.close());

  it(`${N} parallel redemptions of one code: exactly one 200, the others invalid_grant, and the replay revokes the winner's tokens`, async function () {
    const got = await obtainCode(server, user);
    const responses = await Promise.all(Array.from({ length: N }, () => redeem(server, got)));
    expect(tally(responses), responses.map((r) => r.text).join('\n')).to.deep.equal({ 200: 1, 400: N - 1 });
    for (const r of responses.filter((x) => x.status !== 200)) expectOAuthError(r, 400, 'invalid_grant');
    const winner = responses.find((r) => r.status === 200)!.body as Record<string, string>;
    // Every loser counts as a second redemption: the grant, and so the winner's tokens, are revoked.
    expect(await introspect(server, winner.access_token!)).to.deep.equal({ active: false });
    expect(await introspect(server, winner.refresh_token!)).to.deep.equal({ active: false });
  });

  it(`${N} parallel refreshes with one refresh token: one 200 at most, the others invalid_grant, and the family is revoked`, async function () {
    const tokens = (await redeem(server, await obtainCode(server, user))).body as Record<string, string>;
    const responses = await Promise.all(
      Array.from({ length: N }, () =>
        postForm(
          server,
          '/oauth/token',
          { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
          basic(WEB.id, WEB.secret),
        ),
      ),
    );
    const counts = tally(responses);
    expect(counts[200] ?? 0, JSON.stringify(counts)).to.be.at.most(1);
    // The rotation is a conditional update: exactly one request rotates the token.
    expect(counts, responses.map((r) => r.text).join('\n')).to.deep.equal({ 200: 1, 400: N - 1 });
    for (const r of responses.filter((x) => x.status !== 200)) expectOAuthError(r, 400, 'invalid_grant');
    // Reuse detection: the losers revoked the grant, the winner's new tokens included.
    const winner = responses.find((r) => r.status === 200)!.body as Record<string, string>;
    for (const token of [winner.refresh_token!, winner.access_token!, tokens.refresh_token!, tokens.access_token!]) {
      expect(await introspect(server, token)).to.deep.equal({ active: false });
    }
  });
}

describe('OAuth single use under concurrency (checklist §10)', function () {
  describe('on SQLite', function () {
    concurrencySuite(() => undefined);
  });

  describe('on PostgreSQL', function () {
    const db = withPostgresDatabase();
    concurrencySuite(() => db.url);
  });
});
