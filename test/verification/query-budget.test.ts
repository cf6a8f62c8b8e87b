/**
 * Issue 15: how many SQL statements a TOTP pair (initiation + verification, second stage, the
 * demo config's four FDS rules) costs. The bench reports the same figure; this test keeps it
 * from creeping back up.
 */
import { expect } from 'chai';
import { aliceTotp } from '../oauth/demo-server.js';
import { atSecondStage, call, initiate, startDemoServer, type DemoServer } from '../devices/support.js';

type Driver = DemoServer['gatehouse']['container']['cradle']['sql']['driver'];

/** Counts every statement the driver runs, those inside transactions too; `log` keeps their text. */
export function countStatements(driver: Driver): { n: number; log: string[] } {
  const counter = { n: 0, log: [] as string[] };
  const wrap = (d: Driver): Driver => {
    const query = d.query.bind(d);
    const transaction = d.transaction.bind(d);
    // Every argument passed on: the SQLite driver's own transaction calls query with a third.
    d.query = ((...args: Parameters<Driver['query']>) => {
      counter.n++;
      counter.log.push(args[0].replace(/\s+/g, ' ').slice(0, 90));
      return query(...args);
    }) as Driver['query'];
    d.transaction = ((work: (bound: Driver) => Promise<unknown>) =>
      transaction((bound) => work(bound === d ? bound : wrap(bound)))) as Driver['transaction'];
    return d;
  };
  wrap(driver);
  return counter;
}

/** The budget: 45 before issue 15 (one history query per rule question, a row per verdict); 24 after. */
const BUDGET = 24;

describe('SQL statements per TOTP pair (issue 15)', function () {
  this.timeout(30_000);
  let server: DemoServer;
  before(async () => (server = await startDemoServer()));
  after(() => server?.close());

  it(`initiation + verification with the four FDS rules run at most ${BUDGET} statements`, async () => {
    const at = await atSecondStage(server);
    const counter = countStatements(server.gatehouse.container.cradle.sql.driver);
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
