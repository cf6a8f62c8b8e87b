import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createLogger, migrateDatabase, startPrimary } from '@gatehouse-auth/core';
import { testConfig } from '../support/config.js';
import { fixturePlugin } from '../support/paths.js';

/** What the fixture's `primary` hook recorded. */
const calls = () => ((globalThis as { primaryHookCalls?: string[] }).primaryHookCalls ??= []);

describe('startPrimary: the core’s share of the cluster primary (decision 82)', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-primary-'));
    calls().length = 0;
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('migrates the database, runs the primary hooks with their options, and closes them', async () => {
    const config = testConfig([{ path: fixturePlugin('primary-hook.js'), options: { port: 9999 } }], {
      database: { url: `sqlite:${path.join(dir, 'g.db')}` },
      maintenance: { purge_interval_seconds: 0 },
    });
    const primary = await startPrimary({ config, baseDir: dir }, createLogger('silent'));
    expect(primary.ports).to.deep.equal({ probe: 9999 });
    expect(calls()).to.deep.equal(['started @fixture/primary-hook 9999']);
    await primary.close();
    expect(calls()).to.deep.equal(['started @fixture/primary-hook 9999', 'closed']);
    // Migrated once, before any worker would start.
    expect(await migrateDatabase(config)).to.deep.equal([]);
  });

  it('without a plugin that has a primary hook, opens no listener and still migrates', async () => {
    const config = testConfig([], { database: { url: `sqlite:${path.join(dir, 'g.db')}` } });
    const primary = await startPrimary({ config, baseDir: dir }, createLogger('silent'));
    expect(primary.ports).to.deep.equal({});
    await primary.close();
    expect(await migrateDatabase(config)).to.deep.equal([]);
  });
});
