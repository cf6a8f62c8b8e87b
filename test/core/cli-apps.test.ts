/**
 * `gatehouse apps ...` (decision 0051): the CLI stores, lists, changes, rotates and deletes
 * database apps with the checks the admin API has; secrets are printed once, at create and
 * rotate; every refusal is one line with its code and exit 1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../support/cli.js';
import { fixtureConfig } from '../support/paths.js';

describe('CLI: apps', function () {
  this.timeout(60_000);
  let dir: string;
  let env: Record<string, string>;
  const config = fixtureConfig('management.yaml');
  const app = JSON.stringify({ client_id: 'cli-app', name: 'CLI app', redirect_uris: ['https://app.example/cb'] });
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-cli-apps-'));
    env = { DATABASE_URL: `sqlite:${path.join(dir, 'gatehouse.db')}` };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cli = (...args: string[]) => runCli(['apps', ...args, '--config', config], { env });

  it('create prints the app and its secret once; list and update never show it', async () => {
    const created = await cli('create', '--app', app);
    expect(created).to.deep.include({ code: 0, stderr: '' });
    const { app: listing, client_secret } = JSON.parse(created.stdout) as {
      app: Record<string, unknown>;
      client_secret: string;
    };
    expect(client_secret).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(listing).to.deep.include({ client_id: 'cli-app', source: 'database', has_secret: true });

    const table = await cli('list');
    expect(table.code).to.equal(0);
    expect(table.stdout).to.match(
      /^client_id\s+source\s+auth\s+name\ncli-app\s+database\s+client_secret_basic\s+CLI app\n$/,
    );
    const updated = await cli(
      'update',
      '--client-id',
      'cli-app',
      '--app',
      '{"name":"Renamed","scopes":["openid","email"]}',
    );
    expect(updated.code, updated.stderr).to.equal(0);
    expect(JSON.parse(updated.stdout)).to.deep.include({ name: 'Renamed' });
    const json = await cli('list', '--json');
    expect(JSON.parse(json.stdout)).to.have.length(1);
    for (const out of [table.stdout, updated.stdout, json.stdout]) expect(out).to.not.include(client_secret);
  });

  it('rotate-secret prints a new secret and until when the previous one works', async () => {
    const rotated = await cli('rotate-secret', '--client-id', 'cli-app', '--overlap', '600');
    expect(rotated.code, rotated.stderr).to.equal(0);
    const answer = JSON.parse(rotated.stdout) as { app: { previous_secret_expires_at: string }; client_secret: string };
    expect(answer.client_secret).to.match(/^[A-Za-z0-9_-]{43}$/);
    const until = Date.parse(answer.app.previous_secret_expires_at) - Date.now();
    expect(until).to.be.within(590_000, 600_000);
  });

  it('refusals: one line with the code, exit 1; a missing option: exit 2', async () => {
    const cases: [string[], string][] = [
      [['create', '--app', app], 'gatehouse: APP_EXISTS: an app with this client_id exists\n'],
      [['create', '--app', '{not json'], 'gatehouse: INVALID_APP: --app: not valid JSON\n'],
      [['create', '--app', '[]'], 'gatehouse: INVALID_APP: --app: must be a JSON object (an apps[] entry)\n'],
      [['update', '--client-id', 'nope', '--app', '{}'], 'gatehouse: APP_NOT_FOUND: no such app\n'],
      [
        ['rotate-secret', '--client-id', 'cli-app', '--overlap', 'soon'],
        'gatehouse: INVALID_FIELD: overlap_seconds must be an integer from 0 to 2592000\n',
      ],
    ];
    for (const [args, stderr] of cases) {
      const res = await cli(...args);
      expect(res.stderr).to.equal(stderr);
      expect(res.code).to.equal(1);
    }
    const bad = await cli('create', '--app', '{"client_id":"x","grant_types":["urn:none"]}');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/^gatehouse: INVALID_APP: app\.grant_types\[0\]: no grant "urn:none" is registered/);
    const missing = await cli('delete');
    expect(missing).to.deep.include({ code: 2, stderr: 'gatehouse: apps delete needs --client-id\n' });
  });

  it("keys rotate reads the database apps' token lifetimes too", async () => {
    const ttl = await cli('update', '--client-id', 'cli-app', '--app', '{"access_token_ttl":172800}');
    expect(ttl.code, ttl.stderr).to.equal(0);
    const rotated = await runCli(['keys', 'rotate', '--config', config], { env });
    expect(rotated.stderr).to.equal('');
    expect(rotated.code).to.equal(0);
    expect(rotated.stdout).to.match(/^published \S+ key \S+; it signs from /m);
  });

  it('without the management plugin: one line naming it, exit 2, as users create (decision 73)', async () => {
    const valid = fixtureConfig('valid.yaml');
    const res = await runCli(['apps', 'list', '--config', valid], { env });
    expect(res).to.deep.include({
      code: 2,
      stderr: `gatehouse: apps list is a command of the plugin @gatehouse-auth/management, which ${valid} does not load: add it to plugins:\n`,
    });
  });

  it('delete removes the app', async () => {
    const deleted = await cli('delete', '--client-id', 'cli-app');
    expect(deleted.code, deleted.stderr).to.equal(0);
    expect(JSON.parse(deleted.stdout)).to.deep.equal({ revoked_grants: 0, revoked_tokens: 0 });
    expect(JSON.parse((await cli('list', '--json')).stdout)).to.deep.equal([]);
  });
});
