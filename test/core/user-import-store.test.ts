/**
 * `CliServer.userImport` (decision 64): the core's writes of `gatehouse users import`
 * (`@gatehouse-auth/user-import`, decision 49) are one transaction, so a user made meanwhile that
 * takes an identifier of the file rolls the whole file back.
 */
import { expect } from 'chai';
import { buildApp, createLogger } from '@gatehouse-auth/core';
import { importUsers } from '@gatehouse-auth/user-import';
import { userImportStore } from '../../core/dist/users/import-store.js';
import { testConfig } from '../support/config.js';
import { HASH_KINDS, jsonLines, LOW_COST } from '../support/import-rows.js';

describe('user import: the core writes', function () {
  this.timeout(60_000);

  it('a user made meanwhile that takes an identifier of the file: the transaction rolls back, nothing stays', async () => {
    const gatehouse = await buildApp(testConfig([{ name: '@gatehouse-auth/method-password', options: LOW_COST }]), {
      logger: createLogger('silent'),
    });
    try {
      const { sql, clock, extensions, users } = gatehouse.container.cradle;
      // 300 rows: the users go in three statements, and the second one meets the late user.
      const text = jsonLines(
        Array.from({ length: 300 }, (_, i) => ({
          username: `row${i}`,
          credentials: { PASSWORD: HASH_KINDS[1]!.credential },
        })),
      );
      const racing = {
        dialect: sql.dialect,
        select: sql.select.bind(sql),
        async tx<T>(work: (db: typeof sql) => Promise<T>): Promise<T> {
          await users.create({ username: 'row200' }); // after the check, before the write
          return sql.tx(work);
        },
      } as unknown as typeof sql;
      const deps = {
        users: userImportStore(racing, clock),
        method: (id: string) => extensions.methods.get(id),
        logger: gatehouse.logger,
      };
      let error: Error | null = null;
      await importUsers(text, deps).catch((err: Error) => (error = err));
      expect(error!.message).to.equal(
        'an identifier was taken while importing (by a user created meanwhile); nothing was imported',
      );
      const left = await sql.select<{ username: string }>("SELECT username FROM users WHERE username LIKE 'row%'");
      expect(left.map((r) => r.username)).to.deep.equal(['row200']);
      expect(await sql.select("SELECT id FROM credentials WHERE method = 'PASSWORD'")).to.deep.equal([]);
      expect(await sql.select("SELECT value FROM user_identifiers WHERE value LIKE 'row%'")).to.have.length(1);
    } finally {
      await gatehouse.close();
    }
  });
});
