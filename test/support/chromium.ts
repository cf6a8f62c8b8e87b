import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's `chromium` package; `.ci/run` installs it. */
export const CHROMIUM = '/usr/bin/chromium';

// Quiet and deterministic in a container: no sandbox (no user namespaces), no GPU, no QUIC, and
// none of the background traffic a fresh profile starts.
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Headless Chromium with a profile of its own in `profileDir`; `extraFlags` after the usual ones. */
function launchChromium(profileDir: string, extraFlags: string[] = []): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...FLAGS, ...extraFlags],
  });
}

/** Chromium on a throwaway profile of its own, and how to close it. */
export interface Chromium {
  context: BrowserContext;
  /** Closes the browser and removes the profile. */
  close(): Promise<void>;
}

/** Headless Chromium on a fresh profile (a temporary directory, removed by `close`). */
export async function openChromium(extraFlags: string[] = []): Promise<Chromium> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'chrome-profile-'));
  try {
    const context = await launchChromium(profile, extraFlags);
    return {
      context,
      async close() {
        await context.close();
        rmSync(profile, { recursive: true, force: true, maxRetries: 10 });
      },
    };
  } catch (err) {
    rmSync(profile, { recursive: true, force: true, maxRetries: 10 });
    throw err;
  }
}

/**
 * For a suite's `before`: skips it (with a message) on a machine without Chromium; under
 * CI=true a missing Chromium fails instead, since CI must run the browser tests.
 */
export function requireChromium(suite: Mocha.Context): void {
  if (existsSync(CHROMIUM)) return;
  if (process.env.CI === 'true')
    throw new Error(`${CHROMIUM} is missing: CI must install it (apt-get install chromium)`);
  console.log(`      skipped: no ${CHROMIUM} (apt-get install -y chromium to run the browser tests)`);
  suite.skip();
}

/**
 * A signed-out new tab for the next test, closing `last`: a test that ends at a redirect URI
 * with no server behind it leaves a failing navigation that would interrupt the next goto.
 */
export async function freshTab(context: BrowserContext, last: Page | undefined): Promise<Page> {
  await context.clearCookies();
  const page = await context.newPage();
  await last?.close();
  return page;
}
