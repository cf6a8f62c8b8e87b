import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { REPO_ROOT } from '../support/paths.js';

/** A fake repository holding `files`, checked by one of the `.ci` scripts. */
function run(script: string, files: Record<string, string>) {
  const root = mkdtempSync(path.join(os.tmpdir(), 'gh-check-structure-'));
  try {
    for (const [rel, content] of Object.entries({
      'core/src/index.ts': '',
      'core/plugin-api/src/index.ts': '',
      ...files,
    })) {
      const file = path.join(root, rel);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
    const out = spawnSync(process.execPath, [path.join(REPO_ROOT, '.ci', script), root], { encoding: 'utf8' });
    return { status: out.status, output: out.stdout + out.stderr };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('.ci/check-core-names.mjs and check-cycles.mjs: the core and the contract both', () => {
  it('refuses a method id in the contract package as in the core', () => {
    const contract = run('check-core-names.mjs', { 'core/plugin-api/src/kit.ts': "export const m = 'TOTP';\n" });
    expect(contract.status).to.equal(1);
    expect(contract.output).to.contain('core/plugin-api/src/kit.ts:1: names method TOTP');
    const core = run('check-core-names.mjs', { 'core/src/a.ts': "export const m = 'SMS';\n" });
    expect(core.status).to.equal(1);
    expect(core.output).to.contain('core/src/a.ts:1: names method SMS');
    // A method id in a comment is documentation, not code.
    expect(run('check-core-names.mjs', { 'core/plugin-api/src/kit.ts': '// e.g. TOTP or "SMS"\n' }).status).to.equal(0);
  });

  it('finds an import cycle inside the contract package', () => {
    const cycle = run('check-cycles.mjs', {
      'core/plugin-api/src/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'core/plugin-api/src/b.ts': "import type { a } from './a.js';\nexport const b = 1 as unknown as typeof a;\n",
    });
    expect(cycle.status).to.equal(1);
    expect(cycle.output).to.match(/import cycle: core\/plugin-api\/src\/a\.ts <-> core\/plugin-api\/src\/b\.ts/);
    const none = run('check-cycles.mjs', {
      'core/plugin-api/src/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'core/plugin-api/src/b.ts': 'export const b = 1;\n',
    });
    expect(none.status).to.equal(0);
  });
});
