/**
 * Issue 15: cluster workers on one SQLite file each cache active tokens; a revocation answered
 * by one worker reaches the others through the primary (IPC) before the answer is sent.
 * Connections go round-robin to the workers, so a fresh connection per request visits both.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { spawnCli } from '../support/cli.js';
import { freePort } from '../oauth/support.js';

const CLIENT = { id: 'machine', secret: 'cluster-client-secret-0123456789abcdef0123' };
const AUTH = `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString('base64')}`;

/** POSTs a form on a connection of its own (so the primary hands it to the next worker). */
function post(port: number, urlPath: string, form: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = new URLSearchParams(form).toString();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        method: 'POST',
        agent: false,
        headers: { Authorization: AUTH, 'Content-Type': 'application/x-www-form-urlencoded' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('cluster workers on SQLite share revocations (issue 15)', function () {
  this.timeout(60_000);
  let dir: string;
  let child: ChildProcess | undefined;
  let port: number;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-cluster-'));
    port = await freePort();
    const config = path.join(dir, 'gatehouse.yaml');
    writeFileSync(
      config,
      JSON.stringify({
        issuer: `http://127.0.0.1:${port}`,
        server: { host: '127.0.0.1', port, workers: 2 },
        database: { url: `sqlite:${path.join(dir, 'gatehouse.db')}` },
        log: { level: 'warn' },
        secrets: { encryption_key: Buffer.alloc(32, 3).toString('base64') },
        // The workers' bus (decision 87): the primary relays their news.
        plugins: [{ name: '@gatehouse-auth/grant-client-credentials' }, { name: '@gatehouse-auth/peer-bus' }],
        apps: [
          {
            client_id: CLIENT.id,
            client_secret: CLIENT.secret,
            grant_types: ['client_credentials'],
            scopes: ['api'],
            token_format: 'opaque',
          },
        ],
      }),
    );
    child = spawnCli(['start', '--config', config]);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const deadline = Date.now() + 30_000;
    // Ready when both workers answer: two fresh connections in a row get 200.
    for (let ok = 0; ok < 4;) {
      if (Date.now() > deadline) throw new Error(`the cluster did not start: ${stderr}`);
      const res = await new Promise<number>((resolve) =>
        http
          .get({ host: '127.0.0.1', port, path: '/health/ready', agent: false }, (r) => resolve(r.resume().statusCode!))
          .on('error', () => resolve(0)),
      );
      ok = res === 200 ? ok + 1 : 0;
      if (res !== 200) await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('a token cached by both workers is inactive on both right after one revokes it, 20 times out of 20', async () => {
    const stale: string[] = [];
    for (let i = 0; i < 20; i++) {
      const issued = await post(port, '/oauth/token', { grant_type: 'client_credentials' });
      expect(issued.status, issued.body).to.equal(200);
      const token = (JSON.parse(issued.body) as { access_token: string }).access_token;
      // Four fresh connections: each worker introspects (and caches) it at least once.
      for (let k = 0; k < 4; k++) {
        const seen = await post(port, '/token/introspect', { token });
        expect(JSON.parse(seen.body).active, 'active before the revocation').to.equal(true);
      }
      expect((await post(port, '/oauth2/revoke', { token })).status).to.equal(200);
      for (let k = 0; k < 4; k++) {
        const seen = await post(port, '/token/introspect', { token });
        if (JSON.parse(seen.body).active !== false) stale.push(`${i}/${k}`);
      }
    }
    expect(stale).to.deep.equal([]);
  });
});
