/**
 * Metrics with `server.workers > 1`: the primary serves the metrics listener and adds up what
 * every worker counted (docs/operations.md#metrics), through the plugin's `primary` hook.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { spawnCli } from '../../../test/support/cli.js';
import { REPO_ROOT } from '../../../test/support/paths.js';
import { freePort } from '../../../test/oauth/support.js';
import { basic, MACHINE } from '../../../test/core/observed-app.js';

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

  /** Starts `gatehouse start` with two workers; resolves once the primary and both workers logged. */
  async function startCluster(
    port: number,
    more: Record<string, unknown>,
    metrics: Record<string, unknown>,
  ): Promise<{ metricsPort?: number }> {
    const config = path.join(dir, `gatehouse-${port}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        server: { host: '127.0.0.1', port, workers: 2 },
        database: { url: `sqlite:${path.join(dir, `gatehouse-${port}.db`)}` },
        log: { level: 'info' },
        secrets: { encryption_key: Buffer.alloc(32, 5).toString('base64') },
        maintenance: { purge_interval_seconds: 0 },
        plugins: [
          { path: path.join(REPO_ROOT, 'plugins', 'grant-client-credentials') },
          { path: path.join(REPO_ROOT, 'plugins', 'metrics-prometheus'), options: metrics },
          // The workers' bus (decision 87): a cluster does not start without it.
          { path: path.join(REPO_ROOT, 'plugins', 'peer-bus') },
        ],
        apps: [
          {
            client_id: MACHINE.id,
            client_secret: MACHINE.secret,
            grant_types: ['client_credentials'],
            scopes: ['reports'],
          },
        ],
        ...more,
      }),
    );
    child = spawnCli(['start', '--config', config]);
    let stdout = '';
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    return new Promise((resolve, reject) => {
      child!.stdout!.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        let workers = 0;
        let primary: { metricsPort?: number } | undefined;
        for (const line of stdout.split('\n')) {
          if (!line.startsWith('{')) continue;
          const entry = JSON.parse(line) as { msg?: string; metricsPort?: number };
          if (entry.msg === 'gatehouse primary started') primary = entry;
          if (entry.msg === 'gatehouse listening') workers += 1;
        }
        if (primary && workers === 2) resolve(primary);
      });
      child!.once('exit', (code) => reject(new Error(`gatehouse exited with ${code}: ${stderr}`)));
    });
  }

  async function stopCluster(): Promise<void> {
    const running = child!;
    const code = new Promise<number | null>((resolve) => running.once('exit', (c) => resolve(c)));
    running.kill('SIGTERM');
    expect(await code).to.equal(0);
  }

  const issuedLine = (n: number) =>
    new RegExp(`^gatehouse_tokens_issued_total\\{grant_type="client_credentials"\\} ${n}$`, 'm');

  it("sums the workers on the primary's listener: every token issued, whichever worker served it", async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const primary = await startCluster(port, {}, { port: metricsPort });
    expect(primary.metricsPort).to.equal(metricsPort);

    // A connection each (no keep-alive), so the primary hands them to both workers in turn.
    const issued = 12;
    for (let i = 0; i < issued; i++) expect(await tokenRequest(port)).to.equal(200);
    const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scraped.status).to.equal(200);
    const text = await scraped.text();
    expect(text).to.match(issuedLine(issued));
    expect(text).to.match(
      new RegExp(`^gatehouse_http_requests_total\\{method="POST",route="/oauth/token",status="200"\\} ${issued}$`, 'm'),
    );
    // The workers do not listen on the metrics port themselves; the public port has no /metrics.
    expect((await get(port, '/metrics')).status).to.equal(404);
    await stopCluster();
  });

  it('sums the workers on the main port too (expose: admin): any worker asks the primary', async () => {
    const port = await freePort();
    const token = 'cluster-admin-token-0123456789abcdef0123456789';
    const primary = await startCluster(port, { admin: { token } }, { expose: 'admin' });
    expect(primary.metricsPort).to.equal(undefined);
    const issued = 10;
    for (let i = 0; i < issued; i++) expect(await tokenRequest(port)).to.equal(200);
    // Scrapes on connections of their own reach both workers; each answers for the cluster.
    for (let i = 0; i < 4; i++) {
      const scraped = await get(port, '/metrics', { Authorization: `Bearer ${token}` });
      expect(scraped.status).to.equal(200);
      expect(scraped.body).to.match(issuedLine(issued));
    }
    expect((await get(port, '/metrics')).status).to.equal(401);
    await stopCluster();
  });
});

/** GET on a connection of its own. */
function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, agent: false, headers: { ...headers, Connection: 'close' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.once('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.once('error', reject);
    req.end();
  });
}

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
