/**
 * The issue-29 walk's setup: the demo config (config/default.yaml, via startDemoServer: a fake
 * clock, an in-memory database) with the demo's own OAuth client (tools/demo's DemoClient) in
 * front of it, people to sign in, and a screenshot taker that saves every page at 1280 and
 * 390 px and fails a page that scrolls sideways on a phone.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { DemoClient, SIGNED_OUT_PATH } from '../../tools/demo/src/client.js';
import { ALICE_PASSWORD, DEMO_ADMIN_TOKEN, DEMO_APP, startDemoServer, type DemoServer } from '../oauth/demo-server.js';
import { REPO_ROOT } from '../support/paths.js';

/**
 * Where the walk writes its screenshots, `<locale>-<page>-<width>.png`: test-output/screenshots
 * (git-ignored), or GATEHOUSE_SCREENSHOTS/walk as the console and account suites do.
 */
export const SCREENSHOTS = process.env.GATEHOUSE_SCREENSHOTS
  ? path.join(process.env.GATEHOUSE_SCREENSHOTS, 'walk')
  : path.join(REPO_ROOT, 'test-output', 'screenshots');

/** The widths every hosted page is saved at: a desktop and a phone. */
export const WIDTHS = [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
] as const;

/**
 * The brand the walk's config gives (issue 29): the deployment's, and the demo app's own over
 * it on its login pages. `button` is the primary color as the browser computes a background.
 */
export const BRAND = {
  global: {
    title: 'Walkway',
    primary_color: '#0b5d3b',
    support_url: 'https://help.walkway.example/',
    docs_url: 'https://docs.walkway.example/',
    button: 'rgb(11, 93, 59)',
  },
  app: { title: 'Demo Shop', primary_color: '#5b2a86', button: 'rgb(91, 42, 134)' },
} as const;

/** A small SVG logo: a colored square with the brand's initial, as an operator's file would be. */
function logoFile(dir: string, name: string, color: string, letter: string): string {
  const file = path.join(dir, `${name}.svg`);
  writeFileSync(
    file,
    `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">` +
      `<rect width="32" height="32" rx="6" fill="${color}"/>` +
      `<text x="16" y="22" font-family="sans-serif" font-size="18" fill="#fff" text-anchor="middle">${letter}</text>` +
      `</svg>`,
  );
  return file;
}

/** The demo config's server and the demo client signing in to it. */
export interface WalkServer {
  server: DemoServer;
  /** The demo client's start page (`/` sends the browser to Gatehouse). */
  clientUrl: string;
  close(): Promise<void>;
}

/**
 * Gatehouse on the demo config with the walk's brand (logo files, colors, a support link), and
 * the demo client on a port of its own as its demo-app.
 */
export async function startWalkServer(): Promise<WalkServer> {
  const client = new DemoClient();
  const clientPort = await client.listen('127.0.0.1', 0);
  const clientOrigin = `http://localhost:${clientPort}`;
  const redirectUri = `${clientOrigin}/callback`;
  let server: DemoServer;
  try {
    // `localhost`, as the demo runs: the passkey method's relying party is a domain name.
    const logos = mkdtempSync(path.join(tmpdir(), 'gatehouse-walk-'));
    server = await startDemoServer({
      host: 'localhost',
      configure(config) {
        const app = config.apps.find((a) => a.client_id === DEMO_APP.id)!;
        app.redirect_uris = [redirectUri];
        app.post_logout_redirect_uris = [`${clientOrigin}${SIGNED_OUT_PATH}`];
        const { button: _global, ...global } = BRAND.global;
        config.plugins.push({
          name: '@gatehouse-auth/branding',
          options: { ...global, logo: logoFile(logos, 'walkway', global.primary_color, 'W') },
        });
        const { button: _app, ...own } = BRAND.app;
        app.branding = { ...own, logo: logoFile(logos, 'demo-shop', own.primary_color, 'S') };
      },
    });
  } catch (err) {
    await client.close();
    throw err;
  }
  // The client's back channel goes to the address bound (localhost may resolve to ::1 first).
  const backChannel = server.issuer.replace('localhost', '127.0.0.1');
  client.configure(server.issuer, backChannel, { clientId: DEMO_APP.id, clientSecret: DEMO_APP.secret, redirectUri });
  return {
    server,
    clientUrl: `${clientOrigin}/`,
    async close() {
      await client.close();
      await server.close();
    },
  };
}

/** Someone the walk signs in: a password, an authenticator app (TOTP) and backup codes. */
export interface Walker {
  id: string;
  username: string;
  password: string;
  totpSecret: string;
  backupCodes: string[];
}

/** An admin call to the setup (enrolment) API; returns the answer's `data`. */
async function setup(server: DemoServer, method: string, step: string, body: Record<string, string>) {
  const res = await fetch(server.url(`/verification-actions-srv/setup/${method}/${step}`), {
    method: 'POST',
    headers: { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data: Record<string, unknown> };
  expect(res.status, JSON.stringify(json)).to.equal(200);
  return json.data;
}

/** A new person with a password, TOTP and backup codes (and a phone, for the SMS method). */
export async function newWalker(server: DemoServer, username: string, phone: string): Promise<Walker> {
  const { id } = await server.gatehouse.container.cradle.users.create({
    username,
    email: `${username}@example.test`,
    phone,
  });
  await setup(server, 'PASSWORD', 'initiation', { sub: id, password: ALICE_PASSWORD });
  const { codes } = await setup(server, 'BACKUPCODE', 'initiation', { sub: id });
  const { secret } = await setup(server, 'TOTP', 'initiation', { sub: id });
  const walker = { id, username, password: ALICE_PASSWORD, totpSecret: String(secret), backupCodes: codes as string[] };
  await setup(server, 'TOTP', 'verification', { sub: id, pass_code: await totpNow(server, walker) });
  return walker;
}

/** The walker's TOTP code now; the fake clock then moves a step on, so the next one is fresh. */
export async function totpNow(server: DemoServer, walker: Pick<Walker, 'totpSecret'>): Promise<string> {
  const code = await generate({ secret: walker.totpSecret, epoch: Math.floor(server.clock.now().getTime() / 1000) });
  server.clock.advance(30);
  return code;
}

/**
 * Saves the page at each width as `<locale>-<name>-<width>.png` (full page) and asserts that at
 * the phone's width nothing makes the page scroll sideways. Leaves the desktop width set.
 */
export async function capture(page: Page, locale: string, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  for (const size of WIDTHS) {
    await page.setViewportSize(size);
    const overflow = await page.evaluate<number>(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    expect(overflow, `${locale}-${name} at ${size.width} px scrolls sideways by (px)`).to.be.at.most(0);
    await page.screenshot({ path: path.join(SCREENSHOTS, `${locale}-${name}-${size.width}.png`), fullPage: true });
  }
  await page.setViewportSize(WIDTHS[0]);
}
