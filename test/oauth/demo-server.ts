/**
 * The demo config (config/default.yaml) served in-process on a free port with a fake clock,
 * an in-memory database and alice enrolled with a password, TOTP, backup codes and a phone:
 * the setup the security review used to find the second-factor bypass through SSO.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { generate } from 'otplib';
import {
  buildApp,
  createLogger,
  listen,
  loadConfigFile,
  type Gatehouse,
  type GatehouseConfig,
  type RunningServer,
} from '@gatehouse-auth/core';
import { FakeClock } from '@gatehouse-auth/testing';
import type { Browser } from './support.js';
import { completeStage, freePort, locationOf, pkcePair, postForm, basic, type Site } from './support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DEMO_ADMIN_TOKEN = 'demo-suite-admin-token-0123456789abcdef01234';
export const ALICE_PASSWORD = 'correct horse battery staple';
export const DEMO_APP = {
  id: 'demo-app',
  secret: 'demo-secret-change-me-0123456789abcdef',
  redirectUri: 'http://localhost:8080/callback',
};
export const DEMO_SPA = { id: 'demo-spa', redirectUri: 'http://127.0.0.1:5173/callback' };
export type DemoClient = typeof DEMO_APP | typeof DEMO_SPA;

export interface DemoServer extends Site {
  gatehouse: Gatehouse;
  clock: FakeClock;
  alice: { id: string; totpSecret: string; backupCodes: string[] };
  close(): Promise<void>;
}

export async function startDemoServer(
  opts: {
    trustProxy?: boolean;
    configure?: (config: GatehouseConfig) => void;
    /** `localhost` for WebAuthn, whose relying party id must be a domain name (default 127.0.0.1). */
    host?: string;
    /** argon2id cost for PASSWORD and BACKUPCODE (default: cheap, the suite checks behaviour). */
    hashCost?: { memory_cost: number; time_cost: number };
    logger?: ReturnType<typeof createLogger>;
  } = {},
): Promise<DemoServer> {
  const port = await freePort();
  const issuer = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  const loaded = loadConfigFile(path.join(ROOT, 'config/default.yaml'), {
    DATABASE_URL: 'sqlite::memory:',
    ISSUER: issuer,
    PORT: String(port),
    LOG_LEVEL: 'silent',
    GATEHOUSE_ADMIN_TOKEN: DEMO_ADMIN_TOKEN,
    GATEHOUSE_ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
  });
  loaded.config.server.trust_proxy = opts.trustProxy ?? false;
  opts.configure?.(loaded.config);
  // Cheap hashing: the suite checks behaviour, not cost.
  for (const plugin of loaded.config.plugins) {
    if (plugin.name === '@gatehouse-auth/method-password' || plugin.name === '@gatehouse-auth/method-backupcode') {
      plugin.options = { ...plugin.options, ...(opts.hashCost ?? { memory_cost: 1024, time_cost: 2 }) };
    }
  }
  const clock = new FakeClock(new Date());
  const level = (process.env.GATEHOUSE_TEST_LOG ?? 'silent') as Parameters<typeof createLogger>[0];
  const gatehouse = await buildApp(loaded, { logger: opts.logger ?? createLogger(level), clock });
  const running: RunningServer = await listen(gatehouse);
  const url = (p: string) => `${issuer}${p}`;

  const setup = async (method: string, step: string, body: Record<string, string>) => {
    const res = await fetch(url(`/verification-actions-srv/setup/${method}/${step}`), {
      method: 'POST',
      headers: { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { data: Record<string, unknown> };
    expect(res.status, JSON.stringify(json)).to.equal(200);
    return json.data;
  };
  const { id } = await gatehouse.container.cradle.users.create({
    username: 'alice',
    email: 'alice@example.test',
    phone: '+15551230000',
  });
  await setup('PASSWORD', 'initiation', { sub: id, password: ALICE_PASSWORD });
  const { codes } = await setup('BACKUPCODE', 'initiation', { sub: id });
  const { secret } = await setup('TOTP', 'initiation', { sub: id });
  await setup('TOTP', 'verification', {
    sub: id,
    pass_code: await generate({ secret: String(secret), epoch: Math.floor(clock.now().getTime() / 1000) }),
  });
  // The confirmation spent this step; logins use later ones.
  clock.advance(30);
  return {
    gatehouse,
    clock,
    issuer,
    url,
    alice: { id, totpSecret: String(secret), backupCodes: codes as string[] },
    close: () => running.shutdown(),
  };
}

export interface Authorization {
  /** Where /authorize sent the browser. */
  location: URL;
  verifier: string;
  state: string;
}

/** GET /authorize for a demo client with PKCE, state and nonce; returns where it went. */
export async function startAuthorization(
  browser: Browser,
  server: DemoServer,
  client: DemoClient,
  extra: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<Authorization> {
  const { verifier, challenge } = pkcePair();
  const state = `st-${Math.random().toString(36).slice(2)}`;
  const params = new URLSearchParams({
    client_id: client.id,
    response_type: 'code',
    scope: 'openid profile',
    redirect_uri: client.redirectUri,
    state,
    nonce: 'n-0S6_WzA2Mj',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
  const res = await browser.get(`/api/oauth2/authorize/?${params.toString()}`, headers);
  return { location: locationOf(res, server), verifier, state };
}

/** The current TOTP code of alice; the clock moves on a step so the next call gets a fresh one. */
export async function aliceTotp(server: DemoServer): Promise<string> {
  const code = await generate({
    secret: server.alice.totpSecret,
    epoch: Math.floor(server.clock.now().getTime() / 1000),
  });
  server.clock.advance(30);
  return code;
}

/** Completes the stage of `requestId` with a method; returns the next Location. */
export async function stage(
  browser: Browser,
  server: DemoServer,
  requestId: string,
  method: 'PASSWORD' | 'TOTP' | 'BACKUPCODE',
  opts: { identify?: boolean } = {},
): Promise<URL> {
  const who: Record<string, string> = opts.identify ? { identifier: 'alice' } : { sub: server.alice.id };
  const proof: Record<string, string> =
    method === 'PASSWORD'
      ? { password: ALICE_PASSWORD }
      : method === 'TOTP'
        ? { pass_code: await aliceTotp(server) }
        : { pass_code: server.alice.backupCodes.pop()! };
  return completeStage(browser, server, requestId, method, who, proof);
}

/** Follows the resume hop to the client's redirect URI and returns the code (asserting state and iss). */
export async function codeFrom(
  browser: Browser,
  server: DemoServer,
  resume: URL,
  auth: Authorization,
  client: DemoClient,
) {
  expect(resume.pathname).to.equal('/api/oauth2/authorize/resume');
  const callback = locationOf(await browser.get(resume.pathname + resume.search), server);
  expect(callback.origin + callback.pathname).to.equal(client.redirectUri);
  expect(callback.searchParams.get('error'), callback.search).to.equal(null);
  expect(callback.searchParams.get('state')).to.equal(auth.state);
  expect(callback.searchParams.get('iss')).to.equal(server.issuer);
  return callback.searchParams.get('code')!;
}

/** Redeems a code; returns the token response body (asserting 200). */
export async function redeemDemo(server: DemoServer, client: DemoClient, code: string, verifier: string) {
  const fields = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: client.redirectUri,
    code_verifier: verifier,
    ...('secret' in client ? {} : { client_id: client.id }),
  };
  const res = await postForm(
    server,
    '/oauth/token',
    fields,
    'secret' in client ? basic(client.id, client.secret) : undefined,
  );
  expect(res.status, res.text).to.equal(200);
  return res.body;
}

/** The full login for a client from the first stage: password, then TOTP where the app asks for it. */
export async function fullLogin(
  browser: Browser,
  server: DemoServer,
  client: DemoClient,
  extra: Record<string, string> = {},
) {
  const auth = await startAuthorization(browser, server, client, extra);
  expect(auth.location.pathname, 'a login from the first stage').to.equal('/login');
  const requestId = auth.location.searchParams.get('request_id')!;
  let next = await stage(browser, server, requestId, 'PASSWORD', { identify: true });
  if (next.pathname === '/login') next = await stage(browser, server, requestId, 'TOTP');
  return { auth, code: await codeFrom(browser, server, next, auth, client) };
}

export interface OutboxMessage {
  kind: string;
  to: string;
  text: string;
  data: Record<string, unknown> | null;
}

/**
 * The latest message the demo outbox holds for `to` whose text `matches`, waiting up to a second
 * for it (sends are queued and go out after the answer).
 */
export async function outboxMessage(
  server: Pick<DemoServer, 'url'>,
  to: string,
  matches: (text: string) => boolean = () => true,
): Promise<OutboxMessage> {
  for (let i = 0; i < 50; i++) {
    const res = await fetch(server.url(`/dev/outbox/latest?to=${encodeURIComponent(to)}`));
    if (res.status === 200) {
      const message = ((await res.json()) as { data: OutboxMessage }).data;
      if (matches(message.text)) return message;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no message to ${to} in the outbox`);
}

/** The text of the latest message to `to` now, or null: to wait for the next one (`matches: t => t !== before`). */
export async function outboxLatestText(server: Pick<DemoServer, 'url'>, to: string): Promise<string | null> {
  const res = await fetch(server.url(`/dev/outbox/latest?to=${encodeURIComponent(to)}`));
  return res.status === 200 ? ((await res.json()) as { data: OutboxMessage }).data.text : null;
}

/** The 6-digit code of the latest message to `to` (that `matches`). */
export async function outboxCode(
  server: Pick<DemoServer, 'url'>,
  to: string,
  matches?: (text: string) => boolean,
): Promise<string> {
  const { text } = await outboxMessage(server, to, matches);
  const code = /\b(\d{6})\b/.exec(text)?.[1];
  if (!code) throw new Error(`no code in the message to ${to}: ${text}`);
  return code;
}

export interface ListedMethod {
  method: string;
  enrolled: boolean;
  credentials: { id: string; type: string; label: string | null }[];
}

/** One of a user's methods as the setup API lists it (admin token). */
export async function methodOf(server: Pick<DemoServer, 'url'>, sub: string, method: string): Promise<ListedMethod> {
  const res = await fetch(server.url(`/verification-actions-srv/setup/users/${sub}/methods`), {
    headers: { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}` },
  });
  expect(res.status).to.equal(200);
  const listed = ((await res.json()) as { data: ListedMethod[] }).data.find((m) => m.method === method);
  if (!listed) throw new Error(`${method} is not a method of the server`);
  return listed;
}

/**
 * POST /authz-srv/authrequest/authz/generate for demo-app, as an app's login UI (or anyone) asks
 * for a request id by XHR: the request id and the PKCE verifier.
 */
export async function generateRequest(server: Pick<DemoServer, 'url'>, extra: Record<string, string> = {}) {
  const { verifier, challenge } = pkcePair();
  const res = await fetch(server.url('/authz-srv/authrequest/authz/generate'), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      client_id: DEMO_APP.id,
      redirect_uri: DEMO_APP.redirectUri,
      response_type: 'code',
      scope: 'openid',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    }),
  });
  expect(res.status).to.equal(200);
  return { requestId: ((await res.json()) as { data: { requestId: string } }).data.requestId, verifier };
}
