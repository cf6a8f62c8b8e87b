import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { REPO_ROOT } from '../support/paths.js';

const SCRIPT = path.join(REPO_ROOT, '.ci', 'check-core-imports.mjs');

/** A fake repository: a clean core/src plus plugins/ and tools/; `changes` replace or add files. */
function fakeRepo(changes: Record<string, string> = {}): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'gh-check-core-imports-'));
  const files: Record<string, string> = {
    'core/src/index.ts': [
      "import { z } from 'zod';",
      "import type { Extensions } from './plugins/loader.js';",
      "export { definePlugin } from '@gatehouse-auth/core';",
      "// the loader imports '@gatehouse-auth/method-totp' by the name in config, not here",
      "/* import x from '../../plugins/method-totp/src/index.js'; */",
      "const template = `import plugin from '@gatehouse-auth/method-example';`;",
      "const name = '@gatehouse-auth/method-totp';",
      'export { z, template, name };',
      'export type { Extensions };',
      '',
    ].join('\n'),
    'core/src/plugins/loader.ts': 'export const load = (name: string) => import(name);\nexport type Extensions = {};\n',
    'plugins/method-a/src/index.ts':
      "import { definePlugin } from '@gatehouse-auth/core';\nexport default definePlugin;\n",
    'tools/demo/src/cli.ts': "import '@gatehouse-auth/method-a';\n",
    ...changes,
  };
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  return root;
}

function check(root: string, opts: { asCwd?: boolean } = {}) {
  const args = opts.asCwd ? [SCRIPT] : [SCRIPT, root];
  const result = spawnSync(process.execPath, args, { cwd: opts.asCwd ? root : REPO_ROOT, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('.ci/check-core-imports.mjs: the core imports no plugin, the contract no core', () => {
  const roots: string[] = [];
  const make = (changes: Record<string, string> = {}) => {
    const root = fakeRepo(changes);
    roots.push(root);
    return root;
  };
  after(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

  it('passes on the repository itself', () => {
    const run = check(REPO_ROOT);
    expect(run.stderr).to.equal('');
    expect(run.status).to.equal(0);
  });

  it('passes a clean tree (its own paths, @gatehouse-auth/core, comments and strings are fine)', () => {
    expect(check(make())).to.deep.equal({
      status: 0,
      stdout: 'check-core-imports: 2 core modules, none imports a plugin\n',
      stderr: '',
    });
  });

  it('uses the working directory when no root is given', () => {
    expect(check(make(), { asCwd: true }).status).to.equal(0);
    const bad = make({ 'core/src/bad.ts': "import '@gatehouse-auth/method-a';\n" });
    expect(check(bad, { asCwd: true }).status).to.equal(1);
  });

  it('fails on a plugin package, a tool or the testing kit, naming file and line, type imports included', () => {
    const root = make({
      'core/src/console/page.ts': [
        "import { z } from 'zod';",
        "import type { Totp } from '@gatehouse-auth/method-totp';",
        "export { fakeServices } from '@gatehouse-auth/testing';",
        "const demo = () => import('@gatehouse-auth/demo/bin/x.js');",
        '',
      ].join('\n'),
    });
    expect(check(root)).to.deep.equal({
      status: 1,
      stdout: '',
      stderr: [
        "core/src/console/page.ts:2: imports '@gatehouse-auth/method-totp'; the core must not depend on @gatehouse-auth/method-totp",
        "core/src/console/page.ts:3: imports '@gatehouse-auth/testing'; the core must not depend on @gatehouse-auth/testing",
        "core/src/console/page.ts:4: imports '@gatehouse-auth/demo/bin/x.js'; the core must not depend on @gatehouse-auth/demo",
        '',
      ].join('\n'),
    });
  });

  it('fails on relative and absolute paths into plugins/ or tools/, in every import form', () => {
    const root = make({
      'core/src/a/b.ts': [
        'import {',
        '  definePlugin,',
        "} from '../../../plugins/method-a/src/index.js';",
        "export * from '../../../tools/demo/src/cli.js';",
        "const cjs = require('../../../plugins');",
        "import '../../../pluginsX/not-a-plugin.js';",
        "import '../index.js';",
        '',
      ].join('\n'),
    });
    const absolute = path.join(root, 'plugins', 'method-a', 'src', 'index.js');
    writeFileSync(path.join(root, 'core/src/abs.ts'), `import '${absolute}';\n`);
    const run = check(root);
    expect(run.status).to.equal(1);
    expect(run.stderr.trimEnd().split('\n')).to.deep.equal([
      "core/src/a/b.ts:3: imports '../../../plugins/method-a/src/index.js', a path into plugins/; the core must not depend on it",
      "core/src/a/b.ts:4: imports '../../../tools/demo/src/cli.js', a path into tools/; the core must not depend on it",
      "core/src/a/b.ts:5: imports '../../../plugins', a path into plugins/; the core must not depend on it",
      `core/src/abs.ts:1: imports '${absolute}', a path into plugins/; the core must not depend on it`,
    ]);
  });

  it('fails on a path into the CLI (core/cli) or its package: a front-end on the core (decision 73)', () => {
    const root = make({
      'core/cli/src/table.ts': 'export const table = 1;\n',
      'core/src/keys.ts':
        "import { table } from '../cli/src/table.js';\nimport '@gatehouse-auth/cli';\nexport { table };\n",
    });
    expect(check(root).stderr.trimEnd().split('\n')).to.deep.equal([
      "core/src/keys.ts:1: imports '../cli/src/table.js', a path into core/cli/; the core must not depend on it",
      "core/src/keys.ts:2: imports '@gatehouse-auth/cli'; the core must not depend on @gatehouse-auth/cli",
    ]);
  });

  it('lets the core import the contract package, and counts the contract modules', () => {
    const root = make({
      'core/src/plugins/api.ts':
        "import type { Services } from '@gatehouse-auth/plugin-api';\nexport type { Services };\n",
      'core/plugin-api/src/index.ts': "export * from './values.js';\nimport type { Logger } from 'pino';\n",
      'core/plugin-api/src/values.ts': 'export type JsonObject = Record<string, unknown>;\n',
    });
    expect(check(root)).to.deep.equal({
      status: 0,
      stdout: 'check-core-imports: 3 core modules, none imports a plugin; 2 contract modules, none imports the core\n',
      stderr: '',
    });
  });

  it('fails when the contract imports the core, a plugin or a path out of its package', () => {
    const root = make({
      'core/plugin-api/src/index.ts': [
        "import type { Services } from '@gatehouse-auth/core';",
        "export { pickLocale } from '@gatehouse-auth/plugin-api';",
        "import type { WebDeps } from '../../src/plugins/web.js';",
        "const totp = () => import('../../../plugins/method-a/src/index.js');",
        "export * from './values.js';",
        '',
      ].join('\n'),
      'core/plugin-api/src/values.ts': 'export type JsonObject = Record<string, unknown>;\n',
    });
    expect(check(root)).to.deep.equal({
      status: 1,
      stdout: '',
      stderr: [
        "core/plugin-api/src/index.ts:1: imports '@gatehouse-auth/core'; the plugin contract must not depend on @gatehouse-auth/core",
        "core/plugin-api/src/index.ts:2: imports '@gatehouse-auth/plugin-api'; the plugin contract must not depend on @gatehouse-auth/plugin-api",
        "core/plugin-api/src/index.ts:3: imports '../../src/plugins/web.js', a path out of core/plugin-api/ (core/src/plugins/web.js); the plugin contract must not depend on it",
        "core/plugin-api/src/index.ts:4: imports '../../../plugins/method-a/src/index.js', a path out of core/plugin-api/ (plugins/method-a/src/index.js); the plugin contract must not depend on it",
        '',
      ].join('\n'),
    });
  });

  it('still refuses a plugin package in the core beside the allowed contract', () => {
    const root = make({
      'core/src/x.ts': "import '@gatehouse-auth/plugin-api';\nimport '@gatehouse-auth/plugin-apix';\n",
    });
    expect(check(root).stderr).to.equal(
      "core/src/x.ts:2: imports '@gatehouse-auth/plugin-apix'; the core must not depend on @gatehouse-auth/plugin-apix\n",
    );
  });
});
