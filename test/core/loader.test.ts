import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { BootError, buildApp, resolvePlugins, type Gatehouse } from '@gatehouse-auth/core';
import { runCli, type CliResult } from '../support/cli.js';
import { testConfig, type PluginEntryInput } from '../support/config.js';
import { fixtureConfig, fixturePlugin, REPO_ROOT } from '../support/paths.js';

/** Awaits `promise`, expecting it to reject with a BootError; returns it. */
async function bootErrorOf(promise: Promise<unknown>): Promise<BootError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(BootError);
    return err as BootError;
  }
  expect.fail('expected a BootError');
}

/** buildApp with only these plugins; closes it again if it unexpectedly succeeds. */
async function buildFailure(plugins: PluginEntryInput[]): Promise<BootError> {
  return bootErrorOf(
    buildApp(testConfig(plugins)).then(async (gatehouse) => {
      await gatehouse.close();
      return gatehouse;
    }),
  );
}

const byPath = (name: string, options?: Record<string, unknown>): PluginEntryInput =>
  options ? { path: fixturePlugin(name), options } : { path: fixturePlugin(name) };

/**
 * A third party's plugin: a package outside the source tree with its own package.json and
 * plain JS that does not import the core.
 */
function writeThirdPartyPlugin(dir: string, opts: { name: string; version: string; packageJson?: object }): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: opts.name, version: opts.version, type: 'module', main: 'index.js', ...opts.packageJson }),
  );
  writeFileSync(
    path.join(dir, 'index.js'),
    `export default {
  name: ${JSON.stringify(opts.name)},
  apiVersion: '^1',
  register(api) {
    api.fdsRules.add({ id: 'geo-distance', evaluate: async () => ({ action: 'allow' }) });
    const router = api.services.http.createRouter();
    router.get('/whoami', (_req, res) => res.json({ name: api.plugin.name, version: api.plugin.version }));
    api.routes.add({ path: '/geo', router });
  },
};
`,
  );
}

describe('plugin loader', () => {
  describe('loading', () => {
    let gatehouse: Gatehouse | undefined;
    afterEach(async () => {
      await gatehouse?.close();
      gatehouse = undefined;
    });

    it('loads a valid plugin by path: its FDS rule, its route, its version and only its own options', async () => {
      gatehouse = await buildApp(testConfig([byPath('valid', { greeting: 'hi' })]));
      expect(gatehouse.plugins).to.deep.equal([
        {
          name: '@fixture/valid',
          version: '2.3.4',
          apiVersion: '^1',
          source: path.join(fixturePlugin('valid'), 'index.js'),
          contributes: { fdsRules: ['fixture-allow'], routes: ['/fixture'] },
        },
      ]);
      const { extensions } = gatehouse.container.cradle;
      expect(extensions.fdsRules.ids()).to.deep.equal(['fixture-allow']);
      expect(extensions.fdsRules.ownerOf('fixture-allow')).to.equal('@fixture/valid');
      const res = await request(gatehouse.app).get('/fixture/hello').expect(200);
      expect(res.body).to.deep.equal({
        hello: 'world',
        plugin: '@fixture/valid',
        version: '2.3.4',
        options: { greeting: 'hi' },
      });
    });

    it('resolves a relative path against the config file directory (baseDir)', async () => {
      const resolved = await resolvePlugins(
        testConfig([{ path: '../plugins/base.js' }]).plugins,
        path.dirname(fixtureConfig('valid.yaml')),
      );
      expect(resolved.map((r) => [r.plugin.name, r.source])).to.deep.equal([
        ['@fixture/base', fixturePlugin('base.js')],
      ]);
    });

    describe('a third-party plugin outside the source tree, loaded by path', () => {
      let dir: string;
      before(() => {
        dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'gh-third-party-')));
        writeThirdPartyPlugin(path.join(dir, 'fds-geo'), { name: '@acme/fds-geo', version: '1.2.3' });
      });
      after(() => rmSync(dir, { recursive: true, force: true }));

      it('loads it and reports its own package version', async () => {
        gatehouse = await buildApp(testConfig([{ path: path.join(dir, 'fds-geo') }]));
        expect(gatehouse.plugins).to.deep.equal([
          {
            name: '@acme/fds-geo',
            version: '1.2.3',
            apiVersion: '^1',
            source: path.join(dir, 'fds-geo', 'index.js'),
            contributes: { fdsRules: ['geo-distance'], routes: ['/geo'] },
          },
        ]);
        const res = await request(gatehouse.app).get('/geo/whoami').expect(200);
        expect(res.body).to.deep.equal({ name: '@acme/fds-geo', version: '1.2.3' });
      });

      it('loads it by a path relative to the config directory', async () => {
        const resolved = await resolvePlugins(testConfig([{ path: './fds-geo' }]).plugins, dir);
        expect(resolved.map((r) => [r.plugin.name, r.version])).to.deep.equal([['@acme/fds-geo', '1.2.3']]);
      });
    });

    it('registers dependencies first even when the config lists them later', async () => {
      gatehouse = await buildApp(testConfig([byPath('needs-base.js'), byPath('valid'), byPath('base.js')]));
      expect(gatehouse.plugins.map((p) => p.name)).to.deep.equal([
        '@fixture/base',
        '@fixture/needs-base',
        '@fixture/valid',
      ]);
      expect(gatehouse.container.cradle.extensions.fdsRules.ids()).to.deep.equal([
        'base-rule',
        'needs-base-rule',
        'fixture-allow',
      ]);
    });

    it('validates options with the plugin schema and passes the parsed value (defaults applied)', async () => {
      gatehouse = await buildApp(testConfig([byPath('with-options.js', { x: 3 })]));
      expect(gatehouse.plugins[0]!.contributes).to.deep.equal({ fdsRules: ['options-3-none'] });
    });
  });

  describe('failures stop start-up with a BootError naming the plugin', () => {
    it('wrong apiVersion: PLUGIN_API_MISMATCH', async () => {
      const err = await buildFailure([byPath('wrong-api.js')]);
      expect(err.code).to.equal('PLUGIN_API_MISMATCH');
      expect(err.message).to.equal(
        'plugin @fixture/wrong-api (plugins[0]): needs plugin API ^2, this core provides 1.3.0',
      );
    });

    it('missing package by name: PLUGIN_NOT_FOUND', async () => {
      const err = await buildFailure([byPath('base.js'), { name: '@acme/does-not-exist' }]);
      expect(err.code).to.equal('PLUGIN_NOT_FOUND');
      expect(err.message).to.equal(
        'plugin @acme/does-not-exist (plugins[1]): package not found; if it is a third-party plugin, check the name with its publisher before installing it',
      );
    });

    it('a misspelt bundled plugin: the error names the nearest installed one, never npm install of the typo', async () => {
      const err = await buildFailure([{ name: '@gatehouse-auth/method-totpp' }]);
      expect(err.code).to.equal('PLUGIN_NOT_FOUND');
      expect(err.message).to.equal(
        'plugin @gatehouse-auth/method-totpp (plugins[0]): package not found; did you mean @gatehouse-auth/method-totp?',
      );
    });

    it("a name in the @gatehouse scope (another project's on npm) is never loaded: the error names ours", async () => {
      const err = await buildFailure([{ name: '@gatehouse/method-totp' }]);
      expect(err.code).to.equal('PLUGIN_NOT_FOUND');
      expect(err.message).to.equal(
        "plugin @gatehouse/method-totp (plugins[0]): Gatehouse's packages are @gatehouse-auth/method-totp; the @gatehouse scope on npm belongs to another project",
      );
    });

    it('missing path: PLUGIN_NOT_FOUND', async () => {
      const missing = fixturePlugin('no-such-plugin.js');
      const err = await buildFailure([{ path: missing }]);
      expect(err.code).to.equal('PLUGIN_NOT_FOUND');
      expect(err.message).to.equal(`plugin ${missing} (plugins[0]): no file or directory at ${missing}`);
    });

    it('a directory without an entry point: PLUGIN_NOT_FOUND', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-empty-plugin-'));
      try {
        const err = await buildFailure([{ path: dir }]);
        expect(err.code).to.equal('PLUGIN_NOT_FOUND');
        expect(err.message).to.equal(`plugin ${dir} (plugins[0]): ${dir} has no entry point`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('the same plugin twice: PLUGIN_DUPLICATE', async () => {
      const err = await buildFailure([byPath('valid'), byPath('base.js'), byPath('valid')]);
      expect(err.code).to.equal('PLUGIN_DUPLICATE');
      expect(err.message).to.equal('plugin @fixture/valid (plugins[2]): already loaded as plugins[0]');
    });

    it('two plugins adding the same FDS rule id: PLUGIN_DUPLICATE_ID naming both', async () => {
      const err = await buildFailure([byPath('rule-a.js'), byPath('rule-b.js')]);
      expect(err.code).to.equal('PLUGIN_DUPLICATE_ID');
      expect(err.message).to.equal(
        'plugin @fixture/rule-b: FDS rule "shared-rule" is already registered by plugin @fixture/rule-a',
      );
    });

    it('a throw in register: PLUGIN_REGISTER_FAILED with the cause', async () => {
      const err = await buildFailure([byPath('base.js'), byPath('throws.js')]);
      expect(err.code).to.equal('PLUGIN_REGISTER_FAILED');
      expect(err.message).to.equal('plugin @fixture/throws: register failed: cannot reach the provider');
      expect((err.cause as Error).message).to.equal('cannot reach the provider');
    });

    it('a declared dependency that is not configured: PLUGIN_MISSING_DEPENDENCY', async () => {
      const err = await buildFailure([byPath('needs-absent.js')]);
      expect(err.code).to.equal('PLUGIN_MISSING_DEPENDENCY');
      expect(err.message).to.equal(
        'plugin @fixture/needs-absent: depends on plugin @fixture/absent, which is not configured',
      );
    });

    it('a dependency cycle: PLUGIN_DEPENDENCY_CYCLE', async () => {
      const err = await buildFailure([byPath('cycle-a.js'), byPath('cycle-b.js')]);
      expect(err.code).to.equal('PLUGIN_DEPENDENCY_CYCLE');
      expect(err.message).to.equal(
        'plugin @fixture/cycle-a: dependency cycle @fixture/cycle-a -> @fixture/cycle-b -> @fixture/cycle-a',
      );
    });

    it('invalid options: PLUGIN_OPTIONS_INVALID with the key path plugins[N].options.x', async () => {
      const err = await buildFailure([byPath('base.js'), byPath('with-options.js', { label: 'a' })]);
      expect(err.code).to.equal('PLUGIN_OPTIONS_INVALID');
      expect(err.message).to.equal('plugin @fixture/with-options: plugins[1].options.x: is required');
    });

    it('invalid option type: PLUGIN_OPTIONS_INVALID saying what the type must be', async () => {
      const err = await buildFailure([byPath('with-options.js', { x: 'three' })]);
      expect(err.code).to.equal('PLUGIN_OPTIONS_INVALID');
      expect(err.message).to.equal('plugin @fixture/with-options: plugins[0].options.x: must be a number');
    });

    it('a module that is not a plugin: PLUGIN_INVALID listing what is missing', async () => {
      const file = fixturePlugin('not-a-plugin.js');
      const err = await buildFailure([{ path: file }]);
      expect(err.code).to.equal('PLUGIN_INVALID');
      expect(err.message).to.equal(
        `plugin ${file} (plugins[0]): not a Gatehouse plugin: has no name, declares no apiVersion, has no register function`,
      );
    });

    it('a plugin whose import fails: PLUGIN_IMPORT_FAILED', async () => {
      const file = fixturePlugin('import-fails.js');
      const err = await buildFailure([{ path: file }]);
      expect(err.code).to.equal('PLUGIN_IMPORT_FAILED');
      expect(err.message).to.match(
        new RegExp(`^plugin ${escape(file)} \\(plugins\\[0\\]\\): import failed: .*this-file-does-not-exist\\.js`),
      );
    });

    it('resolvePlugins checks the apiVersion before anything registers', async () => {
      const err = await bootErrorOf(
        resolvePlugins(testConfig([byPath('base.js'), byPath('wrong-api.js')]).plugins, '/'),
      );
      expect(err.code).to.equal('PLUGIN_API_MISMATCH');
      expect(err.message).to.match(/^plugin @fixture\/wrong-api \(plugins\[1\]\)/);
    });
  });

  describe('through the CLI', function () {
    this.timeout(30_000);

    /** `gatehouse start --config <fixture>` on a free port, for each failing fixture, in parallel. */
    const failing = {
      'wrong-api.yaml':
        'gatehouse: plugin @fixture/wrong-api (plugins[0]): needs plugin API ^2, this core provides 1.3.0',
      'missing-package.yaml':
        'gatehouse: plugin @acme/does-not-exist (plugins[0]): package not found; if it is a third-party plugin, check the name with its publisher before installing it',
      'missing-path.yaml': `gatehouse: plugin ../plugins/no-such-plugin.js (plugins[0]): no file or directory at ${fixturePlugin('no-such-plugin.js')}`,
      'duplicate-id.yaml':
        'gatehouse: plugin @fixture/rule-b: FDS rule "shared-rule" is already registered by plugin @fixture/rule-a',
      'throws.yaml': 'gatehouse: plugin @fixture/throws: register failed: cannot reach the provider',
      'missing-dependency.yaml':
        'gatehouse: plugin @fixture/needs-absent: depends on plugin @fixture/absent, which is not configured',
      'bad-redirect.yaml': 'gatehouse: apps[0].redirect_uris[1]: must be an absolute URL',
    } as const;
    const results = new Map<string, CliResult>();

    before(async () => {
      await Promise.all(
        Object.keys(failing).map(async (name) => {
          results.set(name, await runCli(['start', '--config', fixtureConfig(name)], { env: { PORT: '0' } }));
        }),
      );
    });

    for (const [name, line] of Object.entries(failing)) {
      it(`start with ${name} exits 1 with one line on stderr: ${line.slice(0, 60)}…`, () => {
        const result = results.get(name)!;
        expect(result.stderr).to.equal(`${line}\n`);
        expect(result.code).to.equal(1);
        expect(result.stdout).not.to.include('gatehouse listening');
      });
    }

    it('start with invalid plugin options names plugins[0].options.x', async () => {
      const result = await runCli(['start', '--config', fixtureConfig('bad-options.yaml')], { env: { PORT: '0' } });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(/^gatehouse: plugin @fixture\/with-options: plugins\[0\]\.options\.x: [^\n]+\n$/);
    });

    it('config check: OK with the file and counts', async () => {
      const file = fixtureConfig('valid.yaml');
      const result = await runCli(['config', 'check', '--config', file]);
      expect(result).to.deep.include({ code: 0, stderr: '', stdout: `config OK: ${file} (3 plugins, 0 apps)\n` });
    });

    it('config check: a wrong apiVersion fails like start', async () => {
      const result = await runCli(['config', 'check', '--config', fixtureConfig('wrong-api.yaml')]);
      expect(result.code).to.equal(1);
      expect(result.stderr).to.equal(`${failing['wrong-api.yaml']}\n`);
    });

    it('GATEHOUSE_CONFIG chooses the file when --config is absent', async () => {
      const file = fixtureConfig('bad-redirect.yaml');
      const result = await runCli(['config', 'check'], { env: { GATEHOUSE_CONFIG: file } });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.equal(`${failing['bad-redirect.yaml']}\n`);
    });

    it('a missing config file: one line naming it', async () => {
      const file = fixtureConfig('nope.yaml');
      const result = await runCli(['start', '--config', file]);
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(new RegExp(`^gatehouse: cannot read config file ${escape(file)}: [^\\n]+\\n$`));
    });

    it('plugins on the demo config: a plain table, no log line from a plugin warning at start-up', async () => {
      const result = await runCli(['plugins', '--config', path.join(REPO_ROOT, 'config/default.yaml')]);
      expect(result.code, result.stderr).to.equal(0);
      const lines = result.stdout.trimEnd().split('\n');
      expect(lines[0]).to.match(/^plugin +version +api +contributes$/);
      expect(lines.filter((l) => l.startsWith('{'))).to.deep.equal([]);
      expect(lines.some((l) => l.startsWith('@gatehouse-auth/channel-outbox'))).to.equal(true);
      // A plugin's CLI commands are among what it contributes (decision 64).
      expect(lines.find((l) => l.startsWith('@gatehouse-auth/user-import'))).to.match(/ commands: users import$/);
    });

    it('plugins: lists the loaded plugins in registration order with versions and contributions', async () => {
      const result = await runCli(['plugins', '--config', fixtureConfig('valid.yaml')]);
      expect(result.code).to.equal(0);
      expect(result.stderr).to.equal('');
      const rows = result.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split(/ {2,}/));
      expect(rows).to.deep.equal([
        ['plugin', 'version', 'api', 'contributes'],
        ['@fixture/base', '0.1.0', '^1', 'fdsRules: base-rule'],
        ['@fixture/needs-base', '0.1.0', '^1', 'fdsRules: needs-base-rule'],
        ['@fixture/valid', '2.3.4', '^1', 'fdsRules: fixture-allow; routes: /fixture'],
      ]);
    });

    describe('a third-party plugin installed by name in the working directory', () => {
      let dir: string;
      before(() => {
        dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'gh-operator-')));
        writeThirdPartyPlugin(path.join(dir, 'node_modules', '@acme', 'fds-geo'), {
          name: '@acme/fds-geo',
          version: '1.2.3',
        });
        writeThirdPartyPlugin(path.join(dir, 'node_modules', '@acme', 'fds-esm'), {
          name: '@acme/fds-esm',
          version: '4.5.6',
          // ESM-only packages commonly export just the "import" condition.
          packageJson: { exports: { '.': { import: './index.js' } } },
        });
        const config = (name: string) =>
          `database:\n  url: 'sqlite::memory:'\nsecrets:\n  encryption_key: ${Buffer.alloc(32, 1).toString('base64')}\nplugins:\n  - name: '${name}'\n`;
        writeFileSync(path.join(dir, 'main.yaml'), config('@acme/fds-geo'));
        writeFileSync(path.join(dir, 'esm.yaml'), config('@acme/fds-esm'));
      });
      after(() => rmSync(dir, { recursive: true, force: true }));

      it('plugins lists it with its version', async () => {
        const result = await runCli(['plugins', '--config', path.join(dir, 'main.yaml')], { cwd: dir });
        expect(result.stderr).to.equal('');
        expect(result.code).to.equal(0);
        expect(result.stdout.split('\n')[1]!.split(/ {2,}/)).to.deep.equal([
          '@acme/fds-geo',
          '1.2.3',
          '^1',
          'fdsRules: geo-distance; routes: /geo',
        ]);
      });

      it('an ESM-only package (exports with only "import") loads too', async () => {
        const result = await runCli(['plugins', '--config', path.join(dir, 'esm.yaml')], { cwd: dir });
        expect(result.stderr).to.equal('');
        expect(result.code).to.equal(0);
        expect(result.stdout.split('\n')[1]!.split(/ {2,}/)).to.deep.equal([
          '@acme/fds-esm',
          '4.5.6',
          '^1',
          'fdsRules: geo-distance; routes: /geo',
        ]);
      });
    });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
