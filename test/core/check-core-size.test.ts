import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { REPO_ROOT } from '../support/paths.js';

const SCRIPT = path.join(REPO_ROOT, '.ci', 'check-core-size.mjs');

/** A fake repository whose core/src holds `files` (name → line count) under the given settings. */
function fakeRepo(settings: { ceiling: number; target: number; slack: number }, files: Record<string, number>) {
  const root = mkdtempSync(path.join(os.tmpdir(), 'gh-check-core-size-'));
  mkdirSync(path.join(root, '.ci'));
  writeFileSync(path.join(root, '.ci', 'core-size.json'), JSON.stringify(settings));
  for (const [rel, lines] of Object.entries(files)) {
    const file = path.join(root, 'core', 'src', rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, 'const x = 1;\n'.repeat(lines));
  }
  return root;
}

function check(root: string) {
  const result = spawnSync(process.execPath, [SCRIPT, root], { cwd: REPO_ROOT, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('.ci/check-core-size.mjs: the core does not grow back (decision 58)', () => {
  const roots: string[] = [];
  const make = (settings: { ceiling: number; target: number; slack: number }, files: Record<string, number>) => {
    const root = fakeRepo(settings, files);
    roots.push(root);
    return root;
  };
  after(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

  it('passes on the repository itself (the ceiling in .ci/core-size.json is the count)', () => {
    const run = check(REPO_ROOT);
    expect(run.stderr).to.equal('');
    expect(run.status).to.equal(0);
    expect(run.stdout).to.match(/^core\/src: \d+ lines \(ceiling \d+, target 15000: \d+ to go\)\.\n$/);
  });

  it('counts every line of every .ts file under core/src, nested folders included, nothing else', () => {
    const root = make({ ceiling: 30, target: 10, slack: 5 }, { 'a.ts': 10, 'deep/er/b.ts': 20, 'c.js': 500 });
    const run = check(root);
    expect(run.status).to.equal(0);
    expect(run.stdout).to.contain('core/src: 30 lines (ceiling 30, target 10: 20 to go).');
  });

  it('fails when core/src grows past the ceiling, naming the overshoot and what to do', () => {
    const run = check(make({ ceiling: 30, target: 10, slack: 5 }, { 'a.ts': 31 }));
    expect(run.status).to.equal(1);
    expect(run.stderr).to.contain('core/src is 31 lines, 1 above its ceiling of 30');
    expect(run.stderr).to.contain('belongs in a plugin');
  });

  it('fails when core/src shrank by more than the slack until the ceiling is lowered', () => {
    const run = check(make({ ceiling: 30, target: 10, slack: 5 }, { 'a.ts': 24 }));
    expect(run.status).to.equal(1);
    expect(run.stderr).to.contain('lower "ceiling"');
    expect(run.stderr).to.contain('to 24');
    expect(check(make({ ceiling: 30, target: 10, slack: 5 }, { 'a.ts': 25 })).status).to.equal(0);
  });
});
