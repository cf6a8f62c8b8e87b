/**
 * The relying-party suites' server: the OAuth suite's (test/oauth/support.ts) plus the token
 * exchange grant, three apps of their own and a clock that can run ahead, and the browser
 * part of a code flow starting from the URL an RP library built.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import {
  ADMIN_TOKEN,
  Browser,
  STEPUP,
  locationOf,
  loginWithPassword,
  startServer,
  type OAuthServer,
  type TestUser,
} from '../oauth/support.js';

export const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** A resource that stands for one file: exchanging for it restricts the token to the file. */
export const DOC = 'https://files.example.test/2.0/files/123';
export const DOC_OBJECT = { type: 'file', id: '123', name: 'Contract.pdf', etag: '3' };

export interface RpApp {
  id: string;
  secret: string;
  /** The app's only redirect URI (a request without redirect_uri, as with JAR, still has one). */
  redirectUri: string;
}

const rpApp = (id: string): RpApp => ({
  id,
  secret: `${id}-secret-0123456789abcdef0123456789abcdef`,
  redirectUri: `https://${id}.example.test/cb`,
});
/** Two confidential apps alike but for the ID token algorithm: the default (RS256), and ES256. */
export const RS = rpApp('rp-rs');
export const ES = rpApp('rp-es');
/** An app that exchanges its users' tokens for tokens restricted to one file. */
export const FILES = rpApp('rp-files');
/** An app whose rotated refresh token answers again for 5 s (two tabs renewing at once). */
export const TABS = rpApp('rp-tabs');
/** An app that reads the profile from the ID token (as Auth.js does): `id_token_claims: scope`. */
export const PROFILE_IN_ID = rpApp('rp-profile');
/** The OAuth suite's step-up app (password; TOTP too for the mfa acr). */
export const STEPUP_APP: RpApp = { ...STEPUP, redirectUri: 'https://stepup.example.test/cb' };

const appConfig = (app: RpApp, more: Record<string, unknown>) => ({
  client_id: app.id,
  client_secret: app.secret,
  token_endpoint_auth_method: 'client_secret_basic',
  redirect_uris: [app.redirectUri],
  login_stages: [['PASSWORD']],
  ...more,
});

const RP_APPS = [
  appConfig(RS, {
    grant_types: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'email', 'offline_access'],
  }),
  appConfig(ES, {
    grant_types: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    id_token_signed_response_alg: 'ES256',
  }),
  appConfig(TABS, {
    grant_types: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'offline_access'],
    refresh_token_reuse_interval: 5,
  }),
  appConfig(PROFILE_IN_ID, {
    scopes: ['openid', 'profile', 'email'],
    id_token_claims: 'scope',
  }),
  appConfig(FILES, {
    grant_types: ['authorization_code', EXCHANGE],
    scopes: ['openid', 'item_preview', 'item_download'],
    resource_objects: [{ resource: DOC, object: DOC_OBJECT }],
  }),
];

/** The system clock, `offset` seconds ahead: a code redeemed "31 s later" without waiting. */
export class OffsetClock {
  offset = 0;
  now(): Date {
    return new Date(Date.now() + this.offset * 1000);
  }
}

export interface RpServer extends OAuthServer {
  clock: OffsetClock;
}

export async function startRpServer(): Promise<RpServer> {
  const clock = new OffsetClock();
  const server = await startServer({
    plugins: [{ name: '@gatehouse-auth/grant-token-exchange' }],
    apps: RP_APPS,
    clock,
  });
  return Object.assign(server, { clock });
}

/**
 * The browser part of a code flow from an RP library's authorization URL: the password login
 * if the browser's session does not do, the resume hop; returns the callback URL.
 */
export async function signIn(server: OAuthServer, browser: Browser, url: URL, user: TestUser): Promise<URL> {
  const next = locationOf(await browser.get(url.href), server);
  const resumed =
    next.pathname === '/login'
      ? await loginWithPassword(browser, server, next, user)
      : await browser.get(next.pathname + next.search);
  return locationOf(resumed, server);
}

/** Where the authorization endpoint sends a fresh browser straight away: an error at the redirect URI. */
export async function immediateRedirect(server: OAuthServer, url: URL, app: RpApp): Promise<URL> {
  const callback = locationOf(await new Browser(server).get(url.href), server);
  expect(callback.origin + callback.pathname).to.equal(app.redirectUri);
  return callback;
}

/** Sets profile claims of a user through the admin API (a JSON merge patch). */
export async function patchProfile(server: OAuthServer, user: TestUser, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(server.url(`/admin/users/${user.id}/profile`), {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).to.equal(200);
}

/** OIDC Core §3.1.3.6: the left half of the SHA-256 of `value` (RS256 and ES256 both hash with SHA-256). */
export const halfHash = (value: string): string =>
  createHash('sha256').update(value).digest().subarray(0, 16).toString('base64url');

/** What a promise was rejected with (null if it was not). */
export const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => null,
    (err: unknown) => err,
  );
