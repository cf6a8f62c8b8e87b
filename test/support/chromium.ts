import { chromium, type BrowserContext } from 'playwright-core';

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
export function launchChromium(profileDir: string, extraFlags: string[] = []): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...FLAGS, ...extraFlags],
  });
}
