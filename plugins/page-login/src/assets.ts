import { readAsset, type Asset } from '@gatehouse-auth/core';

// The login page's scripts: real files under assets/ (eslint and prettier check them; the
// package ships the folder), read once at start-up. Its style sheet is the core's
// (`/login/assets/login.css`), shared with every hosted page.

const JS = 'text/javascript; charset=utf-8';

/** A static file served by the page's routes, with a content hash for cache busting. */
function asset(file: string): Asset {
  return readAsset(new URL(`../assets/${file}`, import.meta.url), JS);
}

/**
 * The pages' message lookup, loaded before the login and offer scripts: a page hands its
 * messages to its scripts in `data-messages` (JSON in an attribute: no inline script for the
 * CSP to allow).
 */
export const MESSAGES_JS: Asset = asset('messages.js');

/**
 * The login page's send button and the wait before a method may send a new code, as the server
 * answered it (`resend_after`, or a 429 RESEND_TOO_SOON's `retry_after`); loaded before login.js.
 */
export const RESEND_JS: Asset = asset('resend.js');

/** The browser script of the login page: vanilla JS, no dependencies, no build step. */
export const LOGIN_JS: Asset = asset('login.js');

/**
 * The script of the offer page (a method to set up after a login): the method's module
 * registers its driver, and the accept button runs the driver's enroll(ctx), which calls the
 * setup steps for the user who just signed in. Then the page continues to the app.
 */
export const OFFER_JS: Asset = asset('offer.js');

/**
 * The script of a setup during a login by a browser ceremony (a passkey, `enroll_on_login` or a
 * required second factor): like the offer page's, on the setup screens' JSON steps.
 */
export const ENROLL_JS: Asset = asset('enroll.js');
