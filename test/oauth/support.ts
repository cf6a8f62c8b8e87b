/**
 * The OAuth integration suite's harness: Gatehouse in-process on a free port (issuer
 * `http://127.0.0.1:<port>`), a set of apps that covers every client kind, a cookie-keeping
 * "browser" that never follows redirects, and a programmatic login that walks the flow the
 * hosted page would: authorize → /login → PASSWORD through the verification API → continue →
 * resume → the client's redirect URI (or the consent page).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { expect } from 'chai';
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { generate } from 'otplib';
import {
  buildApp,
  createLogger,
  listen,
  parseConfig,
  type Clock,
  type Gatehouse,
  type RunningServer,
} from '@gatehouse-auth/core';
import { peerBusFor } from '../support/config.js';

export const ADMIN_TOKEN = 'oauth-suite-admin-token-0123456789abcdef0123';
const KEY = Buffer.alloc(32, 11).toString('base64');
export const PASSWORD = 'correct horse battery staple 42';

/** Client ids and secrets of the registered apps. */
export const WEB = { id: 'web', secret: 'web-secret-0123456789abcdef0123456789abcdef' };
export const OTHER = { id: 'other', secret: 'other-secret-0123456789abcdef0123456789abcd' };
export const MACHINE = { id: 'machine', secret: 'machine-secret-0123456789abcdef0123456789ab' };
export const CONSENT = { id: 'consent', secret: 'consent-secret-0123456789abcdef0123456789ab' };
export const LEGACY = { id: 'legacy', secret: 'legacy-secret-0123456789abcdef0123456789abc' };
export const CSJWT = { id: 'csjwt', secret: 'csjwt-secret-0123456789abcdef0123456789abcd' };
export const OPAQUE = { id: 'opaque', secret: 'opaque-secret-0123456789abcdef0123456789abc' };
export const SHORTCODE = { id: 'shortcode', secret: 'shortcode-secret-0123456789abcdef01234567' };
export const GUESSED = { id: 'guessed', secret: 'guessed-secret-0123456789abcdef0123456789ab' };
export const MFA = { id: 'mfa', secret: 'mfa-secret-0123456789abcdef0123456789abcdef' };
/** An app signing in with a password, stepping up to TOTP when a request asks for the mfa acr. */
export const STEPUP = { id: 'stepup', secret: 'stepup-secret-0123456789abcdef0123456789abc' };
export const ACR_PWD = 'urn:gatehouse:acr:pwd';
export const ACR_MFA = 'urn:gatehouse:acr:mfa';
/** Apps that set require_state: always, and never (a confidential app without PKCE). */
export const STATE_ALWAYS = { id: 'state-always', secret: 'state-always-secret-0123456789abcdef012345' };
export const STATE_NEVER = { id: 'state-never', secret: 'state-never-secret-0123456789abcdef0123456' };
export const SPA = { id: 'spa' };
export const IMPLICIT = { id: 'implicit' };
export const NATIVE = { id: 'native' };
export const PKJWT = { id: 'pkjwt' };

export const WEB_CB = 'https://web.example.test/cb';
export const WEB_CB2 = 'https://web.example.test/other-cb';
export const SPA_CB = 'https://spa.example.test/cb';
export const NATIVE_CB = 'http://127.0.0.1/cb';

/** The private key of the private_key_jwt client (its public JWK is in the config). */
export interface ClientKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function clientKey(): Promise<ClientKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid: 'pkjwt-key-1', alg: 'ES256', use: 'sig' } };
}

/** Every app kind the suite needs. `minimal` leaves out the clients that enable password and implicit. */
export function suiteApps(key: ClientKey, opts: { minimal?: boolean } = {}): Record<string, unknown>[] {
  const stages = [['PASSWORD']];
  const apps: Record<string, unknown>[] = [
    {
      client_id: WEB.id,
      client_secret: WEB.secret,
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [WEB_CB, WEB_CB2],
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email', 'offline_access'],
      login_stages: stages,
    },
    {
      client_id: MACHINE.id,
      client_secret: MACHINE.secret,
      grant_types: ['client_credentials'],
      scopes: ['reports.read', 'reports.write', 'introspection'],
      service_subjects: { enterprise: ['ent-1001'], user: true },
    },
  ];
  if (opts.minimal) return apps;
  apps.push(
    {
      client_id: SPA.id,
      token_endpoint_auth_method: 'none',
      redirect_uris: [SPA_CB],
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'offline_access'],
      login_stages: stages,
    },
    {
      client_id: OTHER.id,
      client_secret: OTHER.secret,
      redirect_uris: ['https://other.example.test/cb'],
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      scopes: ['openid', 'profile', 'offline_access', 'reports.read'],
      login_stages: stages,
    },
    {
      client_id: CONSENT.id,
      name: 'Consent App',
      client_secret: CONSENT.secret,
      redirect_uris: ['https://consent.example.test/cb'],
      grant_types: ['authorization_code'],
      scopes: ['openid', 'profile', 'email', 'orders:read'],
      consent_required: true,
      login_stages: stages,
    },
    {
      client_id: IMPLICIT.id,
      token_endpoint_auth_method: 'none',
      redirect_uris: ['https://implicit.example.test/cb'],
      grant_types: ['authorization_code'],
      response_types: ['code', 'token'],
      scopes: ['openid', 'profile'],
      login_stages: stages,
    },
    {
      client_id: LEGACY.id,
      client_secret: LEGACY.secret,
      grant_types: ['password', 'refresh_token'],
      scopes: ['openid', 'profile', 'offline_access'],
      login_stages: stages,
    },
    {
      client_id: PKJWT.id,
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [key.publicJwk] },
      grant_types: ['client_credentials'],
      scopes: ['reports.read'],
    },
    {
      client_id: CSJWT.id,
      client_secret: CSJWT.secret,
      token_endpoint_auth_method: 'client_secret_jwt',
      grant_types: ['client_credentials'],
      scopes: ['reports.read'],
    },
    {
      client_id: OPAQUE.id,
      client_secret: OPAQUE.secret,
      redirect_uris: ['https://opaque.example.test/cb'],
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      scopes: ['openid', 'profile', 'offline_access', 'reports.read'],
      token_format: 'opaque',
      login_stages: stages,
    },
    {
      client_id: NATIVE.id,
      token_endpoint_auth_method: 'none',
      redirect_uris: [NATIVE_CB],
      grant_types: ['authorization_code'],
      scopes: ['openid'],
      login_stages: stages,
    },
    {
      client_id: SHORTCODE.id,
      client_secret: SHORTCODE.secret,
      redirect_uris: ['https://shortcode.example.test/cb'],
      grant_types: ['authorization_code'],
      scopes: ['openid'],
      code_ttl: 1,
      login_stages: stages,
    },
    {
      client_id: GUESSED.id,
      client_secret: GUESSED.secret,
      grant_types: ['client_credentials'],
      scopes: ['reports.read'],
    },
    {
      client_id: MFA.id,
      client_secret: MFA.secret,
      redirect_uris: ['https://mfa.example.test/cb'],
      grant_types: ['authorization_code'],
      scopes: ['openid'],
      login_stages: [['PASSWORD'], ['TOTP']],
    },
    {
      client_id: STEPUP.id,
      client_secret: STEPUP.secret,
      redirect_uris: ['https://stepup.example.test/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'offline_access'],
      login_stages: stages,
      acr_values: [
        { acr: ACR_PWD, login_stages: stages },
        { acr: ACR_MFA, login_stages: [...stages, ['TOTP']] },
      ],
    },
    ...[STATE_ALWAYS, STATE_NEVER].map((app) => ({
      client_id: app.id,
      client_secret: app.secret,
      redirect_uris: [`https://${app.id}.example.test/cb`],
      scopes: ['openid'],
      require_state: app === STATE_ALWAYS,
      login_stages: stages,
    })),
  );
  return apps;
}

/** A port nobody listens on right now, so the issuer can name it before the server starts. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface OAuthServer {
  gatehouse: Gatehouse;
  running: RunningServer;
  /** `http://127.0.0.1:<port>`: the issuer and the base of every URL. */
  issuer: string;
  key: ClientKey;
  url(path: string): string;
  /** A fresh active user with PASSWORD enrolled. */
  user(prefix?: string): Promise<TestUser>;
  close(): Promise<void>;
}

export interface TestUser {
  id: string;
  username: string;
  email: string;
}

export interface ServerOptions {
  databaseUrl?: string;
  minimal?: boolean;
  key?: ClientKey;
  /** More plugins after the suite's, by package name or path (e.g. a grant only one suite needs). */
  plugins?: { name?: string; path?: string; options?: Record<string, unknown> }[];
  /** Plugins of the suite's to leave out, by package name (a plugin's test without it). */
  without?: string[];
  /** More apps after the suite's. */
  apps?: Record<string, unknown>[];
  /** The server's clock (the system clock by default). */
  clock?: Clock;
  /** More top-level config sections (`console`, `account`). */
  config?: Record<string, unknown>;
  /** `server.trust_proxy: true`: X-Forwarded-For names the client address. */
  trustProxy?: boolean;
}

let serial = 0;

/** Builds and listens; the config is the one an operator would write (validated by parseConfig). */
export async function startServer(opts: ServerOptions = {}): Promise<OAuthServer> {
  const key = opts.key ?? (await clientKey());
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const lowCost = { memory_cost: 1024, time_cost: 2 };
  const config = parseConfig(
    {
      issuer,
      server: { host: '127.0.0.1', port, ...(opts.trustProxy ? { trust_proxy: true } : {}) },
      database: { url: opts.databaseUrl ?? 'sqlite::memory:' },
      log: { level: 'silent' },
      secrets: { encryption_key: KEY },
      admin: { token: ADMIN_TOKEN },
      plugins: [
        { name: '@gatehouse-auth/method-password', options: lowCost },
        { name: '@gatehouse-auth/method-totp' },
        { name: '@gatehouse-auth/grant-authorization-code' },
        { name: '@gatehouse-auth/grant-refresh-token' },
        { name: '@gatehouse-auth/grant-client-credentials' },
        { name: '@gatehouse-auth/grant-password' },
        { name: '@gatehouse-auth/management' },
        { name: '@gatehouse-auth/admin-api' },
        { name: '@gatehouse-auth/page-login' },
        { name: '@gatehouse-auth/verification-api' },
        { name: '@gatehouse-auth/page-consent' },
        { name: '@gatehouse-auth/oidc-userinfo' },
        { name: '@gatehouse-auth/oauth-end-session' },
        { name: '@gatehouse-auth/oauth-backchannel-logout' },
        { name: '@gatehouse-auth/openapi' },
        { name: '@gatehouse-auth/setup-api' },
        ...peerBusFor(opts.databaseUrl),
        ...(opts.plugins ?? []),
      ].filter((p) => !p.name || !opts.without?.includes(p.name)),
      apps: [...suiteApps(key, opts), ...(opts.apps ?? [])],
      ...(opts.config ?? {}),
    },
    {},
  );
  // GATEHOUSE_TEST_LOG=error shows the server's faults while debugging a failing test.
  const level = (process.env.GATEHOUSE_TEST_LOG ?? 'silent') as Parameters<typeof createLogger>[0];
  const gatehouse = await buildApp(config, {
    logger: createLogger(level),
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  const running = await listen(gatehouse);
  const url = (path: string) => `${issuer}${path}`;
  return {
    gatehouse,
    running,
    issuer,
    key,
    url,
    async user(prefix = 'user') {
      serial += 1;
      const username = `${prefix}${serial}x${process.pid}`;
      const email = `${username}@example.test`;
      const { id } = await gatehouse.container.cradle.users.create({ username, email });
      const res = await fetch(url('/verification-actions-srv/setup/PASSWORD/initiation'), {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ sub: id, password: PASSWORD }),
      });
      expect(res.status, await res.clone().text()).to.equal(200);
      return { id, username, email };
    },
    close: () => running.shutdown(),
  };
}

// ───────────────────────────── the browser ─────────────────────────────

/** What the browser and the flow helpers need of a server: its URLs. */
export type Site = Pick<OAuthServer, 'url' | 'issuer'>;

/**
 * A cookie jar and `fetch` that never follows redirects: each hop is asserted by the test. Like a
 * browser it sends `Origin` with every POST: the page's, Gatehouse's own (the hosted page) unless
 * `origin` names another (an app's login UI, another site).
 */
export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(
    private readonly server: Site,
    private readonly origin: string = new URL(server.issuer).origin,
  ) {}

  async request(pathOrUrl: string, init: RequestInit = {}): Promise<Response> {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : this.server.url(pathOrUrl);
    const headers = new Headers(init.headers);
    if (init.method && !['GET', 'HEAD'].includes(init.method) && !headers.has('Origin')) {
      headers.set('Origin', this.origin);
    }
    if (this.cookies.size) {
      headers.set('Cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    }
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.request(path, { headers });
  }

  postForm(path: string, fields: Record<string, string>): Promise<Response> {
    return this.request(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** The cookie names this browser holds. */
  cookieNames(): string[] {
    return [...this.cookies.keys()];
  }
}

/** Location of a 303 (asserted), resolved against the server. */
export function locationOf(res: Response, server: Site, status = 303): URL {
  expect(res.status, `expected a ${status} redirect`).to.equal(status);
  const location = res.headers.get('location');
  expect(location, 'Location header').to.be.a('string');
  return new URL(location!, server.issuer);
}

/** The authorization endpoint URL with these query parameters (in this order, repeats allowed). */
export function authorizePath(params: Record<string, string> | [string, string][]): string {
  const q = new URLSearchParams(params as Record<string, string>);
  return `/api/oauth2/authorize/?${q.toString()}`;
}

/** RFC 7636 S256: a random verifier and its challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** OIDC Core §3.1.3.6: the left half of the SHA-256 of `value`, base64url. */
export function halfHash(value: string): string {
  const digest = createHash('sha256').update(value).digest();
  return digest.subarray(0, 16).toString('base64url');
}

interface VerificationData {
  exchange_id?: { exchange_id: string };
  status_id?: string;
}

async function verificationCall(server: Site, path: string, body: Record<string, string>): Promise<VerificationData> {
  const res = await fetch(server.url(path), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data: VerificationData };
  expect(res.status, `${path}: ${JSON.stringify(json)}`).to.equal(200);
  return json.data;
}

/** One stage's method done through the verification API (no browser): its AUTHENTICATED status_id. */
export async function authenticatedStatus(
  server: Site,
  requestId: string,
  method: string,
  who: Record<string, string>,
  proof: Record<string, string>,
): Promise<string> {
  const initiated = await verificationCall(server, `/verification-srv/authentication/${method}/initiation`, {
    request_id: requestId,
    usage_type: 'sub' in who ? 'MULTIFACTOR_AUTHENTICATION' : 'INITIAL_AUTHENTICATION',
    ...who,
  });
  const verified = await verificationCall(server, `/verification-srv/authentication/${method}/verification`, {
    exchange_id: initiated.exchange_id!.exchange_id,
    ...proof,
  });
  return verified.status_id!;
}

/**
 * Completes one stage with a method through the verification API and continues the login
 * with a form POST (as the hosted page does, or an app's own login UI at `path`). Returns the 303's Location.
 */
export async function completeStage(
  browser: Browser,
  server: Site,
  requestId: string,
  method: string,
  who: Record<string, string>,
  proof: Record<string, string>,
  path = '/login/continue',
): Promise<URL> {
  const res = await browser.postForm(path, {
    requestId,
    status_id: await authenticatedStatus(server, requestId, method, who, proof),
    verificationType: method,
  });
  // 303 after the credential POST, never 307 (RFC 9700 §4.12).
  return locationOf(res, server, 303);
}

/** The request_id of a `/login?request_id=…` Location. */
export function loginRequestId(location: URL): string {
  expect(location.pathname).to.equal('/login');
  const id = location.searchParams.get('request_id');
  expect(id).to.be.a('string').and.not.equal('');
  return id!;
}

/** The PASSWORD stage of `requestId` for `user`, continued by `browser`: where it sends the browser. */
export function passwordStage(browser: Browser, server: Site, requestId: string, user: TestUser): Promise<URL> {
  return completeStage(browser, server, requestId, 'PASSWORD', { identifier: user.username }, { password: PASSWORD });
}

/**
 * From a `/login?request_id=` Location: the PASSWORD stage, the continuation, and the resume
 * hop. Returns the resume response (303 to the client, or to the consent page).
 */
export async function loginWithPassword(
  browser: Browser,
  server: OAuthServer,
  loginLocation: URL,
  user: TestUser,
): Promise<Response> {
  const requestId = loginRequestId(loginLocation);
  const resume = await passwordStage(browser, server, requestId, user);
  expect(resume.pathname).to.equal('/api/oauth2/authorize/resume');
  expect(resume.searchParams.get('request_id')).to.equal(requestId);
  return browser.get(resume.pathname + resume.search);
}

/** GET /authorize and, if the browser must log in, log in with the password. Returns the final response. */
export async function authorize(
  browser: Browser,
  server: OAuthServer,
  params: Record<string, string>,
  user: TestUser,
): Promise<Response> {
  const first = await browser.get(authorizePath(params));
  const next = locationOf(first, server);
  if (next.pathname === '/login') return loginWithPassword(browser, server, next, user);
  expect(next.pathname, 'SSO goes straight to resume').to.equal('/api/oauth2/authorize/resume');
  return browser.get(next.pathname + next.search);
}

export interface CodeResult {
  code: string;
  callback: URL;
  verifier: string;
  redirectUri: string;
  state: string;
  nonce: string;
  browser: Browser;
}

/** The whole front channel for a code: PKCE S256, state and nonce; asserts state and iss. */
export async function obtainCode(
  server: OAuthServer,
  user: TestUser,
  opts: {
    clientId?: string;
    redirectUri?: string;
    scope?: string;
    browser?: Browser;
    extra?: Record<string, string>;
    pkce?: boolean;
  } = {},
): Promise<CodeResult> {
  const browser = opts.browser ?? new Browser(server);
  const redirectUri = opts.redirectUri ?? WEB_CB;
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(12).toString('base64url');
  const nonce = randomBytes(12).toString('base64url');
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: opts.clientId ?? WEB.id,
    redirect_uri: redirectUri,
    scope: opts.scope ?? 'openid profile email offline_access',
    state,
    nonce,
    ...(opts.pkce === false ? {} : { code_challenge: challenge, code_challenge_method: 'S256' }),
    ...(opts.extra ?? {}),
  };
  const res = await authorize(browser, server, params, user);
  const callback = locationOf(res, server);
  expect(callback.href.split('?')[0]).to.equal(redirectUri);
  expect(callback.searchParams.get('error'), callback.search).to.equal(null);
  expect(callback.searchParams.get('state')).to.equal(state);
  expect(callback.searchParams.get('iss')).to.equal(server.issuer);
  const code = callback.searchParams.get('code');
  expect(code).to.be.a('string');
  return { code: code!, callback, verifier, redirectUri, state, nonce, browser };
}

// ───────────────────────────── back channel ─────────────────────────────

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

export function basic(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}

/** POST a form to `path`; `auth` is an Authorization header value. */
export async function postForm(
  server: Site,
  path: string,
  fields: Record<string, string> | [string, string][] | string,
  auth?: string,
): Promise<JsonResponse> {
  const res = await fetch(server.url(path), {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Accept: 'application/json',
      ...(auth ? { Authorization: auth } : {}),
    },
    body: typeof fields === 'string' ? fields : new URLSearchParams(fields as Record<string, string>).toString(),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = {};
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** Redeems a code with the web client's Basic credentials (or the given ones). */
export function redeem(
  server: OAuthServer,
  got: CodeResult,
  client: { id: string; secret?: string } = WEB,
  overrides: Record<string, string | undefined> = {},
): Promise<JsonResponse> {
  const fields: Record<string, string | undefined> = {
    grant_type: 'authorization_code',
    code: got.code,
    redirect_uri: got.redirectUri,
    code_verifier: got.verifier,
    ...(client.secret ? {} : { client_id: client.id }),
    ...overrides,
  };
  const clean = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return postForm(server, '/oauth/token', clean, client.secret ? basic(client.id, client.secret) : undefined);
}

/** Asserts an OAuth error response: exact status and code, JSON, no-store; returns the body. */
export function expectOAuthError(res: JsonResponse, status: number, code: string): Record<string, unknown> {
  expect(res.status, `${res.status} ${res.text}`).to.equal(status);
  expect(res.body.error, res.text).to.equal(code);
  expect(res.headers.get('content-type')).to.match(/^application\/json/);
  expect(res.headers.get('cache-control')).to.equal('no-store');
  if (res.body.error_description !== undefined) {
    // RFC 6749 §5.2: %x20-21 / %x23-5B / %x5D-7E only.
    expect(res.body.error_description).to.match(/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/);
  }
  return res.body;
}

/** Introspects with the web client's (or the given) credentials. */
export async function introspect(
  server: OAuthServer,
  token: string,
  client: { id: string; secret: string } = WEB,
): Promise<Record<string, unknown>> {
  const res = await postForm(server, '/token/introspect', { token }, basic(client.id, client.secret));
  expect(res.status, res.text).to.equal(200);
  return res.body;
}

/** Client credentials token of the machine client (or another confidential one). */
export async function machineToken(
  server: OAuthServer,
  scope?: string,
  client: { id: string; secret: string } = MACHINE,
): Promise<JsonResponse> {
  return postForm(
    server,
    '/oauth/token',
    { grant_type: 'client_credentials', ...(scope ? { scope } : {}) },
    basic(client.id, client.secret),
  );
}

/** Decodes a JWT's header and payload without verifying (the tests verify separately). */
export function decodeJwtParts(jwt: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [h, p] = jwt.split('.');
  return {
    header: JSON.parse(Buffer.from(h!, 'base64url').toString('utf8')) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')) as Record<string, unknown>,
  };
}

/** Enrols TOTP for a user through the admin API; returns the seed. */
export async function enrolTotp(server: OAuthServer, user: TestUser): Promise<string> {
  const call = async (step: string, body: Record<string, string>) => {
    const res = await fetch(server.url(`/verification-actions-srv/setup/TOTP/${step}`), {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sub: user.id, ...body }),
    });
    const json = (await res.json()) as { data: Record<string, string> };
    expect(res.status, JSON.stringify(json)).to.equal(200);
    return json.data;
  };
  const { secret } = await call('initiation', {});
  // The confirmation spends the current step; the login uses the next one (the server accepts ±1).
  await call('verification', { pass_code: await totpCode(secret!, -1) });
  return secret!;
}

export function totpCode(secret: string, steps = 0): Promise<string> {
  return generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
