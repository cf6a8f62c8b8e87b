import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { Response } from 'express';

// The hosted pages' style sheet and the form_post script: real files under
// core/plugin-api/assets/login/ (eslint and prettier check them; the package ships the folder),
// read once at start-up; the core serves them under `/login/assets/` (its login/assets.ts). The
// hosted login page's own scripts are @gatehouse-auth/page-login's.

/** A static file served by the core or a page's plugin, with a content hash for cache busting. */
export interface Asset {
  body: string;
  contentType: string;
  /** First 16 hex digits of the SHA-256 of the body, used as `?v=` in the page. */
  version: string;
}

/**
 * Since plugin API 1.3: a page's static file (a real file of its package, so that eslint and
 * prettier check it), read once at start-up, e.g. `readAsset(new URL('../assets/x.js',
 * import.meta.url), 'text/javascript; charset=utf-8')`.
 */
export function readAsset(file: URL, contentType: string): Asset {
  const body = readFileSync(file, 'utf8');
  return { body, contentType, version: createHash('sha256').update(body).digest('hex').slice(0, 16) };
}

/** Since plugin API 1.3: the answer with a static file, cached for five minutes (its URL's `?v=` changes with it). */
export function sendAsset(res: Response, asset: Asset): void {
  res.set({
    'Content-Type': asset.contentType,
    'Cache-Control': 'public, max-age=300',
    'X-Content-Type-Options': 'nosniff',
  });
  res.send(asset.body);
}

function asset(file: string, contentType: string): Asset {
  return readAsset(new URL(`../assets/login/${file}`, import.meta.url), contentType);
}

/** The style sheet of every hosted page (OAuth pages, the login page, plugin pages). */
export const LOGIN_CSS: Asset = asset('login.css', 'text/css; charset=utf-8');

/** The browser tab's icon of every page (browsers ask for /favicon.ico on their own). */
export const FAVICON: Asset = asset('favicon.svg', 'image/svg+xml; charset=utf-8');

/** Submits the form of a form_post response (OAuth 2.0 Form Post Response Mode) without inline script. */
export const FORM_POST_JS: Asset = asset('form-post.js', 'text/javascript; charset=utf-8');

/** Since 1.3: the Show / Hide button beside each password field of a hosted page (page-layout.ts). */
export const PASSWORD_REVEAL_JS: Asset = asset('password-reveal.js', 'text/javascript; charset=utf-8');
