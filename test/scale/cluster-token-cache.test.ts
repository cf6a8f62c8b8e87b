/**
 * Issue 15: cluster workers on one SQLite file each cache active tokens; a revocation answered
 * by one worker reaches the others through the primary (IPC) before the answer is sent.
 * Connections go round-robin to the workers, so a fresh connection per request visits both.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { spawnCli } from '../support/cli.js';
import { everyWorkerReady, postOnOwnConnection } from '../support/own-connection.js';
import { freePort } from '../oauth/support.js';

const CLIENT = { id: 'machine', secret: 'cluster-client-secret-0123456789abcdef0123' };
const AUTH = `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString('base64')}`;

/** POSTs a form on a connection of its own (so the primary hands it to the next worker). */
const post = (port: number, urlPath: string, form: Record<string, string>) =>
  postOnOwnConnection(port, urlPath, form, AUTH).then(({ status, text }) => ({ status, body: text }));

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
    // Ready when both workers answer.
    await everyWorkerReady(port, 2, () => stderr);
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
