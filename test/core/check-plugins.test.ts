import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { REPO_ROOT } from '../support/paths.js';

const SCRIPT = path.join(REPO_ROOT, '.ci', 'check-plugins.mjs');

/** A fake repository: core/ and plugins/<name>/ with files given by relative path. */
function fakeRepo(files: Record<string, string | object>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'gh-check-plugins-'));
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return root;
}

const goodPackage = (name: string) => ({
  name: `@gatehouse-auth/${name}`,
  version: '0.1.0',
  type: 'module',
  peerDependencies: { '@gatehouse-auth/core': '^0.1.0' },
  dependencies: { otplib: '^13.0.0' },
  devDependencies: { '@gatehouse-auth/core': '*' },
});

/** A clean tree; `changes` replace or add files. */
function repo(changes: Record<string, string | object> = {}): string {
  return fakeRepo({
    'core/package.json': { name: '@gatehouse-auth/core', version: '0.1.0' },
    'core/src/index.ts': 'export const x = 1;\n',
    'plugins/method-a/package.json': goodPackage('method-a'),
    'plugins/method-a/src/index.ts': [
      "import { definePlugin, z } from '@gatehouse-auth/core';",
      "import type { AuthMethod } from '@gatehouse-auth/core';",
      "import { helper } from './helper.js';",
      '// an old note: we used to import @gatehouse-auth/core/dist/services.js here',
      "/* import x from '@gatehouse-auth/core/src/errors.js'; */",
      "const url = 'https://example.com/a//b';",
      'export default definePlugin({ name: "a", apiVersion: "^1", register() {} });',
      '',
    ].join('\n'),
    'plugins/method-a/src/helper.ts':
      'export const helper = () => \'from "@gatehouse-auth/core/x" in a string is fine\';\n',
    'plugins/method-a/test/a.test.ts': [
      "import { expect } from 'chai';",
      "import { fakeServices } from '@gatehouse-auth/testing';",
      "import plugin from '../src/index.js';",
      '',
    ].join('\n'),
    'plugins/fds-b/package.json': goodPackage('fds-b'),
    'plugins/fds-b/src/index.js': "export * from './rule.js';\n",
    'plugins/fds-b/dist/index.js': "import '@gatehouse-auth/core/dist/ignored-build-output.js';\n",
    ...changes,
  });
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function check(root: string, opts: { asCwd?: boolean } = {}): Run {
  const args = opts.asCwd ? [SCRIPT] : [SCRIPT, root];
  const result = spawnSync(process.execPath, args, { cwd: opts.asCwd ? root : REPO_ROOT, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('.ci/check-plugins.mjs', () => {
  const roots: string[] = [];
  const make = (changes: Record<string, string | object> = {}) => {
    const root = repo(changes);
    roots.push(root);
    return root;
  };
  after(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

  it('passes a clean tree (comments, strings, dist/ and devDependencies are not imports or dependencies)', () => {
    expect(check(make())).to.deep.equal({ status: 0, stdout: 'check-plugins: 2 plugins OK\n', stderr: '' });
  });

  it('uses the working directory when no root is given', () => {
    expect(check(make(), { asCwd: true }).status).to.equal(0);
    const bad = make({ 'plugins/fds-b/package.json': { name: 'b', version: '1.0.0' } });
    expect(check(bad, { asCwd: true })).to.deep.include({ status: 1 });
  });

  it('fails when a plugin lists @gatehouse-auth/core in dependencies', () => {
    const pkg = { ...goodPackage('fds-b'), dependencies: { '@gatehouse-auth/core': '^0.1.0' } };
    expect(check(make({ 'plugins/fds-b/package.json': pkg }))).to.deep.equal({
      status: 1,
      stdout: '',
      stderr: 'plugins/fds-b/package.json: lists @gatehouse-auth/core in dependencies; it must be a peerDependency\n',
    });
  });

  it('fails when a plugin lacks @gatehouse-auth/core in peerDependencies', () => {
    const { peerDependencies: _omit, ...pkg } = goodPackage('method-a');
    expect(check(make({ 'plugins/method-a/package.json': pkg }))).to.deep.equal({
      status: 1,
      stdout: '',
      stderr: 'plugins/method-a/package.json: does not list @gatehouse-auth/core in peerDependencies\n',
    });
  });

  it('fails for a plugin directory without package.json', () => {
    const root = make({ 'plugins/stray/src/index.ts': 'export {};\n' });
    expect(check(root).stderr).to.equal('plugins/stray: has no package.json\n');
  });

  it('fails on a deep import of core in src, naming file and line', () => {
    const root = make({
      'plugins/method-a/src/helper.ts':
        "import type { Sql } from '@gatehouse-auth/core/dist/storage/sql.js';\nexport {};\n",
    });
    expect(check(root)).to.deep.equal({
      status: 1,
      stdout: '',
      stderr:
        "plugins/method-a/src/helper.ts:1: imports the deep path '@gatehouse-auth/core/dist/storage/sql.js'; import from '@gatehouse-auth/core'\n",
    });
  });

  it('fails on an import of the contract package, which plugins get through the core', () => {
    const root = make({
      'plugins/method-a/src/helper.ts':
        "import { definePlugin } from '@gatehouse-auth/plugin-api';\nimport type { WebApi } from '@gatehouse-auth/plugin-api/dist/web.js';\n",
    });
    expect(check(root)).to.deep.equal({
      status: 1,
      stdout: '',
      stderr: [
        "plugins/method-a/src/helper.ts:1: imports '@gatehouse-auth/plugin-api'; import the contract from '@gatehouse-auth/core', which re-exports it",
        "plugins/method-a/src/helper.ts:2: imports '@gatehouse-auth/plugin-api/dist/web.js'; import the contract from '@gatehouse-auth/core', which re-exports it",
        '',
      ].join('\n'),
    });
  });

  it('fails on a deep import in a test, the old kit path @gatehouse-auth/core/testing too', () => {
    const root = make({
      'plugins/method-a/test/deep.test.ts': [
        "import { x } from '@gatehouse-auth/testing';",
        "import { y } from '@gatehouse-auth/core/src/errors.js';",
        "import { fakeUser } from '@gatehouse-auth/core/testing';",
        '',
      ].join('\n'),
    });
    expect(check(root).stderr.trimEnd().split('\n')).to.deep.equal([
      "plugins/method-a/test/deep.test.ts:2: imports the deep path '@gatehouse-auth/core/src/errors.js'; import from '@gatehouse-auth/core'",
      "plugins/method-a/test/deep.test.ts:3: imports '@gatehouse-auth/core/testing', which is now '@gatehouse-auth/testing'",
    ]);
  });

  it('allows @gatehouse-auth/testing only under test/', () => {
    const root = make({
      'plugins/fds-b/src/rule.js': "export { fakeServices } from '@gatehouse-auth/testing';\n",
    });
    expect(check(root)).to.deep.equal({
      status: 1,
      stdout: '',
      stderr: "plugins/fds-b/src/rule.js:1: imports '@gatehouse-auth/testing', which only tests may use\n",
    });
  });

  it('holds the CLI (core/cli) to the same rules: the core as a peer, its root export only (decision 73)', () => {
    const cli = {
      name: '@gatehouse-auth/cli',
      version: '0.1.0',
      bin: { gatehouse: './bin/gatehouse.js' },
      peerDependencies: { '@gatehouse-auth/core': '^0.1.0' },
    };
    const clean = make({
      'core/cli/package.json': cli,
      'core/cli/src/main.ts': "import { buildApp } from '@gatehouse-auth/core';\nimport { table } from './table.js';\n",
      'core/cli/src/table.ts': 'export const table = 1;\n',
    });
    expect(check(clean)).to.deep.equal({ status: 0, stdout: 'check-plugins: 2 plugins and the CLI OK\n', stderr: '' });
    const { peerDependencies: _omit, ...noPeer } = cli;
    const bad = make({
      'core/cli/package.json': { ...noPeer, dependencies: { '@gatehouse-auth/core': '0.1.0' } },
      'core/cli/src/main.ts': [
        "import { migrate } from '../../src/storage/migrate.js';",
        "import type { CliContext } from '@gatehouse-auth/plugin-api';",
        "import { runPrimary } from '@gatehouse-auth/core/dist/cluster.js';",
        '',
      ].join('\n'),
    });
    expect(check(bad).stderr.trimEnd().split('\n')).to.deep.equal([
      'core/cli/package.json: lists @gatehouse-auth/core in dependencies; it must be a peerDependency',
      'core/cli/package.json: does not list @gatehouse-auth/core in peerDependencies',
      "core/cli/src/main.ts:1: imports '../../src/storage/migrate.js', a path into core/; import from '@gatehouse-auth/core'",
      "core/cli/src/main.ts:2: imports '@gatehouse-auth/plugin-api'; import the contract from '@gatehouse-auth/core', which re-exports it",
      "core/cli/src/main.ts:3: imports the deep path '@gatehouse-auth/core/dist/cluster.js'; import from '@gatehouse-auth/core'",
    ]);
  });

  it('holds the testing kit (tools/testing) to the same rules: the core as a peer, its root export only', () => {
    const kit = {
      name: '@gatehouse-auth/testing',
      version: '0.1.0',
      peerDependencies: { '@gatehouse-auth/core': '^0.1.0' },
      devDependencies: { '@gatehouse-auth/core': '^0.1.0' },
    };
    const clean = make({
      'tools/testing/package.json': kit,
      'tools/testing/src/index.ts': "import { methodProblems } from '@gatehouse-auth/core';\nexport {};\n",
    });
    expect(check(clean)).to.deep.equal({
      status: 0,
      stdout: 'check-plugins: 2 plugins and the testing kit OK\n',
      stderr: '',
    });
    const { peerDependencies: _omit, ...noPeer } = kit;
    const bad = make({
      'tools/testing/package.json': noPeer,
      'tools/testing/src/index.ts': [
        "import { SecretBox } from '@gatehouse-auth/core/dist/util/crypto.js';",
        "import { storedEvent } from '../../../core/src/verification/user-history.js';",
        '',
      ].join('\n'),
    });
    expect(check(bad).stderr.trimEnd().split('\n')).to.deep.equal([
      'tools/testing/package.json: does not list @gatehouse-auth/core in peerDependencies',
      "tools/testing/src/index.ts:1: imports the deep path '@gatehouse-auth/core/dist/util/crypto.js'; import from '@gatehouse-auth/core'",
      "tools/testing/src/index.ts:2: imports '../../../core/src/verification/user-history.js', a path into core/; import from '@gatehouse-auth/core'",
    ]);
  });

  it('holds the site kit (tools/site-kit) to the same rules; plugins import its root export only', () => {
    const root = make({
      'tools/site-kit/package.json': { name: '@gatehouse-auth/site-kit', version: '0.1.0' },
      'tools/site-kit/src/index.ts': "import { html } from '@gatehouse-auth/core/dist/login/html.js';\nexport {};\n",
      'plugins/method-a/src/page.ts': [
        "import { Site } from '@gatehouse-auth/site-kit';",
        "import { when } from '@gatehouse-auth/site-kit/dist/layout.js';",
        '',
      ].join('\n'),
    });
    expect(check(root).stderr.trimEnd().split('\n')).to.deep.equal([
      "plugins/method-a/src/page.ts:2: imports the deep path '@gatehouse-auth/site-kit/dist/layout.js'; import from '@gatehouse-auth/site-kit'",
      'tools/site-kit/package.json: does not list @gatehouse-auth/core in peerDependencies',
      "tools/site-kit/src/index.ts:1: imports the deep path '@gatehouse-auth/core/dist/login/html.js'; import from '@gatehouse-auth/core'",
    ]);
  });

  it('fails on relative paths into core/, in every import form', () => {
    const root = make({
      'plugins/method-a/src/nested/deep.ts': [
        'import {',
        '  BootError,',
        "} from '../../../../core/src/errors.js';",
        "export * from '../../../../core/dist/index.js';",
        "const lazy = () => import('../../../../core/src/gatehouse.js');",
        "const cjs = require('../../../../core');",
        "import '../../../method-b/src/index.js';",
        '',
      ].join('\n'),
    });
    const lines = check(root).stderr.trimEnd().split('\n');
    expect(lines).to.deep.equal([
      "plugins/method-a/src/nested/deep.ts:3: imports '../../../../core/src/errors.js', a path into core/; import from '@gatehouse-auth/core'",
      "plugins/method-a/src/nested/deep.ts:4: imports '../../../../core/dist/index.js', a path into core/; import from '@gatehouse-auth/core'",
      "plugins/method-a/src/nested/deep.ts:5: imports '../../../../core/src/gatehouse.js', a path into core/; import from '@gatehouse-auth/core'",
      "plugins/method-a/src/nested/deep.ts:6: imports '../../../../core', a path into core/; import from '@gatehouse-auth/core'",
    ]);
  });

  it('reports every problem, one line each', () => {
    const root = make({
      'plugins/fds-b/package.json': { name: 'b', dependencies: { '@gatehouse-auth/core': '*' } },
      'plugins/method-a/src/helper.ts': "import '@gatehouse-auth/core/dist/x.js';\n",
    });
    const run = check(root);
    expect(run.status).to.equal(1);
    expect(run.stderr.trimEnd().split('\n')).to.deep.equal([
      'plugins/fds-b/package.json: lists @gatehouse-auth/core in dependencies; it must be a peerDependency',
      'plugins/fds-b/package.json: does not list @gatehouse-auth/core in peerDependencies',
      "plugins/method-a/src/helper.ts:1: imports the deep path '@gatehouse-auth/core/dist/x.js'; import from '@gatehouse-auth/core'",
    ]);
  });
});

describe('.ci/check-core-names.mjs: the core names no method', () => {
  const NAMES = path.join(REPO_ROOT, '.ci', 'check-core-names.mjs');
  const run = (root: string) => spawnSync(process.execPath, [NAMES, root], { encoding: 'utf8' });

  it('passes on the repository itself', () => {
    const result = run(REPO_ROOT);
    expect(result.stderr).to.equal('');
    expect(result.status).to.equal(0);
  });

  it('fails on a method id in code, naming the line; comments do not count', () => {
    const root = fakeRepo({
      'core/src/ok.ts': "/** e.g. 'TOTP' */\nexport const a = 1; // not 'PASSWORD' either\n",
      'core/src/bad.ts': "export const x = 1;\nif (method.id === 'PASSWORD') revoke();\nconst s = `FIDO2`;\n",
    });
    try {
      const result = run(root);
      expect(result.status).to.equal(1);
      expect(result.stderr.trim().split('\n')).to.deep.equal([
        'core/src/bad.ts:2: names method PASSWORD; methods come from the registry',
        'core/src/bad.ts:3: names method FIDO2; methods come from the registry',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
