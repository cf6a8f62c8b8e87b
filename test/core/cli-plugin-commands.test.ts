/**
 * CLI commands of plugins (decision 64): a plugin's command runs after the core's own are looked
 * up, with its own options and words, and the server composed when it asks; `gatehouse help`
 * lists it; a name the core or another plugin has stops start-up; a moved command without its
 * plugin names the plugin.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../support/cli.js';
import { TEST_ENCRYPTION_KEY } from '../support/config.js';
import { fixturePlugin } from '../support/paths.js';

const MANAGEMENT = '@gatehouse-auth/management';

describe('CLI: commands of plugins', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'gh-cli-plugins-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A config file in `dir` loading these fixture plugins, or packages by name (JSON is YAML). */
  function configWith(name: string, plugins: string[], database = name): string {
    const file = path.join(dir, `${name}.yaml`);
    const config = {
      database: { url: `sqlite:${path.join(dir, `${database}.db`)}` },
      log: { level: 'warn' },
      secrets: { encryption_key: TEST_ENCRYPTION_KEY },
      maintenance: { purge_interval_seconds: 0 },
      plugins: plugins.map((p) => (p.startsWith('@') ? { name: p } : { path: fixturePlugin(p) })),
    };
    writeFileSync(file, JSON.stringify(config));
    return file;
  }

  it("runs a plugin's command with its options and words, on the composed server; help lists it", async () => {
    const config = configWith('greet', ['cli-command.js']);
    // `users create` is the management plugin's (decision 68): a config with it, on the same database.
    const users = configWith('greet-users', [MANAGEMENT], 'greet');
    const created = await runCli(['users', 'create', '--username', 'ada', '--config', users]);
    expect(created.code, created.stderr).to.equal(0);
    expect(await runCli(['greet', 'ada', '--shout', '--config', config])).to.deep.include({
      code: 0,
      stdout: 'HELLO ADA (A USER)\n',
      stderr: '',
    });
    expect(await runCli(['greet', 'bob', '--config', config])).to.deep.include({
      code: 1,
      stdout: 'hello bob (no user)\n',
      stderr: 'gatehouse: no user bob\n',
    });
    expect(await runCli(['users', 'count', '--config', config])).to.deep.include({
      code: 0,
      stdout: 'counted without a server\n',
    });
    const help = await runCli(['help', '--config', config]);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.match(/^Usage: gatehouse <command>/);
    expect(help.stdout).to.include(
      [
        "Commands of the config's plugins:",
        '  greet NAME [--shout]',
        '                        greets NAME, and says whether a user has that name',
        '                        (@fixture/cli-command)',
        '  users count',
      ].join('\n'),
    );
  });

  it("checks a plugin command's words and options before it runs (exit 2)", async () => {
    const config = configWith('words', [MANAGEMENT, 'cli-command.js']);
    expect(await runCli(['greet', '--config', config])).to.deep.include({
      code: 2,
      stdout: '',
      stderr: 'gatehouse: greet needs a NAME to greet\n',
    });
    expect(await runCli(['greet', 'ada', 'lovelace', '--config', config])).to.deep.include({
      code: 2,
      stderr: 'gatehouse: unexpected argument "lovelace" (a value with spaces needs quotes)\n',
    });
    expect(await runCli(['greet', 'ada', '--loud', '--config', config])).to.deep.include({
      code: 2,
      stderr: 'gatehouse: unknown option --loud (gatehouse help lists the options)\n',
    });
    // A core group names the plugins' subcommands too.
    expect(await runCli(['users', 'remove', '--config', config])).to.deep.include({
      code: 2,
      stderr: 'gatehouse: users needs one of: create, list, profile, count, import (not "remove")\n',
    });
  });

  it("a command named like the core's or another plugin's stops start-up, config check included", async () => {
    const core = await runCli(['config', 'check', '--config', configWith('core', ['cli-collision.js'])]);
    expect(core.code).to.equal(1);
    expect(core.stderr).to.equal(
      `gatehouse: plugin @fixture/cli-collision: command "keys list" is already the core's (gatehouse keys)\n`,
    );
    const twin = await runCli(['start', '--config', configWith('twin', ['cli-command.js', 'cli-twin.js'])]);
    expect(twin).to.deep.include({
      code: 1,
      stderr: `gatehouse: plugin @fixture/cli-twin: command "greet loudly" is already plugin @fixture/cli-command's (gatehouse greet)\n`,
    });
  });

  it('users import without its plugin names the plugin, exit 2', async () => {
    const config = configWith('no-import', ['cli-command.js']);
    expect(await runCli(['users', 'import', 'users.jsonl', '--config', config])).to.deep.include({
      code: 2,
      stdout: '',
      stderr: `gatehouse: users import is a command of the plugin @gatehouse-auth/user-import, which ${config} does not load: add it to plugins:\n`,
    });
  });
});
