import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { BootError, buildApp, publishedSigningKeys } from '@gatehouse-auth/core';
import { testConfig, withHostedPage } from '../support/config.js';

/** The files under `dir` this process holds open (Linux: /proc/self/fd). */
function openFilesUnder(dir: string): string[] {
  const held: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) held.push(path.basename(target));
    } catch {
      // closed meanwhile
    }
  }
  return held;
}

describe('a start-up that fails closes the database it opened', function () {
  this.timeout(20000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-boot-failure-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a composition refused after the storage opened leaves no file of the database open', async () => {
    const file = path.join(dir, 'gatehouse.db');
    // consent_required without a plugin serving the consent page: refused once the plugins registered.
    const config = testConfig(withHostedPage([{ name: '@gatehouse-auth/method-password' }]), {
      database: { url: `sqlite:${file}` },
      apps: [
        {
          client_id: 'asks',
          token_endpoint_auth_method: 'none',
          redirect_uris: ['https://asks.example.test/cb'],
          grant_types: ['authorization_code'],
          login_stages: [['PASSWORD']],
          consent_required: true,
        },
      ],
    });
    const err = await buildApp(config).then(
      async (built) => {
        await built.close();
        return null;
      },
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(BootError);
    expect((err as BootError).code).to.equal('CONFIG_INVALID');
    expect(existsSync(file), 'the database was created').to.equal(true);
    expect(openFilesUnder(dir), 'connections still open').to.deep.equal([]);
  });

  it('a key command whose migration fails leaves no file of the database open', async () => {
    const file = path.join(dir, 'gatehouse.db');
    // A migrations table without the column the migrator reads: the migration fails at once.
    const broken = new Database(file);
    broken.exec('CREATE TABLE gatehouse_migrations (other INTEGER)');
    broken.close();
    const config = testConfig([], { database: { url: `sqlite:${file}` } });
    const err = await publishedSigningKeys(config).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err, 'the migration failed').to.be.instanceOf(Error);
    expect(openFilesUnder(dir), 'connections still open').to.deep.equal([]);
  });
});
