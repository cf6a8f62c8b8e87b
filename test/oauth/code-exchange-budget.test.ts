/**
 * Issue 15: the SQL statements of an authorization-code exchange with a refresh token and an ID
 * token: the code and its grant in one read, the conditional consume, and both tokens in one
 * INSERT. This test keeps the figure from creeping back up.
 */
import { expect } from 'chai';
import { countStatements } from '@gatehouse-auth/testing';
import { obtainCode, redeem, startServer, type OAuthServer } from './support.js';

/** Five before issue 15 (the grant read again by issue(), a statement per token); three after. */
const BUDGET = 3;

describe('SQL statements per code exchange (issue 15)', function () {
  this.timeout(30_000);
  let server: OAuthServer;
  before(async () => (server = await startServer()));
  after(() => server?.close());

  it(`a code exchange with refresh and ID tokens runs at most ${BUDGET} statements`, async () => {
    const user = await server.user();
    // The first token of a new database creates its signing keys: not the steady state.
    expect((await redeem(server, await obtainCode(server, user))).status).to.equal(200);
    const got = await obtainCode(server, user);
    await server.gatehouse.idle();
    const counter = countStatements(server.gatehouse.container.cradle.sql.driver, { keepText: true });
    const res = await redeem(server, got);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include.keys('access_token', 'refresh_token', 'id_token');
    await server.gatehouse.idle();
    expect(counter.n, `statements:\n${counter.log.join('\n')}`).to.be.at.most(BUDGET);
  });
});
