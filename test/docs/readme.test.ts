/**
 * The README's command blocks, run as pasted. The quick-start block names the scripts CI and
 * this suite run; the walkthrough (`npm run demo`, then the PUSH binding) runs for real, with two
 * substitutions a test needs: free ports instead of 3000/8080, and the simulator's state file in
 * a temporary directory (so `npx gatehouse-authenticator` becomes the same bin on PATH there).
 */
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../oauth/support.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** Every ```sh block of the README, in order. */
const shellBlocks = [...README.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!.trim());

describe('README: the command blocks work as pasted', function () {
  this.timeout(120_000);

  it('has the blocks this test knows: quick start, the demo, the PUSH binding, the plugin template', function () {
    expect(shellBlocks).to.have.length(4);
    expect(shellBlocks[0]).to.match(/^npm install && npm start .*\nnpm install && npm test /);
    expect(shellBlocks[1]).to.equal('npm run demo');
    expect(shellBlocks[2]).to.match(/^BINDING_URL=\$\(curl/);
    expect(shellBlocks[3]).to.match(/^npx @gatehouse-auth\/create-plugin fds/);
  });

  it('the quick start names scripts that exist: start serves, test runs the suite', function () {
    const scripts = (
      JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts.start).to.match(/node core\/cli\/bin\/gatehouse\.js start$/);
    expect(scripts.test).to.match(/mocha /);
    expect(scripts.demo).to.match(/tools\/demo\/bin\/gatehouse-demo\.js$/);
  });

  describe('the walkthrough', function () {
    let demo: ChildProcess;
    let banner = '';
    let port = 0;

    before(async function () {
      port = await freePort();
      const clientPort = await freePort();
      const dataDir = mkdtempSync(path.join(tmpdir(), 'gh-readme-'));
      // `npm run demo` with free ports; the demo's database in a temporary directory.
      demo = spawn('npm', ['run', 'demo', '--', '--port', String(port), '--client-port', String(clientPort)], {
        cwd: ROOT,
        env: { ...process.env, GATEHOUSE_DEMO_DATA: dataDir, GATEHOUSE_ADMIN_TOKEN: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      demo.stderr!.on('data', (chunk: Buffer) => (banner += chunk.toString()));
      await new Promise<void>((resolve, reject) => {
        demo.stdout!.on('data', (chunk: Buffer) => {
          banner += chunk.toString();
          if (banner.includes('Ctrl+C stops the demo.')) resolve();
        });
        demo.once('exit', (code) => reject(new Error(`the demo exited (${code}): ${banner}`)));
      });
    });

    after(function () {
      // The whole process group: npm and the demo under it.
      if (demo?.pid) process.kill(-demo.pid, 'SIGINT');
    });

    it('npm run demo prints the URL to open, alice’s password, a backup code, TOTP and the admin token', function () {
      expect(banner).to.match(/Open http:\/\/localhost:\d+\/ in a browser/);
      expect(banner).to.include('password  correct horse battery staple');
      expect(banner).to.match(/backup code {3}[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}/);
      expect(banner).to.match(/The admin console: http:\/\/localhost:\d+\/console \(alice is its admin/);
      expect(banner).to.match(/otpauth:\/\/totp\//);
      expect(banner).to.match(/export GATEHOUSE_ADMIN_TOKEN=[0-9a-f]{64}/);
    });

    it('the PUSH binding block, pasted after the export line the demo printed, binds the simulator', function () {
      const exportLine = /export GATEHOUSE_ADMIN_TOKEN=[0-9a-f]{64}/.exec(banner)![0];
      const block = shellBlocks[2]!
        .replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`)
        .replaceAll('npx gatehouse-authenticator', 'gatehouse-authenticator');
      const run = spawnSync('bash', ['-euo', 'pipefail', '-c', `${exportLine}\n${block}`], {
        cwd: mkdtempSync(path.join(tmpdir(), 'gh-phone-')),
        env: { ...process.env, PATH: `${path.join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` },
        encoding: 'utf8',
      });
      expect(run.status, run.stderr + run.stdout).to.equal(0);
      expect(run.stdout).to.match(/bound/i);
    });
  });
});
