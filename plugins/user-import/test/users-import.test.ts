/**
 * `gatehouse users import FILE`: bad rows are reported with their line number and why, the exit
 * code is 1 and nothing is stored; duplicates (in the file or the database) are bad rows;
 * --skip-invalid imports the good rows; --dry-run writes nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../../test/support/cli.js';
import { HASH_KINDS, importConfigFile, jsonLines, TOTP_SEED } from '../../../test/support/import-rows.js';

describe('CLI: users import', function () {
  this.timeout(60_000);
  let dir: string;
  let config: string;
  let n = 0;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-import-'));
    config = importConfigFile(dir, `sqlite:${path.join(dir, 'gatehouse.db')}`);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cli = (args: string[]) => runCli(args, { timeoutMs: 50_000 });
  function file(rows: unknown[]): string {
    const name = path.join(dir, `users-${++n}.jsonl`);
    writeFileSync(name, jsonLines(rows));
    return name;
  }
  async function usernames(): Promise<string[]> {
    const listed = await cli(['users', 'list', '--json', '--config', config]);
    expect(listed.code, listed.stderr).to.equal(0);
    return (JSON.parse(listed.stdout) as { username: string }[]).map((u) => u.username).sort();
  }

  it('without a FILE: exit 2 and what it needs; an unreadable FILE: exit 1, one line', async () => {
    const none = await cli(['users', 'import', '--config', config]);
    expect(none).to.deep.include({
      code: 2,
      stderr: 'gatehouse: users import needs a FILE (JSON lines, docs/migration.md)\n',
    });
    const missing = await cli(['users', 'import', path.join(dir, 'nope.jsonl'), '--config', config]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/^gatehouse: cannot read \S+nope\.jsonl: ENOENT: no such file or directory/);
  });

  it('a file with bad rows: each reported with its line and why, exit 1, and nothing of the file is stored', async () => {
    const existing = await cli([
      'users',
      'create',
      '--config',
      config,
      '--username',
      'olga',
      '--email',
      'olga@example.test',
    ]);
    expect(existing.code, existing.stderr).to.equal(0);
    const bcrypt = HASH_KINDS.find((k) => k.kind === 'bcrypt')!.credential;
    const rows = [
      { username: 'ada', email: 'ada@example.test', credentials: { PASSWORD: bcrypt, TOTP: { secret: TOTP_SEED } } },
      '{"username": "bob", ',
      { username: 'cleo', email: 'not-an-email' },
      { username: 'dan', credentials: { SECURITY_QUESTION: { answer: 'x' } } },
      { username: 'eve', credentials: { BACKUPCODE: { codes: ['1234'] } } },
      { username: 'fay', credentials: { PASSWORD: { hash: '{SSHA}abcdef' } } },
      { username: 'ADA' },
      { username: 'gus', email: 'OLGA@example.test' },
      { username: 'hal', profile: { zoneinfo: 'Mars/Olympus' } },
      { username: 'ida', nickname: 'I' },
      { username: 'jo', email_verified: true },
      { username: 'kim', credentials: { TOTP: { secret: 'short' } } },
      ['not', 'an', 'object'],
      { username: 'lea', phone: '+4915112345678', phone_verified: true, profile: { name: 'Lea' } },
      '{"username":"max","credentials":{"PASSWORD":{"hash":"$2b$10$SECRETSECRET"}}} trailing',
    ];
    const text = jsonLines(rows).replace('{"username":"cleo"', '\n{"username":"cleo"'); // a blank line counts
    const name = path.join(dir, 'bad.jsonl');
    writeFileSync(name, text);
    const result = await cli(['users', 'import', name, '--config', config]);
    expect(result.code).to.equal(1);
    const lines = result.stderr.split('\n');
    expect(lines[0]).to.equal('gatehouse: line 2: not valid JSON (at character 20)');
    expect(lines.slice(1)).to.deep.equal([
      'gatehouse: line 4: email must be an email address',
      'gatehouse: line 5: credentials.SECURITY_QUESTION: no method SECURITY_QUESTION is loaded by this config',
      'gatehouse: line 6: credentials.BACKUPCODE: the method BACKUPCODE cannot import credentials',
      'gatehouse: line 7: credentials.PASSWORD: unknown hash format (argon2, bcrypt, scrypt and PBKDF2 are imported)',
      'gatehouse: line 8: "ada" is already used on line 1',
      'gatehouse: line 9: "olga@example.test" is already taken by a user in the database',
      'gatehouse: line 10: profile.zoneinfo must be an IANA time zone such as Europe/Paris',
      'gatehouse: line 11: unknown field "nickname"',
      'gatehouse: line 12: email_verified without an email',
      'gatehouse: line 13: credentials.TOTP: secret is shorter than 80 bits (16 base32 characters)',
      'gatehouse: line 14: not a JSON object',
      'gatehouse: line 16: not valid JSON (at character 78)',
      '',
    ]);
    expect(result.stdout).to.equal('imported nothing: 13 bad rows\n');
    expect(result.stderr, 'no part of a row is quoted').to.not.include('SECRET');
    expect(await usernames()).to.deep.equal(['olga']);
  });

  it('a duplicate within the file is bad whichever identifier repeats (one namespace, case-insensitive)', async () => {
    const result = await cli([
      'users',
      'import',
      file([
        { username: 'mia', email: 'mia@example.test', phone: '+15550002222' },
        { username: 'mia@example.test' },
        { username: 'ned', phone: '+15550002222' },
        { username: 'oz', email: 'MIA@EXAMPLE.TEST' },
      ]),
      '--config',
      config,
    ]);
    expect(result).to.deep.include({
      code: 1,
      stderr: [
        'gatehouse: line 2: "mia@example.test" is already used on line 1',
        'gatehouse: line 3: "+15550002222" is already used on line 1',
        'gatehouse: line 4: "mia@example.test" is already used on line 1',
        '',
      ].join('\n'),
      stdout: 'imported nothing: 3 bad rows\n',
    });
    expect(await usernames()).to.deep.equal(['olga']);
  });

  it('--dry-run checks every row and writes nothing (a file with a BOM and CRLF line endings)', async () => {
    const name = path.join(dir, 'windows.jsonl');
    const rows = [{ username: 'pia', credentials: { PASSWORD: HASH_KINDS[0]!.credential } }, { username: 'quinn' }];
    writeFileSync(name, '\uFEFF' + rows.map((row) => JSON.stringify(row)).join('\r\n') + '\r\n');
    const result = await cli(['users', 'import', name, '--dry-run', '--config', config]);
    expect(result).to.deep.include({
      code: 0,
      stderr: '',
      stdout: 'dry run: 2 rows valid, 0 bad (credentials PASSWORD: 1)\n',
    });
    expect(await usernames()).to.deep.equal(['olga']);
  });

  it('--skip-invalid imports the good rows (one whose username is its own email), reports the bad ones and exits 1', async () => {
    const result = await cli([
      'users',
      'import',
      file([
        { username: 'rex@example.test', email: 'Rex@example.test' },
        { username: 'olga' },
        { username: 'sam', credentials: { TOTP: { secret: TOTP_SEED } } },
      ]),
      '--skip-invalid',
      '--config',
      config,
    ]);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.equal('gatehouse: line 2: "olga" is already taken by a user in the database\n');
    expect(result.stdout).to.match(/^imported 2 users \(credentials TOTP: 1\), skipped 1 bad rows in \d+\.\d s\n$/);
    expect(await usernames()).to.deep.equal(['olga', 'rex@example.test', 'sam']);
  });

  it('a good file: every user imported, exit 0; importing it again refuses every row', async () => {
    const name = file(
      HASH_KINDS.map((k, i) => ({
        username: `good${i}`,
        email: `good${i}@example.test`,
        credentials: { PASSWORD: k.credential },
      })),
    );
    const result = await cli(['users', 'import', name, '--config', config]);
    expect(result.stderr).to.equal('');
    expect(result.code).to.equal(0);
    expect(result.stdout).to.match(/^imported 5 users \(credentials PASSWORD: 5\) in \d+\.\d s\n$/);
    const again = await cli(['users', 'import', name, '--config', config]);
    expect(again.code).to.equal(1);
    expect(again.stderr.trimEnd().split('\n')).to.have.length(5);
    expect(again.stderr).to.include('gatehouse: line 1: "good0" is already taken by a user in the database\n');
    expect(await usernames()).to.deep.equal([
      'good0',
      'good1',
      'good2',
      'good3',
      'good4',
      'olga',
      'rex@example.test',
      'sam',
    ]);
  });
});
