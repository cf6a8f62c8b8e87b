import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import { PASSWORD, totpCode } from '../oauth/support.js';
import { openChromium } from '../support/chromium.js';

/**
 * Where the console and account suites save their screenshots, to be looked at by eye:
 * GATEHOUSE_SCREENSHOTS, else a fresh temporary directory (printed once).
 */
export function screenshotDir(suite: string): string {
  const dir = process.env.GATEHOUSE_SCREENSHOTS
    ? path.join(process.env.GATEHOUSE_SCREENSHOTS, suite)
    : mkdtempSync(path.join(os.tmpdir(), `gatehouse-${suite}-`));
  mkdirSync(dir, { recursive: true });
  console.log(`      screenshots: ${dir}`);
  return dir;
}

/**
 * Watches a context's pages for CSP violations (the page's securitypolicyviolation events,
 * recorded before any page script runs, and the console's complaints) and script errors.
 */
export async function watchPage(context: BrowserContext, page: Page) {
  const complaints: string[] = [];
  await context.addInitScript(
    "document.addEventListener('securitypolicyviolation', (e) => " +
      '(window.__csp = window.__csp || []).push(e.violatedDirective + " " + e.blockedURI));',
  );
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) complaints.push(message.text());
  });
  page.on('pageerror', (err) => complaints.push(err.message));
  return {
    /** What the current page and the console reported so far. */
    async problems(): Promise<string[]> {
      const seen = (await page.evaluate('window.__csp || []')) as string[];
      return [...seen, ...complaints];
    },
  };
}

/**
 * Chromium on a fresh profile (English) for one suite: its page, watched for CSP violations and
 * script errors, a screenshot taker, and `close`, which also removes the profile.
 */
export async function openSiteBrowser(suite: string) {
  const chrome = await openChromium(['--lang=en-US']);
  const { context } = chrome;
  const page = context.pages()[0] ?? (await context.newPage());
  const watch = await watchPage(context, page);
  const shots = screenshotDir(suite);
  return {
    context,
    page,
    watch,
    shot: (name: string) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true }),
    close: () => chrome.close(),
  };
}

export type SiteBrowser = Awaited<ReturnType<typeof openSiteBrowser>>;

/** What the keyboard focus is on: its text, or a field's label. */
async function focused(page: Page): Promise<string> {
  // A string, run in the page: the tests' TypeScript has no DOM types.
  return (await page.evaluate(`(() => {
    const el = document.activeElement;
    if (!el) return '';
    const label = (el.labels && el.labels[0] && el.labels[0].textContent) || '';
    return (label || el.textContent || el.value || '').trim().replace(/\\s+/g, ' ');
  })()`)) as string;
}

/** Presses Tab until the focus is on something whose text or label is `name`; fails after `max`. */
export async function tabTo(page: Page, name: string, max = 60): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if ((await focused(page)) === name) return;
  }
  expect.fail(`no focusable "${name}" within ${max} tabs`);
}

/** A user with TOTP as the browser suites sign them in. */
export interface BrowserUser {
  id: string;
  username: string;
  totp: string;
  steps: number;
}

/**
 * The hosted login page's two stages, by keyboard: the identifier and the password, Enter;
 * the authenticator code, Enter. Ends where the site sends the browser back.
 */
export async function signInByKeyboard(page: Page, user: BrowserUser, until: RegExp): Promise<void> {
  await page.getByRole('textbox', { name: 'Username, email or phone' }).waitFor();
  await page.getByRole('textbox', { name: 'Username, email or phone' }).focus();
  await page.keyboard.type(user.username);
  await tabTo(page, 'Password');
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press('Enter');
  const code = page.getByRole('textbox', { name: 'Code from your authenticator app' });
  await code.waitFor();
  await code.focus();
  await page.keyboard.type(await totpCode(user.totp, user.steps++));
  await Promise.all([page.waitForURL(until), page.keyboard.press('Enter')]);
}
