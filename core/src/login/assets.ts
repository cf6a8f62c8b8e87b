import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import express, { type Response, type Router } from 'express';

// The hosted pages' style sheet and the form_post script: real files under core/assets/login/
// (eslint and prettier check them; the package ships the folder), read once at start-up. The
// hosted login page's own scripts are @gatehouse-auth/page-login's.

/** A static file served by the core, with a content hash for cache busting. */
export interface Asset {
  body: string;
  contentType: string;
  /** First 16 hex digits of the SHA-256 of the body, used as `?v=` in the page. */
  version: string;
}

function asset(file: string, contentType: string): Asset {
  const body = readFileSync(new URL(`../../assets/login/${file}`, import.meta.url), 'utf8');
  return { body, contentType, version: createHash('sha256').update(body).digest('hex').slice(0, 16) };
}

/** The style sheet of every hosted page (OAuth pages, the login page, plugin pages). */
export const LOGIN_CSS: Asset = asset('login.css', 'text/css; charset=utf-8');

/** The browser tab's icon of every page (browsers ask for /favicon.ico on their own). */
export const FAVICON: Asset = asset('favicon.svg', 'image/svg+xml; charset=utf-8');

/** Submits the form of a form_post response (OAuth 2.0 Form Post Response Mode) without inline script. */
export const FORM_POST_JS: Asset = asset('form-post.js', 'text/javascript; charset=utf-8');

/** Since 1.3: the Show / Hide button beside each password field of a hosted page (layout.ts). */
export const PASSWORD_REVEAL_JS: Asset = asset('password-reveal.js', 'text/javascript; charset=utf-8');

function sendAsset(res: Response, asset: Asset): void {
  res.set({
    'Content-Type': asset.contentType,
    'Cache-Control': 'public, max-age=300',
    'X-Content-Type-Options': 'nosniff',
  });
  res.send(asset.body);
}

/** `/login/assets/login.css`, the scripts under `/login/assets/`, and the icon at `/favicon.ico`. */
export function assetRoutes(): Router {
  const router = express.Router();
  router.get('/favicon.ico', (_req, res) => sendAsset(res, FAVICON));
  router.get('/login/assets/login.css', (_req, res) => sendAsset(res, LOGIN_CSS));
  router.get('/login/assets/form-post.js', (_req, res) => sendAsset(res, FORM_POST_JS));
  router.get('/login/assets/password-reveal.js', (_req, res) => sendAsset(res, PASSWORD_REVEAL_JS));
  return router;
}
