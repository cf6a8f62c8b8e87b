/**
 * Metrics with `server.workers > 1`: the primary serves the metrics listener and adds up what
 * every worker counted (docs/operations.md#metrics).
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { spawnCli } from '../support/cli.js';
import { REPO_ROOT } from '../support/paths.js';
import { freePort } from '../oauth/support.js';
import { basic, MACHINE } from './observed-app.js';

describe('metrics in a cluster (server.workers: 2)', function () {
  this.timeout(60_000);
  let dir: string;
  let child: ChildProcess | undefined;

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-metrics-cluster-'));
  });
  after(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('sums the workers: every token issued, whichever worker served it, in one scrape', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const config = path.join(dir, 'gatehouse.json');
    writeFileSync(
      config,
      JSON.stringify({
        server: { host: '127.0.0.1', port, workers: 2 },
        database: { url: `sqlite:${path.join(dir, 'gatehouse.db')}` },
        log: { level: 'info' },
        secrets: { encryption_key: Buffer.alloc(32, 5).toString('base64') },
        maintenance: { purge_interval_seconds: 0 },
        metrics: { enabled: true, port: metricsPort },
        plugins: [{ path: path.join(REPO_ROOT, 'plugins', 'grant-client-credentials') }],
        apps: [
          {
            client_id: MACHINE.id,
            client_secret: MACHINE.secret,
            grant_types: ['client_credentials'],
            scopes: ['reports'],
          },
        ],
      }),
    );
    child = spawnCli(['start', '--config', config]);
    let stdout = '';
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    let workers = 0;
    let primary: { metricsPort?: number } | undefined;
    await new Promise<void>((resolve, reject) => {
      child!.stdout!.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        workers = 0;
        for (const line of stdout.split('\n')) {
          if (!line.startsWith('{')) continue;
          const entry = JSON.parse(line) as { msg?: string; metricsPort?: number };
          if (entry.msg === 'gatehouse primary started') primary = entry;
          if (entry.msg === 'gatehouse listening') workers += 1;
        }
        if (primary && workers === 2) resolve();
      });
      child!.once('exit', (code) => reject(new Error(`gatehouse exited with ${code}: ${stderr}`)));
    });
    expect(primary!.metricsPort).to.equal(metricsPort);

    // A connection each (no keep-alive), so the primary hands them to both workers in turn.
    const issued = 12;
    for (let i = 0; i < issued; i++) expect(await tokenRequest(port)).to.equal(200);
    const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scraped.status).to.equal(200);
    const text = await scraped.text();
    expect(text).to.match(
      new RegExp(`^gatehouse_tokens_issued_total\\{grant_type="client_credentials"\\} ${issued}$`, 'm'),
    );
    expect(text).to.match(
      new RegExp(`^gatehouse_http_requests_total\\{method="POST",route="/oauth/token",status="200"\\} ${issued}$`, 'm'),
    );
    // The workers do not listen on the metrics port themselves; the public port has no /metrics.
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).to.equal(404);

    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child!.once('exit', (c) => resolve(c)));
    expect(code).to.equal(0);
  });
});

/** POST /oauth/token on a connection of its own; resolves with the status. */
function tokenRequest(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/oauth/token',
        method: 'POST',
        agent: false,
        headers: {
          Authorization: basic(MACHINE.id, MACHINE.secret),
          'Content-Type': 'application/x-www-form-urlencoded',
          Connection: 'close',
        },
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode!));
      },
    );
    req.once('error', reject);
    req.end('grant_type=client_credentials');
  });
}
