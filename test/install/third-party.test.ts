/**
 * Issue 9, as an operator and a third-party author would do it: the core, a bundled method and
 * the two example plugins (examples/, written by `gatehouse plugin new`) are packed with
 * `npm pack`, installed into a fresh directory exactly as docs/plugins.md says, and the server
 * is started there with `npx gatehouse start`. In Chromium a user signs in through the hosted
 * page with the example method as the second stage; the example FDS rule blocks a listed app.
 *
 * The install compiles three native modules (about 1.5 minutes here), so it runs under CI=true
 * (or GATEHOUSE_INSTALL_TEST=1) and is skipped otherwise, with a message.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { decodeJwt } from 'jose';
import type { BrowserContext } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../support/chromium.js';
import { freePort } from '../oauth/support.js';
import { REPO_ROOT } from '../support/paths.js';

const EXAMPLES = ['method-secret-question', 'fds-client-block'];
const ADMIN = 'operator-admin-token-0123456789abcdef0123456789';
const SHOP_SECRET = 'shop-secret-0123456789abcdef0123456789abcdef';
const PASSWORD = 'a long enough passphrase for the operator test';

function run(cmd: string, args: string[], cwd: string): string {
  const result = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
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
  let server: ChildProcess | undefined;
  let client: http.Server | undefined;
  let context: BrowserContext | undefined;
  let issuer: string;
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
        'core',
        '-w',
        'plugins/method-password',
        '-w',
        'plugins/grant-authorization-code',
        '--pack-destination',
        tarballs,
      ],
      REPO_ROOT,
    );
    for (const example of EXAMPLES)
      run('npm', ['pack', path.join(REPO_ROOT, 'examples', example), '--pack-destination', tarballs], REPO_ROOT);

    // docs/plugins.md, "Installing plugins": a directory of the operator's own, npm install, a config.
    const operator = path.join(work, 'my-gatehouse');
    mkdirSync(operator);
    run('npm', ['init', '-y'], operator);
    const files = readdirSync(tarballs).map((f) => path.join(tarballs, f));
    run('npm', ['install', '--no-audit', '--no-fund', ...files], operator);

    client = http.createServer((req, res) => {
      callbacks.push(new URL(req.url ?? '/', `http://${req.headers.host}`));
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<h1>back at the app</h1>');
    });
    await new Promise<void>((resolve) => client!.listen(0, '127.0.0.1', resolve));
    const clientPort = (client.address() as AddressInfo).port;
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    const app = (id: string, extra: Record<string, unknown>) => ({
      client_id: id,
      redirect_uris: [`http://127.0.0.1:${clientPort}/${id}/cb`],
      scopes: ['openid'],
      ...extra,
    });
    writeFileSync(
      path.join(operator, 'gatehouse.yaml'),
      JSON.stringify({
        issuer,
        server: { host: '127.0.0.1', port },
        database: { url: 'sqlite:./data/gatehouse.db' },
        log: { level: 'warn' },
        secrets: { encryption_key: randomBytes(32).toString('base64') },
        admin: { token: ADMIN },
        verification: { fds_rules: ['client_block'] },
        plugins: [
          { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
          { name: '@acme/method-secret-question', options: { memory_cost: 1024, time_cost: 1 } },
          { name: '@acme/fds-client-block', options: { deny_clients: ['suspect'] } },
          { name: '@gatehouse-auth/grant-authorization-code' },
        ],
        apps: [
          app('shop', { client_secret: SHOP_SECRET, login_stages: [['PASSWORD'], ['SECRETQUESTION']] }),
          app('suspect', { token_endpoint_auth_method: 'none', login_stages: [['PASSWORD']] }),
        ],
      }),
    );
    const check = run(
      path.join(operator, 'node_modules/.bin/gatehouse'),
      ['config', 'check', '--config', 'gatehouse.yaml'],
      operator,
    );
    expect(check).to.match(/^config OK: .*\(4 plugins, 2 apps\)\n$/);
    server = spawn(path.join(operator, 'node_modules/.bin/gatehouse'), ['start', '--config', 'gatehouse.yaml'], {
      cwd: operator,
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
    context = await launchChromium(mkdtempSync(path.join(work, 'chrome-')));
  });

  after(async () => {
    await context?.close();
    server?.kill('SIGTERM');
    if (server && server.exitCode === null) await new Promise((resolve) => server!.once('exit', resolve));
    await new Promise<void>((resolve) => (client ? client.close(() => resolve()) : resolve()));
    if (work) rmSync(work, { recursive: true, force: true, maxRetries: 5 });
  });

  async function admin(method: string, p: string, body: Record<string, unknown>) {
    const res = await fetch(`${issuer}${p}`, {
      method,
      headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { data: Record<string, unknown> };
    expect(res.status, JSON.stringify(json)).to.be.within(200, 201);
    return json.data;
  }

  function authorizeUrl(clientId: string, challenge: string, state: string): string {
    const q = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      scope: 'openid',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    return `${issuer}/api/oauth2/authorize/?${q.toString()}`;
  }

  it('a user signs in with the example method as the second stage; the example rule blocks a listed app', async () => {
    const { id } = await admin('POST', '/admin/users', { username: 'olga' });
    await admin('POST', '/verification-actions-srv/setup/PASSWORD/initiation', { sub: id, password: PASSWORD });
    await admin('POST', '/verification-actions-srv/setup/SECRETQUESTION/initiation', { sub: id, answer: 'Blue whale' });

    const page = context!.pages()[0] ?? (await context!.newPage());
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    await page.goto(authorizeUrl('shop', challenge, 'st-shop'));
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill('olga');
    await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
    await page.keyboard.press('Enter');
    // The second stage: the example method, as the hosted page builds it from its description.
    const answer = page.getByRole('textbox', { name: 'Your secret answer' });
    await answer.waitFor();
    await answer.fill('blue WHALE');
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/shop/cb'),
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

    // The listed app: the right password is refused at the first stage, answered like a wrong one.
    await context!.clearCookies();
    await page.goto(authorizeUrl('suspect', challenge, 'st-suspect'));
    await page.getByRole('textbox', { name: 'Username, email or phone' }).fill('olga');
    await page.getByRole('textbox', { name: 'Password' }).fill(PASSWORD);
    await page.keyboard.press('Enter');
    await page.locator('#gh-message.error').waitFor();
    expect(await page.locator('#gh-message').innerText()).to.equal('That did not work. Check and try again.');
    expect(callbacks.some((u) => u.searchParams.get('state') === 'st-suspect')).to.equal(false);
  });
});
