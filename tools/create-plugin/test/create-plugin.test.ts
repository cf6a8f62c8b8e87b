/**
 * Issue 9: `create-gatehouse-plugin <method|fds|channel|grant> NAME` (`npx @gatehouse-auth/create-plugin`,
 * once `gatehouse plugin new`, decision 35 step 3) writes a package whose own test passes as
 * generated, whose code type-checks against the core's declarations, and which follows the
 * project's prettier style. The templates under templates/ are themselves formatted and linted.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import * as prettier from 'prettier';
import { cliEnv, type CliResult } from '../../../test/support/cli.js';
import { REPO_ROOT } from '../../../test/support/paths.js';

const TSC = path.join(REPO_ROOT, 'node_modules/.bin/tsc');
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/create-gatehouse-plugin.js');

/** Runs the bin from the repository root, as `npx @gatehouse-auth/create-plugin ...args` would. */
function runCli(args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, env: cliEnv() });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe('create-gatehouse-plugin (issue 9)', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-template-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const kind of ['method', 'fds', 'channel', 'grant']) {
    it(`${kind}: the generated package's test passes and its code type-checks`, async () => {
      const target = path.join(dir, kind);
      const made = await runCli([kind, `@acme/${kind}-sample`, '--dir', target]);
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
        `      npm install --save-dev ${path.join(REPO_ROOT, 'core')} ${path.join(REPO_ROOT, 'tools/testing')}   # the core and its testing kit, for the tests`,
        '      npm test',
      ]);
      const link = spawnSync(
        'npm',
        [
          'install',
          '--save-dev',
          '--no-audit',
          '--no-fund',
          path.join(REPO_ROOT, 'core'),
          path.join(REPO_ROOT, 'tools/testing'),
        ],
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

  it("is what `npm init @gatehouse-auth/plugin` and `npx @gatehouse-auth/create-plugin` run: the package's only bin", () => {
    const pkg = JSON.parse(readFileSync(path.join(path.dirname(BIN), '..', 'package.json'), 'utf8')) as {
      name: string;
      bin: Record<string, string>;
      files: string[];
    };
    expect(pkg.name).to.equal('@gatehouse-auth/create-plugin');
    expect(pkg.bin).to.deep.equal({ 'create-gatehouse-plugin': './bin/create-gatehouse-plugin.js' });
    expect(pkg.files).to.include('templates');
  });

  it('refuses an unknown kind (usage), a name that is no npm name, and a directory that is not empty', async () => {
    const usage = await runCli(['widget', '@acme/x']);
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.equal(
      'create-gatehouse-plugin: usage: create-gatehouse-plugin <method|fds|channel|grant> NAME [--dir DIR]\n',
    );
    const badName = await runCli(['fds', 'Not A Name', '--dir', path.join(dir, 'bad')]);
    expect(badName.code).to.equal(1);
    expect(badName.stderr).to.equal('create-gatehouse-plugin: plugin name "Not A Name" is not an npm package name\n');
    const again = await runCli(['fds', '@acme/fds-sample', '--dir', path.join(dir, 'fds')]);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.equal(`create-gatehouse-plugin: ${path.join(dir, 'fds')} exists and is not empty\n`);
  });
});
