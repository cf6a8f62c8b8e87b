import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { BootError, loadConfigFile, parseConfig, resolveConfigFile } from '@gatehouse-auth/core';
import { TEST_ENCRYPTION_KEY } from '../support/config.js';
import { REPO_ROOT } from '../support/paths.js';

/** Runs `fn`, expecting a BootError; returns it. */
function bootErrorOf(fn: () => unknown): BootError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(BootError);
    return err as BootError;
  }
  expect.fail('expected a BootError');
}

/** The message of parsing `raw` with `env`: a line per problem, each naming its key. */
function configError(raw: unknown, env: NodeJS.ProcessEnv = {}): string {
  const err = bootErrorOf(() => parseConfig(raw, env));
  expect(err.code).to.equal('CONFIG_INVALID');
  for (const line of err.message.split('\n')) expect(line).to.match(/^\S+: \S/);
  return err.message;
}

const app = (overrides: Record<string, unknown> = {}) => ({
  client_id: 'web',
  redirect_uris: ['https://app.example/callback'],
  ...overrides,
});

describe('config: parseConfig', () => {
  it('applies the defaults to an empty config', () => {
    const config = parseConfig({}, {});
    expect(config.issuer).to.equal('http://localhost:3000');
    expect(config.server).to.deep.include({
      host: '0.0.0.0',
      port: 3000,
      trust_proxy: false,
      shutdown_timeout_ms: 10_000,
    });
    expect(config.database).to.deep.include({ url: 'sqlite:./data/gatehouse.db', log_sql: false, pool_max: 10 });
    expect(config.log).to.deep.include({ level: 'info' });
    expect(config.secrets).to.deep.include({ key_file: './data/encryption.key' });
    expect(config.secrets.encryption_key).to.equal(undefined);
    expect(config.admin.token).to.equal(undefined);
    expect(config.verification).to.include({ exchange_ttl: 600, max_attempts: 5 });
    expect(config.plugins).to.deep.equal([]);
    expect(config.apps).to.deep.equal([]);
  });

  it('keeps given values and fills defaults inside apps and plugin entries', () => {
    const config = parseConfig(
      {
        issuer: 'https://id.example',
        server: { port: 8443, trust_proxy: 1 },
        secrets: { encryption_key: TEST_ENCRYPTION_KEY },
        plugins: [{ name: '@gatehouse-auth/method-totp' }, { path: './local', options: { a: 1 } }],
        apps: [app({ login_stages: [['PASSWORD'], ['TOTP', 'SMS']] })],
      },
      {},
    );
    expect(config.issuer).to.equal('https://id.example');
    expect(config.server).to.deep.include({ host: '0.0.0.0', port: 8443, trust_proxy: 1, shutdown_timeout_ms: 10_000 });
    expect(config.secrets.encryption_key).to.equal(TEST_ENCRYPTION_KEY);
    expect(config.plugins).to.deep.equal([
      { name: '@gatehouse-auth/method-totp', options: {} },
      { path: './local', options: { a: 1 } },
    ]);
    // Other issues add app settings; these are the ones this core defines.
    expect(config.apps).to.have.length(1);
    expect(config.apps[0]).to.deep.include({
      client_id: 'web',
      redirect_uris: ['https://app.example/callback'],
      response_types: ['code'],
      scopes: ['openid'],
      login_stages: [['PASSWORD'], ['TOTP', 'SMS']],
    });
  });

  it('treats empty YAML sections (null) as absent', () => {
    const config = parseConfig({ admin: null, server: { tls: null } }, {});
    expect(config.admin.token).to.equal(undefined);
    expect(config.server.tls).to.equal(undefined);
  });

  it('rejects a config that is not a mapping', () => {
    expect(configError(['a', 'b'])).to.equal('(root): must be a mapping of keys to values');
  });

  describe('${VAR} interpolation', () => {
    it('replaces ${VAR} with the variable, anywhere in a string and inside lists', () => {
      const config = parseConfig(
        {
          issuer: 'https://${HOST}/',
          apps: [app({ client_secret: '${SECRET}', redirect_uris: ['https://${HOST}/cb'] })],
        },
        { HOST: 'id.example', SECRET: 's'.repeat(40) },
      );
      expect(config.issuer).to.equal('https://id.example/');
      expect(config.apps[0]!.client_secret).to.equal('s'.repeat(40));
      expect(config.apps[0]!.redirect_uris).to.deep.equal(['https://id.example/cb']);
    });

    it('uses the ${VAR:-default} fallback only when the variable is unset or empty', () => {
      const raw = { issuer: '${ISS:-https://fallback.example}' };
      expect(parseConfig(raw, {}).issuer).to.equal('https://fallback.example');
      expect(parseConfig(raw, { ISS: '' }).issuer).to.equal('https://fallback.example');
      expect(parseConfig(raw, { ISS: 'https://set.example' }).issuer).to.equal('https://set.example');
    });

    it('an unset ${VAR} without default stops with the key path and the variable name', () => {
      const message = configError({ apps: [app({ client_secret: '${DEMO_SECRET}' })] });
      expect(message).to.equal('apps[0].client_secret: environment variable DEMO_SECRET is not set');
    });

    it('reports every unset variable, one line each', () => {
      const message = configError({ issuer: '${A}', admin: { token: '${B}' } });
      expect(message).to.equal(
        'issuer: environment variable A is not set\nadmin.token: environment variable B is not set',
      );
    });

    it('does not interpolate values that are not strings', () => {
      const config = parseConfig({ server: { port: 4000, trust_proxy: true } }, {});
      expect(config.server.port).to.equal(4000);
      expect(config.server.trust_proxy).to.equal(true);
    });
  });

  describe('environment overrides', () => {
    const file = {
      issuer: 'https://file.example',
      server: { port: 3000 },
      database: { url: 'sqlite:./file.db' },
      log: { level: 'info' },
    };

    it('PORT, DATABASE_URL, ISSUER and LOG_LEVEL win over the file', () => {
      const config = parseConfig(file, {
        PORT: '8080',
        DATABASE_URL: 'postgres://u@db:5432/gh',
        ISSUER: 'https://env.example',
        LOG_LEVEL: 'debug',
      });
      expect(config.server.port).to.equal(8080);
      expect(config.database.url).to.equal('postgres://u@db:5432/gh');
      expect(config.issuer).to.equal('https://env.example');
      expect(config.log.level).to.equal('debug');
    });

    it('PORT=0 is honoured (a free port)', () => {
      expect(parseConfig(file, { PORT: '0' }).server.port).to.equal(0);
    });

    it('creates a missing section for an override', () => {
      const config = parseConfig({}, { PORT: '4001', DATABASE_URL: 'sqlite::memory:' });
      expect(config.server.port).to.equal(4001);
      expect(config.database.url).to.equal('sqlite::memory:');
    });

    it('validates an overridden PORT like a file value', () => {
      expect(configError(file, { PORT: 'http' })).to.equal('server.port: must be a number');
    });

    it('validates overridden values like file values', () => {
      expect(configError(file, { LOG_LEVEL: 'loud' })).to.match(/^log\.level: must be one of "fatal", .*"silent"$/);
      expect(configError(file, { DATABASE_URL: 'mysql://db/gh' })).to.equal(
        'database.url: must start with sqlite: or postgres://',
      );
    });

    it('without overrides the file values stay', () => {
      const config = parseConfig(file, {});
      expect(config.server.port).to.equal(3000);
      expect(config.database.url).to.equal('sqlite:./file.db');
    });
  });

  describe('errors name the key path in one line', () => {
    it('a redirect URI that is not absolute', () => {
      const raw = { apps: [app({ redirect_uris: ['https://app.example/cb', '/callback'] })] };
      expect(configError(raw)).to.equal('apps[0].redirect_uris[1]: must be an absolute URL');
    });

    it('a redirect URI that is not http(s)', () => {
      const raw = { apps: [app({ redirect_uris: ['javascript:alert(1)'] })] };
      expect(configError(raw)).to.equal('apps[0].redirect_uris[0]: must be an absolute URL');
    });

    it('an issuer with a query or a fragment (RFC 8414 §2)', () => {
      for (const issuer of ['https://id.example/?tenant=a', 'https://id.example/#top', 'https://id.example/t?']) {
        expect(configError({ issuer })).to.equal('issuer: must have no query or fragment (RFC 8414 §2)');
      }
    });

    it('a redirect URI with a fragment', () => {
      const raw = { apps: [app(), app({ client_id: 'b', redirect_uris: ['https://app.example/cb#x'] })] };
      expect(configError(raw)).to.equal('apps[1].redirect_uris[0]: must not contain a fragment');
    });

    describe('https outside dev_mode (RFC 9700 §2.6, RFC 8252 §7.3)', () => {
      const why = 'must be https (http only to localhost, 127.0.0.1 or [::1]); set dev_mode: true for a test setup';

      it('a plain-http issuer on a network host', () => {
        expect(configError({ issuer: 'http://auth.example' })).to.equal(`issuer: ${why}`);
      });

      it('plain-http app URLs on a network host, each named', () => {
        const urls = { redirect_uris: ['https://app.example/cb', 'http://app.example/cb'] };
        expect(configError({ apps: [app(urls)] })).to.equal(`apps[0].redirect_uris[1]: ${why}`);
        const logout = { post_logout_redirect_uris: ['http://app.example/bye'] };
        expect(configError({ apps: [app(logout)] })).to.equal(`apps[0].post_logout_redirect_uris[0]: ${why}`);
        expect(configError({ apps: [app({ login_page_url: 'http://ui.example/' })] })).to.equal(
          `apps[0].login_page_url: ${why}`,
        );
        // A plugin's URL keys (`appUrlKeys`, such as backchannel_logout_uri) are checked when the plugins
        // are composed: plugins/oauth-backchannel-logout/test/plugin.test.ts.
      });

      it('http to loopback hosts is fine, and dev_mode allows any host', () => {
        const loopback = ['http://localhost:8080/cb', 'http://127.0.0.1/cb', 'http://[::1]:9000/cb'];
        expect(
          parseConfig({ issuer: 'http://localhost:3000', apps: [app({ redirect_uris: loopback })] }, {}).apps,
        ).to.have.length(1);
        const dev = parseConfig(
          { dev_mode: true, issuer: 'http://auth.test', apps: [app({ redirect_uris: ['http://app.test/cb'] })] },
          {},
        );
        expect(dev.dev_mode).to.equal(true);
      });

      it('a private-use scheme (RFC 8252 §7.1) for a public app only', () => {
        const native = app({ token_endpoint_auth_method: 'none', redirect_uris: ['com.example.app:/oauth2redirect'] });
        expect(parseConfig({ apps: [native] }, {}).apps[0]!.redirect_uris).to.deep.equal([
          'com.example.app:/oauth2redirect',
        ]);
        const confidential = app({ client_secret: 'x'.repeat(32), redirect_uris: ['com.example.app:/cb'] });
        expect(configError({ apps: [confidential] })).to.equal(
          'apps[0].redirect_uris[0]: a private-use scheme is for native (public) apps only; use https',
        );
        expect(configError({ apps: [app({ redirect_uris: ['myapp:/cb'] })] })).to.equal(
          'apps[0].redirect_uris[0]: must be an absolute URL',
        );
      });
    });

    it('an acr value may only add stages to the app’s login_stages', () => {
      const stages = { login_stages: [['PASSWORD'], ['TOTP']] };
      const weaker = app({ ...stages, acr_values: [{ acr: 'urn:pwd', login_stages: [['PASSWORD']] }] });
      expect(configError({ apps: [weaker] })).to.equal(
        "apps[0].acr_values[0].login_stages: must begin with the app's login_stages (an acr may only add stages)",
      );
      const stronger = app({
        ...stages,
        acr_values: [{ acr: 'urn:mfa', login_stages: [['PASSWORD'], ['TOTP'], ['FIDO2']] }],
      });
      expect(parseConfig({ apps: [stronger] }, {}).apps[0]!.acr_values[0]!.acr).to.equal('urn:mfa');
    });

    it('codes live 30 s unless the app says otherwise', () => {
      expect(parseConfig({ apps: [app()] }, {}).apps[0]!.code_ttl).to.equal(30);
    });

    it('a redirect URI with an empty fragment', () => {
      const raw = { apps: [app({ redirect_uris: ['https://app.example/cb#'] })] };
      expect(configError(raw)).to.equal('apps[0].redirect_uris[0]: must not contain a fragment');
    });

    it('an unknown key, at the top level and nested', () => {
      expect(configError({ server: { prot: 3000 } })).to.equal('server.prot: is not a known key');
      expect(configError({ servers: {} })).to.equal('servers: is not a known key');
      // An app's unknown key is refused once plugins are loaded (they may add keys): boot-checks.test.ts.
    });

    it('a value of the wrong type', () => {
      expect(configError({ server: { shutdown_timeout_ms: 'soon' } })).to.equal(
        'server.shutdown_timeout_ms: must be a number',
      );
      expect(configError({ database: { log_sql: 'yes' } })).to.equal('database.log_sql: must be a boolean');
      expect(configError({ apps: {} })).to.equal('apps: must be an array');
      expect(configError({ apps: [app({ scopes: 'openid' })] })).to.equal('apps[0].scopes: must be an array');
    });

    it('a required key that is missing', () => {
      expect(configError({ apps: [{ redirect_uris: [] }] })).to.equal('apps[0].client_id: is required');
    });

    it('a port out of range', () => {
      expect(configError({ server: { port: 70000 } })).to.equal('server.port: must be at most 65535');
    });

    it('a client_secret shorter than 32 characters', () => {
      expect(configError({ apps: [app({ client_secret: 'short' })] })).to.equal(
        'apps[0].client_secret: must be at least 32 characters',
      );
    });

    it('an admin token shorter than 32 characters', () => {
      expect(configError({ admin: { token: 'abc' } })).to.equal('admin.token: must be at least 32 characters');
    });

    it('an encryption key that is not 32 bytes of base64', () => {
      expect(configError({ secrets: { encryption_key: 'c2hvcnQ=' } })).to.equal(
        'secrets.encryption_key: must be 32 bytes encoded as base64',
      );
    });

    it('a duplicate client_id names both apps', () => {
      const raw = { apps: [app(), app({ client_id: 'other' }), app()] };
      expect(configError(raw)).to.equal('apps[2].client_id: duplicates apps[0].client_id "web"');
    });

    it('a database url of an unsupported kind', () => {
      expect(configError({ database: { url: 'mysql://localhost/gh' } })).to.equal(
        'database.url: must start with sqlite: or postgres://',
      );
    });

    it('a plugins entry with neither name nor path, or with both', () => {
      expect(configError({ plugins: [{ options: {} }] })).to.equal('plugins[0]: needs exactly one of "name" or "path"');
      expect(configError({ plugins: [{ name: 'a' }, { name: 'b', path: './b' }] })).to.equal(
        'plugins[1]: needs exactly one of "name" or "path"',
      );
    });

    it('a login stage method id that is not upper case', () => {
      expect(configError({ apps: [app({ login_stages: [['totp']] })] })).to.equal(
        'apps[0].login_stages[0][0]: must be an upper-case method id such as TOTP',
      );
    });

    it('a login stage that a method used at an earlier stage can leave empty', () => {
      expect(configError({ apps: [app({ login_stages: [['PASSWORD'], ['PASSWORD']] })] })).to.equal(
        'apps[0].login_stages[1]: can only be met by a method already used at an earlier stage (after PASSWORD); each stage needs a method of its own',
      );
      expect(configError({ apps: [app({ login_stages: [['PASSWORD', 'TOTP'], ['TOTP']] })] })).to.match(
        /^apps\[0\]\.login_stages\[1\]: .*after TOTP/,
      );
      // Shared methods are fine while every order of choices leaves something new.
      expect(() =>
        parseConfig(
          {
            apps: [
              app({
                login_stages: [
                  ['EMAIL', 'SMS', 'PASSWORD'],
                  ['TOTP', 'BACKUPCODE', 'PASSWORD'],
                ],
              }),
            ],
          },
          {},
        ),
      ).not.to.throw();
    });

    it('several problems: every one, a line each naming its key', () => {
      const lines = configError({ server: { prot: 1 }, database: { url: 'x' } }).split('\n');
      expect(lines).to.have.length(2);
      for (const line of lines) expect(line).to.match(/^[a-z._]+: .+$/);
    });
  });
});

describe('config: files', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it('loads a YAML file, interpolates from the given env and remembers where it came from', () => {
    const file = write('gatehouse.yaml', 'issuer: ${ISS}\nadmin:\n  # token: unset\nplugins:\n  - path: ./p\n');
    const loaded = loadConfigFile(file, { ISS: 'https://file.example' });
    expect(loaded.config.issuer).to.equal('https://file.example');
    expect(loaded.config.admin.token).to.equal(undefined);
    expect(loaded.file).to.equal(file);
    expect(loaded.baseDir).to.equal(dir);
  });

  it('an empty file is the default config', () => {
    const loaded = loadConfigFile(write('empty.yaml', '# nothing\n'), {});
    expect(loaded.config).to.deep.equal(parseConfig({}, {}));
  });

  it('a YAML syntax error names the file, line and column', () => {
    const file = write('broken.yaml', 'server:\n  port: 3000\n  host: [127.0.0.1\nlog:\n  level: info\n');
    const err = bootErrorOf(() => loadConfigFile(file, {}));
    expect(err.code).to.equal('CONFIG_INVALID');
    expect(err.message).to.match(new RegExp(`^${escape(file)} \\(line \\d+, column \\d+\\): \\S`));
    expect(err.message).not.to.include('\n');
  });

  it('a schema error in a file names the key path', () => {
    const file = write('bad.yaml', 'apps:\n  - client_id: a\n    redirect_uris: [https://a.example/cb, nope]\n');
    const err = bootErrorOf(() => loadConfigFile(file, {}));
    expect(err.message).to.equal('apps[0].redirect_uris[1]: must be an absolute URL');
  });

  it('a missing file is CONFIG_NOT_FOUND naming the path', () => {
    const file = path.join(dir, 'nope.yaml');
    const err = bootErrorOf(() => loadConfigFile(file, {}));
    expect(err.code).to.equal('CONFIG_NOT_FOUND');
    expect(err.message).to.match(new RegExp(`^cannot read config file ${escape(file)}: ENOENT`));
  });

  it('--config wins over GATEHOUSE_CONFIG, which wins over config/default.yaml', () => {
    const env = { GATEHOUSE_CONFIG: '/etc/gh.yaml' };
    expect(resolveConfigFile('/x/flag.yaml', env)).to.equal('/x/flag.yaml');
    expect(resolveConfigFile(undefined, env)).to.equal('/etc/gh.yaml');
    expect(resolveConfigFile(undefined, {})).to.equal(path.resolve('config/default.yaml'));
  });

  it('config/default.yaml (the demo) parses with an empty environment', () => {
    const loaded = loadConfigFile(path.join(REPO_ROOT, 'config', 'default.yaml'), {});
    expect(loaded.config.issuer).to.equal('http://localhost:3000');
    expect(loaded.config.database.url).to.equal('sqlite:./data/gatehouse.db');
    expect(loaded.config.admin.token).to.equal(undefined);
    expect(loaded.config.apps.map((a) => a.client_id)).to.deep.equal([
      'demo-app',
      'demo-spa',
      'demo-tv',
      'demo-service',
    ]);
    // The console and the account page are on in the demo: they are plugins (they register their apps).
    const consolePlugin = loaded.config.plugins.find((p) => p.name === '@gatehouse-auth/page-console');
    expect(consolePlugin!.options).to.deep.include({ admins: ['alice'] });
    expect(loaded.config.plugins.map((p) => p.name)).to.include('@gatehouse-auth/page-account');
    expect(loaded.config.apps[0]!.client_secret).to.have.length.of.at.least(32);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
