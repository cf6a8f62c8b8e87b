import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import net from 'node:net';
import { MIGRATIONS } from '../../core/dist/storage/migrate.js';
import { runCli } from '../support/cli.js';
import { fixtureConfig, REPO_ROOT } from '../support/paths.js';

describe('CLI: migrate and users', function () {
  this.timeout(30_000);
  let dir: string;
  let env: Record<string, string>;
  // The users commands are the management plugin's (decision 68): valid.yaml with it.
  const config = fixtureConfig('management.yaml');
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-cli-'));
    // DATABASE_URL overrides the fixture's in-memory database, so the commands share one file.
    env = { DATABASE_URL: `sqlite:${path.join(dir, 'gatehouse.db')}` };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs as `npx gatehouse` in a checkout, as the README says (the bin is in git, so `npm ci` links it before the first build)', () => {
    const help = execFileSync(path.join(REPO_ROOT, 'node_modules/.bin/gatehouse'), ['--help'], { encoding: 'utf8' });
    expect(help).to.match(/^Usage: gatehouse <command>/);
  });

  it('migrate applies every migration, then reports the database up to date', async () => {
    const first = await runCli(['migrate', '--config', config], { env });
    expect(first).to.deep.include({ code: 0, stderr: '' });
    expect(first.stdout.trimEnd().split('\n').at(-1)).to.equal(`applied: ${MIGRATIONS.map((m) => m.name).join(', ')}`);
    const second = await runCli(['migrate', '--config', config], { env });
    expect(second.stdout.trimEnd().split('\n').at(-1)).to.equal('database is up to date');
  });

  it('users create prints the user; users list shows it; a duplicate is one line on stderr', async () => {
    const created = await runCli(
      [
        'users',
        'create',
        '--config',
        config,
        '--username',
        'ivy',
        '--email',
        'Ivy@Example.com',
        '--phone',
        '+15550001111',
      ],
      { env },
    );
    expect(created).to.deep.include({ code: 0, stderr: '' });
    const user = JSON.parse(created.stdout) as { id: string };
    expect(user).to.deep.equal({
      id: user.id,
      username: 'ivy',
      email: 'ivy@example.com',
      phone: '+15550001111',
      status: 'active',
    });
    const listed = await runCli(['users', 'list', '--json', '--config', config], { env });
    expect(JSON.parse(listed.stdout)).to.deep.equal([user]);

    const duplicate = await runCli(['users', 'create', '--config', config, '--username', 'ivy'], { env });
    expect(duplicate.code).to.equal(1);
    expect(duplicate.stderr).to.match(/^gatehouse: USER_EXISTS: a user with this [^\n]+ already exists\n$/);
  });

  it('a duplicate names the field on stderr', async () => {
    const duplicate = await runCli(['users', 'create', '--config', config, '--username', 'ivy'], { env });
    expect(duplicate.stderr).to.equal('gatehouse: USER_EXISTS: a user with this username already exists\n');
  });

  it('users create with an invalid email: exit 1, one line naming the field', async () => {
    const result = await runCli(['users', 'create', '--config', config, '--username', 'jo', '--email', 'x'], { env });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.equal('gatehouse: INVALID_FIELD: email must be an email address\n');
  });

  it('users profile shows, sets and unsets profile claims; a bad value is one line and changes nothing', async () => {
    const profile = (args: string[]) =>
      runCli(['users', 'profile', '--config', config, '--username', 'ivy', ...args], { env });
    const set = await profile([
      '--set',
      'name=Ivy Example',
      '--set',
      'address={"country":"NZ"}',
      '--set',
      'nickname=I',
    ]);
    expect(set.code, set.stderr).to.equal(0);
    expect(JSON.parse(set.stdout)).to.include({ name: 'Ivy Example', nickname: 'I' });
    const unset = await profile(['--unset', 'nickname']);
    const after = JSON.parse(unset.stdout) as Record<string, unknown>;
    expect(after).to.deep.include({ name: 'Ivy Example', address: { country: 'NZ' } });
    expect(after).to.not.have.property('nickname');
    const bad = await profile(['--set', 'zoneinfo=Mars/Olympus']);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.equal('gatehouse: INVALID_FIELD: zoneinfo must be an IANA time zone such as Europe/Paris\n');
    expect(JSON.parse((await profile([])).stdout)).to.deep.equal(after);
    const nobody = await runCli(['users', 'profile', '--config', config, '--username', 'nobody'], { env });
    expect(nobody).to.deep.include({ code: 1, stderr: 'gatehouse: no user "nobody" (give --username)\n' });
  });

  it('users commands without the management plugin name it, exit 2 (decision 68)', async () => {
    const valid = fixtureConfig('valid.yaml');
    const result = await runCli(['users', 'create', '--config', valid, '--username', 'ivy'], { env });
    expect(result).to.deep.include({
      code: 2,
      stdout: '',
      stderr: `gatehouse: users create is a command of the plugin @gatehouse-auth/management, which ${valid} does not load: add it to plugins:\n`,
    });
  });

  it('an unknown command exits 2 with the usage', async () => {
    const result = await runCli(['frobnicate']);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.match(/^gatehouse: unknown command "frobnicate"\nUsage: gatehouse <command>/);
    // An object's own property names are no commands either (they once crashed with a stack trace).
    const inherited = await runCli(['toString']);
    expect(inherited.code).to.equal(2);
    expect(inherited.stderr).to.match(/^gatehouse: unknown command "toString"\nUsage: gatehouse <command>/);
  });

  it('gatehouse help prints the usage (exit 0)', async () => {
    const result = await runCli(['help']);
    expect(result).to.deep.include({ code: 0, stderr: '' });
    expect(result.stdout).to.match(/^Usage: gatehouse <command>/);
  });

  it('plugin new is one line naming the command that replaced it, with the arguments given, exit 2 (decision 35)', async () => {
    const given = await runCli(['plugin', 'new', 'fds', '@acme/fds-office-hours', '--dir', '../office hours']);
    expect(given).to.deep.include({
      code: 2,
      stdout: '',
      stderr:
        "gatehouse: plugin new has moved; run: npx @gatehouse-auth/create-plugin fds @acme/fds-office-hours --dir '../office hours'\n",
    });
    const bare = await runCli(['plugin', 'new']);
    expect(bare).to.deep.include({
      code: 2,
      stderr:
        'gatehouse: plugin new has moved; run: npx @gatehouse-auth/create-plugin <method|fds|channel|grant> NAME\n',
    });
  });

  it('a mistyped option is one line naming it, exit 2, no stack trace', async () => {
    const result = await runCli(['users', 'create', '--emial', 'x@example.com', '--username', 'x']);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.equal('gatehouse: unknown option --emial (gatehouse help lists the options)\n');
  });

  it('a word too many is refused, never dropped: users create --username al ice creates no "al"', async () => {
    const result = await runCli(['users', 'create', '--config', config, '--username', 'al', 'ice'], { env });
    expect(result).to.deep.include({
      code: 2,
      stdout: '',
      stderr: `gatehouse: unexpected argument "ice" (a value with spaces needs quotes: --username 'al ice')\n`,
    });
    const listed = await runCli(['users', 'list', '--json', '--config', config], { env });
    expect((JSON.parse(listed.stdout) as { username: string }[]).map((u) => u.username)).not.to.include('al');
  });

  it('a command group alone names its subcommands, exit 2', async () => {
    expect(await runCli(['keys'])).to.deep.include({ code: 2, stderr: 'gatehouse: keys needs one of: rotate, list\n' });
    expect(await runCli(['users', 'remove'])).to.deep.include({
      code: 2,
      stderr: 'gatehouse: users needs one of: create, list, profile, import (not "remove")\n',
    });
  });

  it('users list says which database it read and the config it came from', async () => {
    const listed = await runCli(['users', 'list', '--config', config], { env });
    expect(listed.code).to.equal(0);
    expect(listed.stdout.trimEnd().split('\n').at(-1)).to.match(
      new RegExp(
        `^\\(\\d+ users? in ${env.DATABASE_URL!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}, config .*management\\.yaml\\)$`,
      ),
    );
  });

  it('a config with several problems shows every one, a line each', async () => {
    const result = await runCli(['config', 'check', '--config', config], {
      env: { ...env, PORT: 'not-a-port', DATABASE_URL: '', LOG_LEVEL: 'loud' },
    });
    expect(result.code).to.equal(1);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines.length, result.stderr).to.be.greaterThan(1);
    for (const line of lines) expect(line).to.match(/^gatehouse: [a-z._]+: /);
  });

  it('users create without --username says what it needs', async () => {
    const result = await runCli(['users', 'create', '--config', config], { env });
    expect(result).to.deep.include({
      code: 2,
      stderr: 'gatehouse: users create needs --username NAME (and optionally --email, --phone)\n',
    });
  });

  it('start on a port in use is one line, exit 1', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const result = await runCli(['start', '--config', config], { env: { ...env, PORT: String(port) } });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(
        /^gatehouse: [\d.:]*:\d+ is already in use \(another Gatehouse, or npm run demo\?\); stop it or set PORT\n$/,
      );
    } finally {
      blocker.close();
    }
  });
});
