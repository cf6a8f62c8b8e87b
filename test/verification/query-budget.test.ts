/**
 * Issue 15: how many SQL statements a TOTP pair (initiation + verification, second stage, the
 * demo config's four FDS rules) costs. The bench reports the same figure; this test keeps it
 * from creeping back up.
 */
import { expect } from 'chai';
import { aliceTotp } from '../oauth/demo-server.js';
import { atSecondStage, call, initiate, startDemoServer, type DemoServer } from '../devices/support.js';
import { countStatements } from '@gatehouse-auth/testing';

/** The budget: 45 before issue 15 (one history query per rule question, a row per verdict); 24 after. */
const BUDGET = 24;

describe('SQL statements per TOTP pair (issue 15)', function () {
  this.timeout(30_000);
  let server: DemoServer;
  before(async () => (server = await startDemoServer()));
  after(() => server?.close());

  it(`initiation + verification with the four FDS rules run at most ${BUDGET} statements`, async () => {
    const at = await atSecondStage(server);
    const counter = countStatements(server.gatehouse.container.cradle.sql.driver, { keepText: true });
    const started = await initiate(server, at, 'TOTP');
    const verified = await call(server, '/verification-srv/authentication/TOTP/verification', {
      exchange_id: started.exchange_id.exchange_id,
      pass_code: await aliceTotp(server),
    });
    expect(verified.status, JSON.stringify(verified)).to.equal(200);
    await server.gatehouse.idle();
    expect(counter.n, `statements:\n${counter.log.join('\n')}`).to.be.at.most(BUDGET);
  });
});
