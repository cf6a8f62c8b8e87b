/**
 * Issue 9: `gatehouse plugin new <method|fds|channel|grant> NAME` writes a package whose own
 * test passes as generated, whose code type-checks against the core's declarations, and which
 * follows the project's prettier style.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import * as prettier from 'prettier';
import { runCli } from '../support/cli.js';
import { REPO_ROOT } from '../support/paths.js';

const TSC = path.join(REPO_ROOT, 'node_modules/.bin/tsc');

describe('gatehouse plugin new (issue 9)', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-template-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const kind of ['method', 'fds', 'channel', 'grant']) {
    it(`${kind}: the generated package's test passes and its code type-checks`, async () => {
      const target = path.join(dir, kind);
      const made = await runCli(['plugin', 'new', kind, `@acme/${kind}-sample`, '--dir', target]);
      expect(made.stderr).to.equal('');
      expect(made.code).to.equal(0);
      const pkg = JSON.parse(readFileSync(path.join(target, 'package.json'), 'utf8')) as Record<
        string,
        Record<string, string>
      >;
      expect(pkg.peerDependencies).to.deep.equal({ '@gatehouse-auth/core': '^0.1.0' });
      // The next steps it prints, run as printed: link the core (this checkout's), then test.
      const steps = made.stdout.split('\n').slice(1, 4);
      expect(steps).to.deep.equal([
        `next: cd ${path.relative(REPO_ROOT, target)}`,
        `      npm install --save-dev ${path.join(REPO_ROOT, 'core')}   # the core, for the tests`,
        '      npm test',
      ]);
      const link = spawnSync(
        'npm',
        ['install', '--save-dev', '--no-audit', '--no-fund', path.join(REPO_ROOT, 'core')],
        {
          cwd: target,
          encoding: 'utf8',
        },
      );
      expect(link.status, link.stderr).to.equal(0);
      const test = spawnSync(process.execPath, ['--test'], { cwd: target, encoding: 'utf8' });
      expect(test.status, test.stdout + test.stderr).to.equal(0);
      expect(test.stdout).to.match(/# fail 0/);
      const types = spawnSync(
        TSC,
        [
          '--noEmit',
          '--allowJs',
          '--checkJs',
          '--strict',
          '--module',
          'nodenext',
          '--moduleResolution',
          'nodenext',
          '--target',
          'es2023',
          '--skipLibCheck',
          '--types',
          'node',
          '--typeRoots',
          path.join(REPO_ROOT, 'node_modules/@types'),
          'index.js',
        ],
        { cwd: target, encoding: 'utf8' },
      );
      expect(types.status, types.stdout).to.equal(0);
      // What an author gets already follows the style the examples/ in this repository are held to.
      const style = (await prettier.resolveConfig(path.join(REPO_ROOT, 'package.json'))) ?? {};
      for (const file of ['index.js', 'test/plugin.test.js']) {
        const source = readFileSync(path.join(target, file), 'utf8');
        expect(
          await prettier.check(source, { ...style, filepath: file }),
          `${file} is not prettier-formatted`,
        ).to.equal(true);
      }
    });
  }

  it('refuses an unknown kind (usage), a name that is no npm name, and a directory that is not empty', async () => {
    const usage = await runCli(['plugin', 'new', 'widget', '@acme/x']);
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.equal(
      'gatehouse: usage: gatehouse plugin new <method|fds|channel|grant> NAME [--dir DIR]\n',
    );
    const badName = await runCli(['plugin', 'new', 'fds', 'Not A Name', '--dir', path.join(dir, 'bad')]);
    expect(badName.code).to.equal(1);
    expect(badName.stderr).to.equal('gatehouse: plugin name "Not A Name" is not an npm package name\n');
    const again = await runCli(['plugin', 'new', 'fds', '@acme/fds-sample', '--dir', path.join(dir, 'fds')]);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.equal(`gatehouse: ${path.join(dir, 'fds')} exists and is not empty\n`);
  });
});
