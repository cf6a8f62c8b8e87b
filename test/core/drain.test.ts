/**
 * Issue 15: shutting down while password verifications are queued for hashing. Requests already
 * accepted are answered, hashing still queued runs, and only then is the database closed: no
 * 5xx, no fault in the log, even when server.shutdown_timeout_ms cuts the connections first.
 */
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '@gatehouse-auth/core';
import {
  ALICE_PASSWORD,
  DEMO_SPA,
  startAuthorization,
  startDemoServer,
  type DemoServer,
} from '../oauth/demo-server.js';
import { call } from '../devices/support.js';
import { Browser, loginRequestId } from '../oauth/support.js';
import { heavyWorkLoad } from '../../core/dist/services.js';

/** A pino destination that keeps every entry at warn or above. */
function capturedLogs() {
  const entries: { level: number; msg?: string; err?: { message?: string } }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        const entry = JSON.parse(line) as (typeof entries)[number];
        if (entry.level >= 40) entries.push(entry);
      }
      done();
    },
  });
  return { entries, logger: createLogger('info', stream) };
}

/** Real argon2id work, so that a burst of verifications queues behind the hashing limiter. */
const HASH_COST = { memory_cost: 19 * 1024, time_cost: 2 };
const CONCURRENT = 16;

describe('shutdown drains password verifications before closing the database (issue 15)', function () {
  this.timeout(60_000);

  async function exchanges(server: DemoServer, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const browser = new Browser(server);
      const requestId = loginRequestId((await startAuthorization(browser, server, DEMO_SPA)).location);
      const started = await call(server, '/verification-srv/authentication/PASSWORD/initiation', {
        request_id: requestId,
        usage_type: 'INITIAL_AUTHENTICATION',
        username: 'alice',
      });
      expect(started.status, JSON.stringify(started)).to.equal(200);
      ids.push((started.data.exchange_id as { exchange_id: string }).exchange_id);
    }
    return ids;
  }

  /** Sends every verification at once, shuts down once the first is answered; resolves with the outcomes. */
  async function verifyThenShutDown(server: DemoServer, ids: string[]) {
    const outcomes = ids.map((exchangeId) =>
      fetch(server.url('/verification-srv/authentication/PASSWORD/verification'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Connection: 'close' },
        body: JSON.stringify({ exchange_id: exchangeId, password: ALICE_PASSWORD }),
      }).then(
        (res) => res.status,
        () => 'cut' as const,
      ),
    );
    let answered = 0;
    for (const outcome of outcomes) void outcome.then(() => (answered += 1));
    await Promise.race(outcomes);
    // "Accepted" means the server has every request: answered, hashing or queued for hashing. On a
    // busy machine the last connections may still be opening when the first answer arrives.
    for (let waited = 0; waited < 5000; waited += 10) {
      const { running, waiting } = heavyWorkLoad();
      if (answered + running + waiting >= ids.length) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const shutdown = server.close();
    const answers = await Promise.all(outcomes);
    await shutdown;
    return answers;
  }

  it('answers every accepted verification, then closes: no 5xx, no fault logged', async () => {
    const logs = capturedLogs();
    const server = await startDemoServer({ hashCost: HASH_COST, logger: logs.logger });
    const ids = await exchanges(server, CONCURRENT);
    const answers = await verifyThenShutDown(server, ids);
    expect(
      answers.filter((a) => a !== 200),
      String(answers),
    ).to.deep.equal([]);
    expect(logs.entries.filter((e) => e.level >= 50)).to.deep.equal([]);
  });

  it('when shutdown_timeout_ms cuts the connections, the cut requests still finish before the database closes', async () => {
    const logs = capturedLogs();
    const server = await startDemoServer({
      hashCost: HASH_COST,
      logger: logs.logger,
      configure: (config) => (config.server.shutdown_timeout_ms = 50),
    });
    const ids = await exchanges(server, CONCURRENT);
    const answers = await verifyThenShutDown(server, ids);
    expect(
      answers.filter((a) => typeof a === 'number' && a >= 500),
      String(answers),
    ).to.deep.equal([]);
    expect(answers, 'some requests were cut').to.include('cut');
    expect(logs.entries.filter((e) => e.level >= 50)).to.deep.equal([]);
  });
});
