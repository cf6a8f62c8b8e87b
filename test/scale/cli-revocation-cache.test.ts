/**
 * A revocation made by another process (a `gatehouse apps delete` from a shell, on the same
 * SQLite file) reaches the running server's token cache: no peer bus connects the two.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { runCli, spawnCli } from '../support/cli.js';
import { everyWorkerReady, postOnOwnConnection } from '../support/own-connection.js';
import { freePort } from '../oauth/support.js';

const RESOURCE = { id: 'resource-server', secret: 'resource-server-secret-0123456789abcdef01' };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

const post = (port: number, urlPath: string, authorization: string, form: Record<string, string>) =>
  postOnOwnConnection(port, urlPath, form, authorization).then(({ status, text }) => ({
    status,
    body: JSON.parse(text) as Record<string, unknown>,
  }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const workers of [1, 2])
  describe(`revocations by another process reach the token cache (SQLite, ${workers === 1 ? 'one node' : 'two cluster workers'})`, function () {
    this.timeout(60_000);
    let dir: string;
    let config: string;
    let child: ChildProcess | undefined;
    let port: number;

    before(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'gh-cli-revoke-'));
      port = await freePort();
      config = path.join(dir, 'gatehouse.yaml');
      writeFileSync(
        config,
        JSON.stringify({
          issuer: `http://127.0.0.1:${port}`,
          server: { host: '127.0.0.1', port, shutdown_delay_ms: 0, workers },
          database: { url: `sqlite:${path.join(dir, 'gatehouse.db')}` },
          log: { level: 'warn' },
          secrets: { encryption_key: Buffer.alloc(32, 5).toString('base64') },
          oauth: { clients_poll_seconds: 3 },
          plugins: [
            { name: '@gatehouse-auth/grant-client-credentials' },
            { name: '@gatehouse-auth/management' },
            // A cluster's workers tell each other through the primary (decision 87).
            ...(workers > 1 ? [{ name: '@gatehouse-auth/peer-bus' }] : []),
          ],
          apps: [
            {
              client_id: RESOURCE.id,
              client_secret: RESOURCE.secret,
              grant_types: ['client_credentials'],
              scopes: ['introspection'],
              token_format: 'opaque',
            },
          ],
        }),
      );
      child = spawnCli(['start', '--config', config]);
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      await everyWorkerReady(port, workers, () => stderr);
    });
    after(async () => {
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child!.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    });

    /** Stores a client-credentials app with `gatehouse apps create`; its secret. */
    async function createApp(clientId: string, extra: Record<string, unknown> = {}): Promise<string> {
      const app = {
        client_id: clientId,
        grant_types: ['client_credentials'],
        scopes: ['api'],
        redirect_uris: [],
        ...extra,
      };
      const created = await runCli(['apps', 'create', '--config', config, '--app', JSON.stringify(app)]);
      expect(created.code, created.stderr).to.equal(0);
      return (JSON.parse(created.stdout) as { client_secret: string }).client_secret;
    }

    it('a cached token of an app deleted with `gatehouse apps delete` is inactive within two seconds', async () => {
      const secret = await createApp('doomed-app', { token_format: 'opaque' });
      // The server learns of the stored app by its poll (three seconds here), each worker by its
      // own: until every worker knows the app, another's token is not active on it. Known
      // everywhere once a token is issued on as many fresh connections in a row as workers, twice.
      let issued: { status: number; body: Record<string, unknown> } | undefined;
      let minted = 0;
      for (let i = 0, inRow = 0; i < 80 && inRow < 2 * workers; i++) {
        if (i) await sleep(100);
        issued = await post(port, '/oauth/token', basic('doomed-app', secret), { grant_type: 'client_credentials' });
        inRow = issued.status === 200 ? inRow + 1 : 0;
        if (issued.status === 200) minted++;
      }
      expect(issued!.status, JSON.stringify(issued!.body)).to.equal(200);
      const token = issued!.body.access_token as string;

      const bearer = await post(port, '/oauth/token', basic(RESOURCE.id, RESOURCE.secret), {
        grant_type: 'client_credentials',
        scope: 'introspection',
      });
      expect(bearer.status, JSON.stringify(bearer.body)).to.equal(200);
      const introspect = () =>
        post(port, '/token/introspect', `Bearer ${bearer.body.access_token as string}`, { token });
      // Read on every worker, twice: the later answers come from the caches.
      for (let i = 0; i < 2 * workers; i++) expect((await introspect()).body.active).to.equal(true);

      const deleted = await runCli(['apps', 'delete', '--config', config, '--client-id', 'doomed-app']);
      expect(deleted.code, deleted.stderr).to.equal(0);
      expect(JSON.parse(deleted.stdout)).to.deep.include({ revoked_tokens: minted });
      await sleep(2_000);
      for (let i = 0; i < 2 * workers; i++) expect((await introspect()).body).to.deep.equal({ active: false });
    });
    it('a token issued to a deleted app before the server noticed the deletion is inactive once it has', async function () {
      const secret = await createApp('late-app');
      const mint = () => post(port, '/oauth/token', basic('late-app', secret), { grant_type: 'client_credentials' });
      let issued = await mint();
      for (let i = 0; i < 80 && issued.status !== 200; i++) {
        await sleep(100);
        issued = await mint();
      }
      expect(issued.status, JSON.stringify(issued.body)).to.equal(200);
      const deleted = await runCli(['apps', 'delete', '--config', config, '--client-id', 'late-app']);
      expect(deleted.code, deleted.stderr).to.equal(0);
      // Until the server's poll sees the deletion, it still knows the app: a token minted now
      // came after the revocation of the app's tokens.
      const late = await mint();
      if (late.status !== 200) this.skip(); // the poll came first: nothing to show
      const bearer = await post(port, '/oauth/token', basic(RESOURCE.id, RESOURCE.secret), {
        grant_type: 'client_credentials',
        scope: 'introspection',
      });
      const introspect = (token: string) =>
        post(port, '/token/introspect', `Bearer ${bearer.body.access_token as string}`, { token });
      await sleep(4_000); // past the server's poll
      expect((await mint()).status, 'the app is gone').to.equal(401);
      expect((await introspect(late.body.access_token as string)).body).to.deep.equal({ active: false });
      expect((await introspect(issued.body.access_token as string)).body).to.deep.equal({ active: false });
    });
  });
