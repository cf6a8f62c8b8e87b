/**
 * Issue 9, as an operator and a third-party author would do it: the core, a bundled method and
 * the two example plugins (examples/, written by `gatehouse plugin new`, now `@gatehouse-auth/create-plugin`) are packed with
 * `npm pack`, installed into a fresh directory exactly as docs/plugins.md says, and the server
 * is started there with `npx gatehouse start`. In Chromium a user signs in through the hosted
 * page with the example method as the second stage; the example FDS rule blocks a listed app.
 *
 * The install compiles three native modules (about 1.5 minutes here), so it runs under CI=true
 * (or GATEHOUSE_INSTALL_TEST=1) and is skipped otherwise, with a message.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { decodeJwt } from 'jose';
import type { BrowserContext } from 'playwright-core';
import { CHROMIUM, openChromium, type Chromium } from '../support/chromium.js';
import { freePort } from '../oauth/support.js';
import { REPO_ROOT } from '../support/paths.js';

const EXAMPLES = ['method-secret-question', 'fds-client-block'];
const ADMIN = 'operator-admin-token-0123456789abcdef0123456789';
const SHOP_SECRET = 'shop-secret-0123456789abcdef0123456789abcdef';

/** The first fenced `lang` block after the line of docs/plugins.md that starts with `marker`. */
function docsBlock(marker: string, lang: string): string {
  const text = readFileSync(path.join(REPO_ROOT, 'docs/plugins.md'), 'utf8');
  const from = text.indexOf(`\n${marker}`);
  expect(from, `docs/plugins.md has no line starting "${marker}"`).to.be.greaterThan(-1);
  const open = text.indexOf(`\n\`\`\`${lang}\n`, from);
  return text.slice(open + lang.length + 5, text.indexOf('\n```\n', open + 1) + 1);
}

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  const result = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false', ...env },
  });
  if (result.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

describe('examples: their own tests pass (as `npm test` in each)', () => {
  for (const example of EXAMPLES) {
    it(example, function () {
      this.timeout(30_000);
      const copy = mkdtempSync(path.join(os.tmpdir(), `gh-${example}-`));
      try {
        run('cp', ['-r', `${path.join(REPO_ROOT, 'examples', example)}/.`, copy], REPO_ROOT);
        mkdirSync(path.join(copy, 'node_modules/@gatehouse-auth'), { recursive: true });
        symlinkSync(path.join(REPO_ROOT, 'core'), path.join(copy, 'node_modules/@gatehouse-auth/core'));
        symlinkSync(path.join(REPO_ROOT, 'tools/testing'), path.join(copy, 'node_modules/@gatehouse-auth/testing'));
        expect(run(process.execPath, ['--test'], copy)).to.match(/# fail 0/);
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    });
  }
});

describe('a third-party install, as docs/plugins.md says (issue 9)', function () {
  this.timeout(600_000);
  let work: string;
  let operator: string;
  let server: ChildProcess | undefined;
  let chrome: Chromium | undefined;
  let context: BrowserContext | undefined;
  let issuer: string;
  let env: Record<string, string>;
  // The apps of the guide's config, on this machine: their redirect URIs are loopback ones, so
  // they match on any port (RFC 8252 §7.3).
  let appServer: http.Server | undefined;
  let appOrigin: string;
  const callbacks: URL[] = [];

  before(async function () {
    const wanted = process.env.CI === 'true' || process.env.GATEHOUSE_INSTALL_TEST === '1';
    if (!wanted) {
      console.log(
        '      skipped: the operator install compiles native modules (~1.5 min); runs with CI=true or GATEHOUSE_INSTALL_TEST=1',
      );
      this.skip();
    }
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: CI must install it (apt-get install chromium)`);
    work = mkdtempSync(path.join(os.tmpdir(), 'gh-operator-'));
    const tarballs = path.join(work, 'tarballs');
    mkdirSync(tarballs);
    // The packages as they would be published (prepack builds them clean).
    run(
      'npm',
      [
        'pack',
        '-w',
        'core/plugin-api',
        '-w',
        'core',
        '-w',
        'core/cli',
        '-w',
        'plugins/method-password',
        '-w',
        'plugins/grant-authorization-code',
        '-w',
        'plugins/page-login',
        '-w',
        'plugins/management',
        '-w',
        'plugins/setup-api',
        '-w',
        'plugins/verification-api',
        '--pack-destination',
        tarballs,
      ],
      REPO_ROOT,
    );
    for (const example of EXAMPLES)
      run('npm', ['pack', path.join(REPO_ROOT, 'examples', example), '--pack-destination', tarballs], REPO_ROOT);

    // docs/plugins.md, "Installing plugins": a directory of the operator's own, npm install, a config.
    operator = path.join(work, 'my-gatehouse');
    mkdirSync(operator);
    run('npm', ['init', '-y'], operator);
    const files = readdirSync(tarballs).map((f) => path.join(tarballs, f));
    run('npm', ['install', '--no-audit', '--no-fund', ...files], operator);

    // Step 3's gatehouse.yaml as the page shows it; the environment gives what it leaves out.
    writeFileSync(path.join(operator, 'gatehouse.yaml'), docsBlock('**3. Name it in the config**', 'yaml'));
    appServer = http.createServer((req, res) => {
      callbacks.push(new URL(req.url ?? '/', appOrigin));
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<h1>back at the app</h1>');
    });
    await new Promise<void>((resolve) => appServer!.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}`;
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    env = { GATEHOUSE_ADMIN_TOKEN: ADMIN, SHOP_SECRET, PORT: String(port), ISSUER: issuer, LOG_LEVEL: 'warn' };
    const check = run(
      path.join(operator, 'node_modules/.bin/gatehouse'),
      ['config', 'check', '--config', 'gatehouse.yaml'],
      operator,
      env,
    );
    expect(check).to.match(/^config OK: .*\(8 plugins, 2 apps\)\n$/);
    server = spawn(path.join(operator, 'node_modules/.bin/gatehouse'), ['start', '--config', 'gatehouse.yaml'], {
      cwd: operator,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    for (let i = 0; ; i++) {
      const ready = await fetch(`${issuer}/health/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (i > 300 || server.exitCode !== null) throw new Error(`the server did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    chrome = await openChromium();
    context = chrome.context;
  });

  after(async () => {
    await chrome?.close();
    server?.kill('SIGTERM');
    if (server && server.exitCode === null) await new Promise((resolve) => server!.once('exit', resolve));
    await new Promise<void>((resolve) => (appServer ? appServer.close(() => resolve()) : resolve()));
    if (work) rmSync(work, { recursive: true, force: true, maxRetries: 5 });
  });

  /** Step 4's setup calls, as the page writes them: `curl -X POST URL … -d 'JSON'`, sent to this server. */
  async function docsSetupCalls(): Promise<void> {
    const calls = [
      ...docsBlock('**4. Set it up for a user.**', 'sh').matchAll(/curl -X POST (\S+) [\s\S]*?-d '(\{.*\})'/g),
    ];
    expect(calls).to.have.length(2);
    for (const [, url, body] of calls) {
      const res = await fetch(url!.replace('http://localhost:3000', issuer), {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
        body: body!,
      });
      expect(res.status, await res.text()).to.be.within(200, 201);
    }
  }

  function authorizeUrl(clientId: string, redirectPath: string, challenge: string, state: string): string {
    const q = new URLSearchParams({
      client_id: clientId,
      redirect_uri: `${appOrigin}${redirectPath}`,
      response_type: 'code',
      scope: 'openid',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    return `${issuer}/api/oauth2/authorize/?${q.toString()}`;
  }

  it('a user signs in with the example method as the second stage; the example rule blocks a listed app', async () => {
    // Step 4: the user from the CLI, their password and answer through the setup API.
    const created = run(
      path.join(operator, 'node_modules/.bin/gatehouse'),
      ['users', 'create', '--username', 'olga', '--config', 'gatehouse.yaml'],
      operator,
      env,
    );
    const { id } = JSON.parse(created) as { id: string };
    await docsSetupCalls();
    const { password } = JSON.parse(/'(\{"sub":"olga","password".*\})'/.exec(docsBlock('**4.', 'sh'))![1]!) as {
      password: string;
    };

    const page = context!.pages()[0] ?? (await context!.newPage());
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    await page.goto(authorizeUrl('shop', '/cb', challenge, 'st-shop'));
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill('olga');
    await page.getByRole('textbox', { name: 'Password' }).fill(password);
    await page.keyboard.press('Enter');
    // The second stage: the example method, as the hosted page builds it from its description.
    const answer = page.getByRole('textbox', { name: 'Your secret answer' });
    await answer.waitFor();
    await answer.fill('blue WHALE');
    await Promise.all([
      page.waitForURL((u) => u.origin === appOrigin && u.pathname === '/cb'),
      page.getByRole('button', { name: 'Continue' }).click(),
    ]);
    const callback = callbacks.find((u) => u.searchParams.get('state') === 'st-shop')!;
    const token = await fetch(`${issuer}/oauth/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`shop:${SHOP_SECRET}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: `${callback.origin}${callback.pathname}`,
        code_verifier: verifier,
      }),
    });
    const tokens = (await token.json()) as { id_token: string };
    expect(token.status, JSON.stringify(tokens)).to.equal(200);
    expect(decodeJwt(tokens.id_token)).to.deep.include({ sub: id, amr: ['pwd', 'kba'] });

    // The listed app: the right password is refused at the first stage, answered like a wrong one
    // (the attempts left included).
    await context!.clearCookies();
    await page.goto(authorizeUrl('suspect', '/suspect/cb', challenge, 'st-suspect'));
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill('olga');
    await page.getByRole('textbox', { name: 'Password' }).fill(password);
    await page.keyboard.press('Enter');
    await page.locator('#gh-message.error').waitFor();
    expect(await page.locator('#gh-message').innerText()).to.equal(
      'That did not work. Check and try again. 4 attempts left.',
    );
    expect(callbacks.some((u) => u.searchParams.get('state') === 'st-suspect')).to.equal(false);
  });
});
