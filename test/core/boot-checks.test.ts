/**
 * Issue 9: `config check` and `start` refuse the same broken configs and plugins with the same
 * one line, and both catch what used to boot and fail later: a login stage naming no method, an
 * FDS rule that would never run, a method missing a function or with a lower-case id, a
 * misspelt plugin option, a delivery channel that does not exist.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { runCli, type CliResult } from '../support/cli.js';
import { REPO_ROOT } from '../support/paths.js';
import { withHostedPage } from '../support/config.js';

const FIXTURES = path.join(REPO_ROOT, 'test/fixtures/plugins');
const KEY = Buffer.alloc(32, 4).toString('base64');
const quiet = { memory_cost: 1024, time_cost: 2 };

type Plugin = { name?: string; path?: string; options?: Record<string, unknown> };

/** A config as an operator writes it: in-memory SQLite, these plugins, apps and FDS order. */
function config(
  plugins: Plugin[],
  extra: { stages?: string[][]; fds?: string[]; app?: Record<string, unknown> } = {},
): string {
  return JSON.stringify({
    server: { host: '127.0.0.1', port: 0 },
    database: { url: 'sqlite::memory:' },
    log: { level: 'silent' },
    secrets: { encryption_key: KEY },
    ...(extra.fds ? { verification: { fds_rules: extra.fds } } : {}),
    plugins: withHostedPage(plugins),
    apps:
      extra.stages || extra.app
        ? [
            {
              client_id: 'web',
              client_secret: 'w'.repeat(40),
              redirect_uris: ['https://web.example/cb'],
              login_stages: extra.stages ?? [],
              ...extra.app,
            },
          ]
        : [],
  });
}

const password = { name: '@gatehouse-auth/method-password', options: quiet };
const outbox = { name: '@gatehouse-auth/channel-outbox' };
const fixture = (file: string) => ({ path: path.join(FIXTURES, file) });

/** Broken inputs and the one line both commands must print for each. */
const CASES: { what: string; yaml: string; line: string }[] = [
  {
    what: 'a login stage names a method no plugin registered (a typo)',
    yaml: config([password, outbox, { name: '@gatehouse-auth/method-sms', options: { channel: 'outbox' } }], {
      stages: [['PASSWORD'], ['SMSS']],
    }),
    line: 'apps[0].login_stages[1][0]: no method "SMSS" is registered (known: PASSWORD, SMS)',
  },
  {
    what: 'fds_rules names a rule no plugin registered',
    yaml: config([fixture('rule-a.js')], { fds: ['shared-rule', 'nope'] }),
    line: 'verification.fds_rules[1]: no FDS rule "nope" is registered (known: shared-rule)',
  },
  {
    what: 'a registered FDS rule is missing from fds_rules (it would never run)',
    yaml: config([fixture('base.js'), fixture('rule-a.js')], { fds: ['base-rule'] }),
    line: 'verification.fds_rules: FDS rule "shared-rule" (plugin @fixture/rule-a) is registered but not listed, so it would never run; add it to the list or remove the plugin',
  },
  {
    what: 'a method without verify',
    yaml: config([fixture('no-verify.js')]),
    line: 'plugin @fixture/no-verify: method "HALFDONE" has no verify function',
  },
  {
    what: 'a method id that is not upper case',
    yaml: config([fixture('lowercase-id.js')]),
    line: 'plugin @fixture/lowercase-id: method "secq" has an id that is not upper case (such as TOTP)',
  },
  {
    what: 'a misspelt option of a method plugin',
    yaml: config([outbox, { name: '@gatehouse-auth/method-sms', options: { channel: 'outbox', max_sendss: 3 } }]),
    line: 'plugin @gatehouse-auth/method-sms: plugins[1].options.max_sendss: is not a known key',
  },
  {
    what: 'a code method sending through a channel that is not registered',
    yaml: config([outbox, { name: '@gatehouse-auth/method-email', options: { channel: 'mailer' } }]),
    line: 'plugin @gatehouse-auth/method-email (plugins[1]): options.channel: no delivery channel "mailer" is registered (known: outbox)',
  },
  {
    what: 'a register that throws',
    yaml: config([fixture('throws.js')]),
    line: 'plugin @fixture/throws: register failed: cannot reach the provider',
  },
  {
    what: 'two plugins adding the same id',
    yaml: config([fixture('rule-a.js'), fixture('rule-b.js')]),
    line: 'plugin @fixture/rule-b: FDS rule "shared-rule" is already registered by plugin @fixture/rule-a',
  },
  {
    what: 'an app key neither the core nor a loaded plugin adds (a typo)',
    yaml: config([password], { stages: [['PASSWORD']], app: { redirect_uri: 'https://web.example/cb' } }),
    line: 'apps[0].redirect_uri: is not a known key (neither the core nor a loaded plugin adds it)',
  },
  {
    what: 'a grant key without its grant plugin loaded',
    yaml: config([password], { stages: [['PASSWORD']], app: { saml_issuers: [] } }),
    line: 'apps[0].saml_issuers: is not a known key (neither the core nor a loaded plugin adds it)',
  },
  {
    what: 'a bad value for a key a plugin adds (a SAML certificate that is not one)',
    yaml: config([{ name: '@gatehouse-auth/grant-saml2-bearer' }], {
      app: { saml_issuers: [{ issuer: 'https://idp.example', certificate: 'not a certificate' }] },
    }),
    line: 'apps[0].saml_issuers[0].certificate: must be an X.509 certificate (PEM)',
  },
  {
    what: 'per-app options for a method that takes none',
    yaml: config([password], { stages: [['PASSWORD']], app: { methods: { PASSWORD: { x: 1 } } } }),
    line: 'apps[0].methods.PASSWORD: method PASSWORD takes no per-app options',
  },
  {
    what: 'per-app options a method refuses',
    yaml: config([fixture('greeting-method.js')], {
      stages: [['GREETING']],
      app: { methods: { GREETING: { phrase: 'x' } } },
    }),
    line: 'apps[0].methods.GREETING.phrase: must be at least 3 characters',
  },
  {
    what: 'a grant type no plugin handles',
    yaml: config([password], { stages: [['PASSWORD']], app: { grant_types: ['authorization_code'] } }),
    line: 'apps[0].grant_types[0]: no grant "authorization_code" is registered (known: none)',
  },
  {
    what: 'a package of the foreign @gatehouse scope',
    yaml: config([{ name: '@gatehouse/method-totp' }]),
    line: "plugin @gatehouse/method-totp (plugins[0]): Gatehouse's packages are @gatehouse-auth/method-totp; the @gatehouse scope on npm belongs to another project",
  },
  {
    what: 'the console of before decision 39, a top-level key',
    yaml: JSON.stringify({ ...JSON.parse(config([password])), console: { enabled: true, admins: ['alice'] } }),
    line: 'console: the admin console is now the plugin @gatehouse-auth/page-console; list it under plugins: with these keys (without enabled) as its options',
  },
  {
    what: 'the security notices of before issue 26, a top-level key',
    yaml: JSON.stringify({ ...JSON.parse(config([password])), notifications: { email_channel: 'outbox' } }),
    line: 'notifications: the security notices to users are now the plugin @gatehouse-auth/notices-security; list it under plugins: with these keys as its options',
  },
  {
    what: 'two plugins register the same app',
    yaml: config([password, fixture('web-app.js'), fixture('web-app-twin.js')]),
    line: 'plugin @acme/portal-twin: app "acme-portal" is already registered by plugin @acme/portal',
  },
];

describe('boot checks: config check and start refuse alike (issue 9)', function () {
  this.timeout(180_000);
  let dir: string;
  const results = new Map<string, { check: CliResult; start: CliResult }>();

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-boot-'));
    // A few at a time: each case starts two node processes, and this machine may have two cores.
    const run = async (c: (typeof CASES)[number], i: number) => {
      const file = path.join(dir, `case-${i}.json.yaml`);
      writeFileSync(file, c.yaml);
      const [check, start] = await Promise.all([
        runCli(['config', 'check', '--config', file], { timeoutMs: 30_000 }),
        runCli(['start', '--config', file], { env: { PORT: '0' }, timeoutMs: 30_000 }),
      ]);
      results.set(c.what, { check, start });
    };
    for (let i = 0; i < CASES.length; i += 4) await Promise.all(CASES.slice(i, i + 4).map((c, j) => run(c, i + j)));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const c of CASES) {
    it(`${c.what}: both exit 1 with "${c.line.slice(0, 50)}…"`, () => {
      const { check, start } = results.get(c.what)!;
      expect(check.stderr).to.equal(`gatehouse: ${c.line}\n`);
      expect(start.stderr).to.equal(check.stderr);
      expect([check.code, start.code]).to.deep.equal([1, 1]);
      expect(start.stdout).to.not.include('listening');
    });
  }

  it('a config that composes says OK', async () => {
    const file = path.join(dir, 'good.yaml');
    writeFileSync(file, config([password, outbox], { stages: [['PASSWORD']] }));
    const check = await runCli(['config', 'check', '--config', file]);
    expect(check).to.deep.include({ code: 0, stderr: '', stdout: `config OK: ${file} (5 plugins, 1 apps)\n` }); // and the hosted page with the management services and the verification API
  });
});
