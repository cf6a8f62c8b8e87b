/**
 * Migration end to end (issue 27): `gatehouse users import` of users with an argon2, a bcrypt,
 * a scrypt and a Firebase scrypt and a (Keycloak) PBKDF2 hash, a TOTP seed, profile claims, a verified
 * address and a disabled account; then each signs in through the verification API, and the
 * stored hash is argon2id after the sign-in. On SQLite and on PostgreSQL.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { generate } from 'otplib';
import { runCli } from '../support/cli.js';
import { HASH_KINDS, importConfigFile, jsonLines, TOTP_SEED } from '../support/import-rows.js';
import { withPostgresDatabase } from '../support/postgres.js';
import { continueLogin, dataOf, expectError, initiate, verify, type Continued } from './steps.js';
import { startVerificationApp, type VerificationApp } from './support.js';

async function storedPassword(v: VerificationApp, userId: string): Promise<{ secret: string; data: string }> {
  const row = await v.gatehouse.container.cradle.sql.one<{ secret: string; data: string }>(
    "SELECT secret, data FROM credentials WHERE user_id = :userId AND method = 'PASSWORD'",
    { userId },
  );
  return row!;
}

function scenario(name: string, databaseUrl: (dir: string) => string) {
  describe(`users import, then sign-in with each kind of hash (${name})`, function () {
    this.timeout(120_000);
    let dir: string;
    let v: VerificationApp;

    before(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'gh-import-e2e-'));
      const url = databaseUrl(dir);
      const config = importConfigFile(dir, url);
      const rows = [
        ...HASH_KINDS.map((k) => ({
          username: `${k.kind}-user`,
          email: `${k.kind}@example.test`,
          email_verified: true,
          profile: { name: `The ${k.kind} user`, locale: 'de-DE' },
          credentials: {
            PASSWORD: k.credential,
            ...(k.kind === 'bcrypt' ? { TOTP: { secret: TOTP_SEED } } : {}),
          },
        })),
        {
          username: 'gone',
          phone: '+15550003333',
          disabled: true,
          credentials: { PASSWORD: HASH_KINDS[0]!.credential },
        },
      ];
      const file = path.join(dir, 'users.jsonl');
      writeFileSync(file, jsonLines(rows));
      const result = await runCli(['users', 'import', file, '--config', config], { timeoutMs: 60_000 });
      expect(result.stderr).to.equal('');
      expect(result.code).to.equal(0);
      expect(result.stdout).to.match(/^imported 6 users \(credentials PASSWORD: 6, TOTP: 1\) in \d+\.\d s\n$/);
      v = await startVerificationApp({ databaseUrl: url });
    });
    after(async () => {
      await v?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    for (const kind of HASH_KINDS) {
      it(`${kind.kind}: a wrong password fails, the right one signs in, and the stored hash is argon2id after it`, async () => {
        const user = (await v.gatehouse.container.cradle.users.findByIdentifier(`${kind.kind}-user`))!;
        expect((await storedPassword(v, user.id)).data).to.equal(JSON.stringify({ imported: kind.kind }));

        const wrong = await initiate(v, 'PASSWORD', await v.flow('app2'), { identifier: user.username });
        expectError(
          await verify(v, 'PASSWORD', { exchange_id: wrong.exchangeId, password: `${kind.password}!` }),
          401,
          'VERIFICATION_FAILED',
        );
        const requestId = await v.flow('app2');
        const { exchangeId } = await initiate(v, 'PASSWORD', requestId, { identifier: user.email! });
        const { status_id } = dataOf<{ status_id: string }>(
          await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: kind.password }),
        );
        const done = dataOf<Continued>(await continueLogin(v, { requestId, status_id }));
        expect(done.completed).to.equal(true);

        const after = await storedPassword(v, user.id);
        expect(after.secret).to.match(/^\$argon2id\$v=19\$m=1024,t=2,p=1\$/);
        expect(after.data).to.equal('{}');
        // The new hash is of the same password.
        const again = await initiate(v, 'PASSWORD', await v.flow('app2'), { identifier: user.username });
        dataOf(await verify(v, 'PASSWORD', { exchange_id: again.exchangeId, password: kind.password }));
      });
    }

    it('the imported TOTP seed is the second stage of the bcrypt user', async () => {
      const user = (await v.gatehouse.container.cradle.users.findByIdentifier('bcrypt-user'))!;
      const requestId = await v.flow('app1');
      const first = await initiate(v, 'PASSWORD', requestId, { identifier: user.username });
      const { status_id } = dataOf<{ status_id: string }>(
        await verify(v, 'PASSWORD', { exchange_id: first.exchangeId, password: 'Tr0ub4dor&3' }),
      );
      expect(dataOf<Continued>(await continueLogin(v, { requestId, status_id })).completed).to.equal(false);
      const second = await initiate(v, 'TOTP', requestId, { sub: user.id });
      const code = await generate({ secret: TOTP_SEED, epoch: Math.floor(Date.now() / 1000) });
      const wrongCode = code === '000000' ? '111111' : '000000';
      expectError(
        await verify(v, 'TOTP', { exchange_id: second.exchangeId, pass_code: wrongCode }),
        401,
        'VERIFICATION_FAILED',
      );
      const third = await initiate(v, 'TOTP', requestId, { sub: user.id });
      const totp = dataOf<{ status_id: string }>(
        await verify(v, 'TOTP', { exchange_id: third.exchangeId, pass_code: code }),
      );
      const done = dataOf<Continued>(await continueLogin(v, { requestId, status_id: totp.status_id }));
      expect(done.completed).to.equal(true);
    });

    it('keeps the profile claims, the verified address and the disabled status', async () => {
      const { users, profiles, accounts } = v.gatehouse.container.cradle;
      const user = (await users.findByIdentifier('pbkdf2-user'))!;
      expect(user).to.deep.include({ email: 'pbkdf2@example.test', status: 'active' });
      expect(await profiles.get(user.id)).to.deep.include({ name: 'The pbkdf2 user', locale: 'de-DE' });
      expect(await accounts.verified(user, 'email')).to.equal(true);
      const gone = (await users.findByIdentifier('+15550003333'))!;
      expect(gone).to.deep.include({ username: 'gone', status: 'disabled' });
      expect(await accounts.verified(gone, 'sms')).to.equal(false);
    });
  });
}

scenario('SQLite', (dir) => `sqlite:${path.join(dir, 'gatehouse.db')}`);

describe('on PostgreSQL', () => {
  const pg = withPostgresDatabase();
  scenario('PostgreSQL', () => pg.url);
});
