/**
 * Scale of `gatehouse users import` (issue 27): 10,000 users with mixed password hashes (argon2,
 * bcrypt, scrypt, Firebase scrypt, PBKDF2) and a TOTP seed for every tenth, imported by the CLI
 * into SQLite and into PostgreSQL. The time is reported, not asserted; the counts must match,
 * and a user of each kind signs in afterwards.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../support/cli.js';
import { HASH_KINDS, importConfigFile, jsonLines, TOTP_SEED } from '../support/import-rows.js';
import { withPostgresDatabase } from '../support/postgres.js';
import { dataOf, initiate, verify } from '../verification/steps.js';
import { startVerificationApp } from '../verification/support.js';

const USERS = 10_000;

function rows() {
  return Array.from({ length: USERS }, (_, i) => {
    const kind = HASH_KINDS[i % HASH_KINDS.length]!;
    return {
      username: `bulk${i}`,
      email: `bulk${i}@example.test`,
      email_verified: i % 2 === 0,
      ...(i % 3 === 0 ? { profile: { name: `Bulk User ${i}` } } : {}),
      credentials: { PASSWORD: kind.credential, ...(i % 10 === 0 ? { TOTP: { secret: TOTP_SEED } } : {}) },
    };
  });
}

function scenario(name: string, databaseUrl: (dir: string) => string) {
  it(`imports ${USERS.toLocaleString('en')} users with mixed hashes into ${name}; a user of each kind signs in`, async function () {
    this.timeout(600_000);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-import-scale-'));
    try {
      const url = databaseUrl(dir);
      const config = importConfigFile(dir, url);
      const file = path.join(dir, 'users.jsonl');
      writeFileSync(file, jsonLines(rows()));
      const started = Date.now();
      const result = await runCli(['users', 'import', file, '--config', config], { timeoutMs: 540_000 });
      const seconds = (Date.now() - started) / 1000;
      console.log(
        `      ${name}: ${USERS} users imported in ${seconds.toFixed(1)} s (the CLI's start included): ${result.stdout.trim()}`,
      );
      expect(result.stderr).to.equal('');
      expect(result.code).to.equal(0);
      expect(result.stdout).to.match(
        new RegExp(`^imported ${USERS} users \\(credentials PASSWORD: ${USERS}, TOTP: ${USERS / 10}\\) in `),
      );

      const v = await startVerificationApp({ databaseUrl: url });
      try {
        const { sql } = v.gatehouse.container.cradle;
        const count = async (query: string) => Number((await sql.one<{ n: unknown }>(query))!.n);
        expect(await count("SELECT COUNT(*) AS n FROM users WHERE username LIKE 'bulk%'")).to.equal(USERS);
        expect(await count("SELECT COUNT(*) AS n FROM credentials WHERE method = 'PASSWORD'")).to.equal(USERS);
        expect(await count("SELECT COUNT(*) AS n FROM credentials WHERE method = 'TOTP'")).to.equal(USERS / 10);
        expect(await count('SELECT COUNT(*) AS n FROM user_identifiers')).to.equal(2 * USERS);
        // A sample: the last users, one of each kind.
        for (let i = USERS - HASH_KINDS.length; i < USERS; i++) {
          const kind = HASH_KINDS[i % HASH_KINDS.length]!;
          const { exchangeId } = await initiate(v, 'PASSWORD', await v.flow('app2'), { identifier: `bulk${i}` });
          dataOf(await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: kind.password }));
          const user = (await v.gatehouse.container.cradle.users.findByIdentifier(`bulk${i}`))!;
          const stored = await sql.one<{ secret: string }>(
            "SELECT secret FROM credentials WHERE user_id = :id AND method = 'PASSWORD'",
            { id: user.id },
          );
          expect(stored!.secret, kind.kind).to.match(/^\$argon2id\$/);
        }
      } finally {
        await v.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

describe('users import at scale', () => {
  scenario('SQLite', (dir) => `sqlite:${path.join(dir, 'gatehouse.db')}`);
  describe('on PostgreSQL', () => {
    const pg = withPostgresDatabase();
    scenario('PostgreSQL', () => pg.url);
  });
});
