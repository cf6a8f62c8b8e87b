/**
 * Branding (issue 29, decisions 54 and 65): the plugin's options and an app's `branding` are
 * checked at start-up (and for database apps by the admin API) with a line naming the key; the
 * former top-level `branding:` and an app's `branding` without the plugin stop start-up; the logo file and the
 * color's style sheet are served with their content type and caching; the login page of a
 * branded app shows its brand under the exact CSP of every hosted page (a logo URL adds its
 * origin to img-src, nothing more); error pages link support next to the reference; and `/` is a
 * landing page for browsers, en and de, while JSON clients keep the 404.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { BootError, buildApp, createLogger, parseConfig } from '@gatehouse-auth/core';
import { contrastWithWhite } from '@gatehouse-auth/branding';
import { ACCOUNT_PLUGIN } from '../../../test/oauth/console-support.js';
import { testConfig } from '../../../test/support/config.js';
import {
  ADMIN_TOKEN,
  authorizePath,
  Browser,
  loginRequestId,
  locationOf,
  startServer,
  WEB_CB,
  type OAuthServer,
} from '../../../test/oauth/support.js';

/** The CSP of every hosted page: unchanged by branding (a logo file, a color). */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** The login page's: its forms' last redirect goes to the app (form-action), as without a brand. */
const LOGIN_CSP = CSP.replace("form-action 'self'", "form-action 'self' https://web.example.test");

const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><rect width="120" height="40" fill="#0b5d3b"/></svg>';

let dir: string;
let logoFile: string;

before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-branding-'));
  logoFile = path.join(dir, 'acme.svg');
  writeFileSync(logoFile, LOGO_SVG);
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** The landing page at / (decision 76), which shows the global brand. */
const LANDING_PLUGIN = { name: '@gatehouse-auth/page-landing' };

/** The plugin's entry in `plugins:`, the global brand as its options. */
const brandingPlugin = (options: Record<string, unknown> = {}) => ({ name: '@gatehouse-auth/branding', options });

/** Starts (and closes) a server of these plugins and apps: a brand's keys are checked at start-up. */
async function startWith(plugins: Record<string, unknown>[], apps: Record<string, unknown>[] = []): Promise<void> {
  const gatehouse = await buildApp(testConfig(plugins as never, { apps }), { logger: createLogger('silent') });
  await gatehouse.close();
}

/** The start-up error of these plugins and apps (a BootError of `code`). */
async function startupError(
  code: 'CONFIG_INVALID' | 'PLUGIN_OPTIONS_INVALID' | 'PLUGIN_INVALID',
  plugins: Record<string, unknown>[],
  apps: Record<string, unknown>[] = [],
): Promise<string> {
  try {
    await startWith(plugins, apps);
  } catch (err) {
    expect(err).to.be.instanceOf(BootError);
    expect((err as BootError).code, (err as Error).message).to.equal(code);
    return (err as BootError).message;
  }
  return expect.fail(`expected ${code}`);
}

/** The start-up error of the plugin's options (the global brand). */
const optionsError = (options: Record<string, unknown>) =>
  startupError('PLUGIN_OPTIONS_INVALID', [brandingPlugin(options)]).then((m) =>
    m.replace('plugin @gatehouse-auth/branding: plugins[0].options.', 'branding.'),
  );
/** The start-up error of an app's `branding` key, with the plugin loaded. */
const appError = (branding: Record<string, unknown>) =>
  startupError('CONFIG_INVALID', [brandingPlugin()], [app(branding)]);

const app = (branding: Record<string, unknown>) => ({
  client_id: 'shop',
  redirect_uris: ['https://shop.example/cb'],
  branding,
});

describe('branding: config check', function () {
  this.timeout(20_000);

  it('takes a global brand and an app brand (#rgb and #rrggbb, a file logo, https links)', async () => {
    const gatehouse = await buildApp(
      testConfig(
        [
          brandingPlugin({
            title: 'Acme',
            logo: logoFile,
            primary_color: '#0b5d3b',
            support_url: 'https://help.acme.example',
          }),
        ],
        { apps: [app({ title: 'Acme Shop', primary_color: '#36c', logo: 'https://cdn.acme.example/shop.png' })] },
      ),
      { logger: createLogger('silent') },
    );
    try {
      const { branding } = gatehouse.container.cradle;
      expect(branding.of(null).title).to.equal('Acme');
      expect(branding.of('shop').stylesheet).to.equal('/branding/color/3366cc.css');
    } finally {
      await gatehouse.close();
    }
  });

  // Plugin options and app keys stop start-up at their first problem: one start per key here.
  it('refuses each bad key with a line naming it', async () => {
    const missing = path.join(dir, 'missing.png');
    const big = path.join(dir, 'big.png');
    writeFileSync(big, Buffer.alloc(600 * 1024));
    expect(await optionsError({ logo: 'http://cdn.acme.example/logo.png' })).to.equal(
      'branding.logo: must be an https URL or a file path',
    );
    expect(await optionsError({ primary_color: 'green' })).to.equal(
      'branding.primary_color: must be a color as #rgb or #rrggbb',
    );
    expect(await optionsError({ support_url: 'mailto:help@acme.example' })).to.equal(
      'branding.support_url: must be an https URL',
    );
    expect(await appError({ docs_url: 'https://docs.acme.example', colour: '#000' })).to.equal(
      'apps[0].branding.colour: is not a known key',
    );
    expect(await appError({ logo: missing, docs_url: 'https://docs.acme.example' })).to.equal(
      `apps[0].branding.logo: cannot read ${missing} (a path is relative to the working directory)`,
    );
    expect(await optionsError({ logo: big })).to.equal(
      `branding.logo: ${big} has ${600 * 1024} bytes; a logo may have at most ${512 * 1024}`,
    );
    expect(await optionsError({ logo: path.join(dir, 'logo.bmp') })).to.equal(
      'branding.logo: a logo file must end in .svg, .png, .jpg, .jpeg, .webp, .gif (its content type)',
    );
  });

  it('refuses a primary color too light for white button text (WCAG AA 4.5:1)', async () => {
    expect(contrastWithWhite('#fff')).to.equal(1);
    expect(contrastWithWhite('#000000')).to.be.closeTo(21, 0.001);
    // Gatehouse's own blue passes; a bright orange does not.
    expect(contrastWithWhite('#1f5fbf')).to.be.greaterThan(4.5);
    expect(await optionsError({ primary_color: '#ff9900' })).to.equal(
      'branding.primary_color: #ff9900 has a contrast of 2.14:1 with the white text of buttons; WCAG AA asks for 4.5:1, choose a darker color',
    );
    expect(await appError({ primary_color: '#777' })).to.match(
      /^apps\[0\]\.branding\.primary_color: #777 has a contrast of 4\.48:1/,
    );
  });

  it('refuses the former top-level branding: section at start-up, naming the plugin', () => {
    expect(() => parseConfig({ branding: { title: 'Acme' } }, {})).to.throw(
      BootError,
      /^branding: the branding is now the plugin @gatehouse-auth\/branding; list it under plugins: with these keys as its options$/,
    );
  });

  it("refuses an app's branding key without the plugin", async () => {
    expect(await startupError('CONFIG_INVALID', [], [app({ title: 'Acme Shop' })])).to.equal(
      'apps[0].branding: is not a known key (neither the core nor a loaded plugin adds it; the plugin @gatehouse-auth/branding does)',
    );
  });

  it('refuses a branding service without of()', async () => {
    const message = await startupError('PLUGIN_INVALID', [
      { path: path.join(import.meta.dirname, 'fixtures', 'bad-branding.js') },
    ]);
    expect(message).to.equal('plugin @fixture/bad-branding: service "branding" has no of function');
  });
});

describe('branding: pages and headers', function () {
  this.timeout(30_000);
  let server: OAuthServer;

  before(async () => {
    server = await startServer({
      apps: [
        {
          client_id: 'shop',
          token_endpoint_auth_method: 'none',
          redirect_uris: [WEB_CB],
          login_stages: [['PASSWORD']],
          branding: { title: 'Acme Shop', primary_color: '#5b2a86' },
        },
      ],
      plugins: [
        { name: '@gatehouse-auth/method-backupcode', options: { memory_cost: 1024, time_cost: 2 } },
        ACCOUNT_PLUGIN,
        LANDING_PLUGIN,
        brandingPlugin({
          title: 'Acme',
          logo: logoFile,
          primary_color: '#0b5d3b',
          support_url: 'https://help.acme.example/',
        }),
      ],
    });
  });
  after(() => server?.close());

  /** The login page of a new sign-in to `clientId`. */
  async function loginPage(clientId: string, headers: Record<string, string> = {}) {
    const browser = new Browser(server);
    const params = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: WEB_CB,
      scope: 'openid',
      state: 'st-1234567890',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    };
    const requestId = loginRequestId(locationOf(await browser.get(authorizePath(params), headers), server));
    const res = await browser.get(`/login?request_id=${requestId}`, headers);
    expect(res.status).to.equal(200);
    return { res, body: await res.text() };
  }

  it("serves the logo file at /branding/logo with its content type, caching and an SVG's own CSP", async () => {
    const res = await fetch(server.url('/branding/logo'));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/svg+xml');
    expect(res.headers.get('cache-control')).to.equal('public, max-age=86400');
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(res.headers.get('content-security-policy')).to.equal(
      "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    );
    expect(await res.text()).to.equal(LOGO_SVG);
    // No app of this config has a logo file of its own.
    expect((await fetch(server.url('/branding/apps/shop/logo'))).status).to.equal(404);
  });

  it('serves the color as a style sheet made from its path; nothing else under /branding/color/', async () => {
    const res = await fetch(server.url('/branding/color/5b2a86.css'));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/css; charset=utf-8');
    expect(res.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect(await res.text()).to.equal(':root {\n  --accent: #5b2a86;\n  --accent-ring: rgba(91, 42, 134, 0.35);\n}\n');
    for (const bad of ['5B2A86.css', '5b2a8.css', 'red.css', '5b2a86.js', '5b2a86%7D.css']) {
      const refused = await fetch(server.url(`/branding/color/${bad}`));
      expect(refused.status, bad).to.equal(404);
      expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
    }
  });

  it("shows an app's brand on its login page (its keys over the global ones) under the exact CSP", async () => {
    const { res, body } = await loginPage('shop');
    expect(res.headers.get('content-security-policy')).to.equal(LOGIN_CSP);
    expect(body).to.include('<title>Sign in to shop – Acme Shop</title>');
    expect(body).to.include('<link rel="stylesheet" href="/branding/color/5b2a86.css" />');
    expect(body).to.match(
      /<img class="brand-logo" id="gh-brand-logo" src="\/branding\/logo\?v=[0-9a-f]{16}" alt="Acme Shop" \/>/,
    );
    expect(body).to.include('<a href="https://help.acme.example/" id="gh-support">Help and support</a>');
  });

  it('shows the global brand to an app without its own, in German too', async () => {
    const { res, body } = await loginPage('web', { 'Accept-Language': 'de' });
    expect(res.headers.get('content-security-policy')).to.equal(LOGIN_CSP);
    expect(body).to.include('– Acme</title>');
    expect(body).to.include('href="/branding/color/0b5d3b.css"');
    expect(body).to.include('<a href="https://help.acme.example/" id="gh-support">Hilfe und Support</a>');
  });

  it('links support next to the reference id of an error page', async () => {
    const res = await fetch(server.url('/login?request_id=nosuchrequest0000000000'));
    expect(res.status).to.equal(404);
    expect(res.headers.get('content-security-policy')).to.equal(CSP);
    const body = await res.text();
    expect(body).to.match(
      /Reference: [^<]+\. Quote it if you contact support\.\s*<a href="https:\/\/help\.acme\.example\/" id="gh-error-support">Contact support<\/a>/,
    );
  });

  it('an app from the admin API: its logo is an https URL (no file) whose origin alone joins img-src', async () => {
    const post = (entry: Record<string, unknown>) =>
      fetch(server.url('/admin/apps'), {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(entry),
      });
    const entry = (branding: Record<string, unknown>) => ({
      client_id: 'stored-shop',
      token_endpoint_auth_method: 'none',
      redirect_uris: [WEB_CB],
      login_stages: [['PASSWORD']],
      branding,
    });
    for (const [branding, message] of [
      [{ logo: logoFile }, 'app.branding.logo: an app stored in the database takes an https URL, not a file'],
      [{ primary_color: '#ffcc00' }, /^app\.branding\.primary_color: #ffcc00 has a contrast of 1\.\d\d:1/],
      [{ support_url: 'javascript:alert(1)' }, 'app.branding.support_url: must be an https URL'],
    ] as const) {
      const res = await post(entry(branding));
      expect(res.status).to.equal(400);
      const { error } = (await res.json()) as { error: { code: string; error: string } };
      expect(error.code).to.equal('INVALID_APP');
      if (typeof message === 'string') expect(error.error).to.equal(message);
      else expect(error.error).to.match(message);
    }
    const created = await post(entry({ title: 'Stored Shop', logo: 'https://cdn.acme.example:8443/shop.png?v=2' }));
    expect(created.status).to.equal(201);
    const { res, body } = await loginPage('stored-shop');
    expect(res.headers.get('content-security-policy')).to.equal(
      LOGIN_CSP.replace("img-src 'self' data:", "img-src 'self' data: https://cdn.acme.example:8443"),
    );
    expect(body).to.include('src="https://cdn.acme.example:8443/shop.png?v=2" alt="Stored Shop"');
  });

  describe('the landing page at /', () => {
    it('is HTML for a browser: the product, the account page and the discovery document, en and de', async () => {
      const res = await fetch(server.url('/'), { headers: { Accept: 'text/html,*/*;q=0.8' } });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-security-policy')).to.equal(CSP);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('vary')).to.equal('Accept, Accept-Language');
      const body = await res.text();
      expect(body).to.include('<html lang="en">');
      expect(body).to.include('<title>Welcome – Acme</title>');
      expect(body).to.include('<h1>Acme</h1>');
      expect(body).to.include('<a href="/account" id="gh-account">Manage your account');
      expect(body).to.include('<a href="/.well-known/openid-configuration" id="gh-docs">OpenID Connect configuration');
      const de = await (
        await fetch(server.url('/'), { headers: { Accept: 'text/html', 'Accept-Language': 'de-DE' } })
      ).text();
      expect(de).to.include('<html lang="de">');
      expect(de).to.include('<title>Willkommen – Acme</title>');
      expect(de).to.include('id="gh-account">Ihr Konto verwalten');
    });

    it('keeps the JSON 404 for API clients (Accept: application/json, or */* as curl sends)', async () => {
      for (const accept of ['application/json', '*/*']) {
        const res = await fetch(server.url('/'), { headers: { Accept: accept } });
        expect(res.status, accept).to.equal(404);
        expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
      }
    });
  });
});

describe('branding: the landing page without a brand or an account page', function () {
  this.timeout(30_000);
  let server: OAuthServer;
  before(async () => {
    server = await startServer({
      plugins: [brandingPlugin({ docs_url: 'https://docs.acme.example/' }), LANDING_PLUGIN],
    });
  });
  after(() => server?.close());

  it('names Gatehouse, has no account link, and links the configured docs, unbranded', async () => {
    const res = await fetch(server.url('/'), { headers: { Accept: 'text/html' } });
    expect(res.status).to.equal(200);
    const body = await res.text();
    expect(body).to.include('<title>Gatehouse</title>');
    expect(body).to.include('<h1>Gatehouse</h1>');
    expect(body).not.to.include('gh-account');
    expect(body).to.include('<a href="https://docs.acme.example/" id="gh-docs">Documentation</a>');
    expect(body).to.include('<body>');
    expect(body).not.to.include('brand-bar');
  });
});

describe('branding: without the plugin', function () {
  this.timeout(30_000);
  let server: OAuthServer;
  before(async () => {
    server = await startServer({ plugins: [LANDING_PLUGIN] });
  });
  after(() => server?.close());

  it('serves no logo and no color style sheet (404), and the pages are unbranded', async () => {
    for (const route of ['/branding/logo', '/branding/apps/web/logo', '/branding/color/0b5d3b.css']) {
      const res = await fetch(server.url(route));
      expect(res.status, route).to.equal(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
    }
    const body = await (await fetch(server.url('/'), { headers: { Accept: 'text/html' } })).text();
    expect(body).to.include('<title>Gatehouse</title>');
    expect(body).to.include('<body>');
    expect(body).not.to.include('brand-bar');
    expect(body).not.to.include('/branding/');
  });
});
