/**
 * Issue 8: logout. OpenID Connect RP-Initiated Logout 1.0 at the end-session endpoint
 * (id_token_hint, registered post_logout_redirect_uri, state, a confirmation page without a
 * hint), "Not you? Sign out" on the hosted page, the admin API's session listing and
 * revocation, and Back-Channel Logout 1.0 to apps with a backchannel_logout_uri: logout tokens
 * signed like ID tokens, delivered by the background jobs with retries to a real HTTP sink, and
 * checked here with jose against the published JWKS.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, SignJWT, generateKeyPair, type JWTPayload } from 'jose';
import { buildApp, createLogger, listen, parseConfig, type Gatehouse, type RunningServer } from '@gatehouse-auth/core';
import {
  Browser,
  basic,
  completeStage,
  decodeJwtParts,
  freePort,
  introspect,
  locationOf,
  pkcePair,
  postForm,
  totpCode,
  type OAuthServer,
  type Site,
} from './support.js';

const ADMIN = 'logout-suite-admin-token-0123456789abcdef0123';
const PASSWORD = 'correct horse battery staple 42';
const RP = { id: 'rp', secret: 'rp-secret-0123456789abcdef0123456789abcdef', cb: 'https://rp.example.test/cb' };
const OTHER = { id: 'other', secret: 'other-secret-0123456789abcdef0123456789ab', cb: 'https://other.example.test/cb' };
const MFA = { id: 'mfa', secret: 'mfa-secret-0123456789abcdef0123456789abcdef', cb: 'https://mfa.example.test/cb' };
const BYE = 'https://rp.example.test/bye';

/** An app's back-channel endpoint: records every POST and answers with the next scripted status. */
interface Sink {
  url(path: string): string;
  received: { path: string; token: string }[];
  /** Statuses to answer with, in turn; 200 once they run out. */
  script: number[];
  arrived(n: number): Promise<void>;
  close(): Promise<void>;
}

async function startSink(): Promise<Sink> {
  const received: Sink['received'] = [];
  const waiters: (() => void)[] = [];
  const script: number[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      expect(req.headers['content-type']).to.equal('application/x-www-form-urlencoded');
      received.push({ path: req.url ?? '', token: new URLSearchParams(body).get('logout_token') ?? '' });
      res.writeHead(script.shift() ?? 200).end();
      waiters.splice(0).forEach((w) => w());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received,
    script,
    async arrived(n) {
      while (received.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe('logout: RP-initiated, hosted, admin and back-channel (issue 8)', function () {
  this.timeout(30_000);
  let sink: Sink;
  let gatehouse: Gatehouse;
  let running: RunningServer;
  let site: Site;
  let serial = 0;

  before(async () => {
    sink = await startSink();
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const app = (c: { id: string; secret: string; cb: string }, extra: Record<string, unknown> = {}) => ({
      client_id: c.id,
      client_secret: c.secret,
      redirect_uris: [c.cb],
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'offline_access'],
      login_stages: [['PASSWORD']],
      ...extra,
    });
    const config = parseConfig(
      {
        issuer,
        server: { host: '127.0.0.1', port },
        database: { url: 'sqlite::memory:' },
        log: { level: 'silent' },
        secrets: { encryption_key: Buffer.alloc(32, 3).toString('base64') },
        admin: { token: ADMIN },
        plugins: [
          { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
          { name: '@gatehouse-auth/method-totp' },
          { name: '@gatehouse-auth/grant-authorization-code' },
          { name: '@gatehouse-auth/grant-refresh-token' },
          { name: '@gatehouse-auth/management' },
          { name: '@gatehouse-auth/admin-api' },
          { name: '@gatehouse-auth/page-login' },
          { name: '@gatehouse-auth/verification-api' },
          { name: '@gatehouse-auth/oauth-end-session' },
          { name: '@gatehouse-auth/oauth-backchannel-logout' },
          { name: '@gatehouse-auth/setup-api' },
        ],
        apps: [
          app(RP, { post_logout_redirect_uris: [BYE], backchannel_logout_uri: sink.url('/rp/logout') }),
          app(OTHER, { backchannel_logout_uri: sink.url('/other/logout'), backchannel_logout_session_required: true }),
          app(MFA, { login_stages: [['PASSWORD'], ['TOTP']], backchannel_logout_uri: sink.url('/mfa/logout') }),
        ],
      },
      {},
    );
    gatehouse = await buildApp(config, { logger: createLogger('silent') });
    running = await listen(gatehouse);
    site = { issuer, url: (p: string) => `${issuer}${p}` };
  });
  after(async () => {
    await running?.shutdown();
    await sink?.close();
  });

  async function user() {
    serial += 1;
    const username = `leaver${serial}`;
    const { id } = await gatehouse.container.cradle.users.create({ username });
    const res = await fetch(site.url('/verification-actions-srv/setup/PASSWORD/initiation'), {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sub: id, password: PASSWORD }),
    });
    expect(res.status).to.equal(200);
    return { id, username, email: `${username}@example.test` };
  }

  /** Signs in to an app in `browser` (a password login unless the session suffices); returns its tokens. */
  async function signIn(browser: Browser, app: typeof RP, who: { username: string; id: string }, secret?: string) {
    const { verifier, challenge } = pkcePair();
    const q = new URLSearchParams({
      client_id: app.id,
      response_type: 'code',
      scope: 'openid offline_access',
      redirect_uri: app.cb,
      state: 'st',
      nonce: 'n',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    let next = locationOf(await browser.get(`/api/oauth2/authorize/?${q.toString()}`), site);
    if (next.pathname === '/login') {
      const requestId = next.searchParams.get('request_id')!;
      const known = (await gatehouse.container.cradle.flows.get(requestId))!.userId;
      if (!known)
        next = await completeStage(
          browser,
          site,
          requestId,
          'PASSWORD',
          { identifier: who.username },
          { password: PASSWORD },
        );
      if (next.pathname === '/login' || known) {
        next = await completeStage(
          browser,
          site,
          requestId,
          'TOTP',
          { sub: who.id },
          { pass_code: await totpCode(secret!, 1) },
        );
      }
    }
    const callback = locationOf(await browser.get(next.pathname + next.search), site);
    const code = callback.searchParams.get('code')!;
    const res = await postForm(
      site,
      '/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: app.cb, code_verifier: verifier },
      basic(app.id, app.secret),
    );
    expect(res.status, res.text).to.equal(200);
    return res.body as { id_token: string; access_token: string; refresh_token: string };
  }

  async function verifyLogoutToken(token: string, audience: string): Promise<JWTPayload> {
    const jwks = (await (await fetch(site.url('/.well-known/jwks.json'))).json()) as Parameters<
      typeof createLocalJWKSet
    >[0];
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), {
      issuer: site.issuer,
      audience,
      typ: 'logout+jwt',
    });
    expect(protectedHeader.alg).to.equal('RS256');
    expect(payload.events).to.deep.equal({ 'http://schemas.openid.net/event/backchannel-logout': {} });
    expect(payload).to.not.have.property('nonce');
    expect(payload.jti).to.be.a('string');
    expect((payload.exp as number) - (payload.iat as number)).to.be.within(1, 300);
    return payload;
  }

  const sessionCookieOf = (browser: Browser) => browser.cookies.get('gh_session');
  const silent = async (browser: Browser, app: typeof RP) => {
    const q = new URLSearchParams({
      client_id: app.id,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: app.cb,
      prompt: 'none',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    });
    const first = locationOf(await browser.get(`/api/oauth2/authorize/?${q.toString()}`), site);
    // Single sign-on answers through the resume hop.
    if (first.pathname !== '/api/oauth2/authorize/resume') return first;
    return locationOf(await browser.get(first.pathname + first.search), site);
  };

  /** Enrols TOTP for a user with this suite's admin token; returns the seed. */
  async function enrolTotp(who: { id: string }): Promise<string> {
    const call = async (step: string, body: Record<string, string>) => {
      const res = await fetch(site.url(`/verification-actions-srv/setup/TOTP/${step}`), {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ sub: who.id, ...body }),
      });
      expect(res.status).to.equal(200);
      return ((await res.json()) as { data: Record<string, string> }).data;
    };
    const { secret } = await call('initiation', {});
    await call('verification', { pass_code: await totpCode(secret!, -1) });
    return secret!;
  }

  it('discovery names the end-session endpoint and back-channel support; ID tokens carry sid', async () => {
    const meta = (await (await fetch(site.url('/.well-known/openid-configuration'))).json()) as Record<string, unknown>;
    expect(meta).to.include({
      end_session_endpoint: `${site.issuer}/session/end_session`,
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
    });
    const browser = new Browser(site as OAuthServer);
    const tokens = await signIn(browser, RP, await user());
    expect(decodeJwtParts(tokens.id_token).payload.sid).to.be.a('string');
  });

  it('id_token_hint + registered post_logout_redirect_uri: signed out at once, tokens revoked, every app of the session told', async () => {
    const browser = new Browser(site as OAuthServer);
    const alice = await user();
    const rpTokens = await signIn(browser, RP, alice);
    const otherTokens = await signIn(browser, OTHER, alice); // single sign-on, same session
    const sid = decodeJwtParts(rpTokens.id_token).payload.sid;
    expect(decodeJwtParts(otherTokens.id_token).payload.sid).to.equal(sid);
    const before = sink.received.length;

    const q = new URLSearchParams({ id_token_hint: rpTokens.id_token, post_logout_redirect_uri: BYE, state: 'bye-1' });
    const res = await browser.get(`/session/end_session?${q.toString()}`);
    const back = locationOf(res, site);
    expect(back.href).to.equal(`${BYE}?state=bye-1`);
    expect(sessionCookieOf(browser)).to.equal(undefined);

    expect((await silent(browser, RP)).searchParams.get('error')).to.equal('login_required');
    const refreshed = await postForm(
      site,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: rpTokens.refresh_token },
      basic(RP.id, RP.secret),
    );
    expect([refreshed.status, refreshed.body.error]).to.deep.equal([400, 'invalid_grant']);
    expect(await introspect(site as OAuthServer, otherTokens.access_token, OTHER)).to.deep.equal({ active: false });

    await sink.arrived(before + 2);
    const notices = sink.received.slice(before);
    expect(notices.map((n) => n.path).sort()).to.deep.equal(['/other/logout', '/rp/logout']);
    for (const notice of notices) {
      const audience = notice.path.startsWith('/rp') ? RP.id : OTHER.id;
      const payload = await verifyLogoutToken(notice.token, audience);
      expect(payload).to.include({ sub: alice.id, sid });
    }
    await gatehouse.idle();
    const { events } = gatehouse.container.cradle;
    expect(await events.count({ types: ['backchannel_logout.done'], userId: alice.id })).to.equal(2);
  });

  it('a confirmed sign-out without a hint (reason user) tells every app of the session too', async () => {
    const browser = new Browser(site as OAuthServer);
    const alice = await user();
    const rpTokens = await signIn(browser, RP, alice);
    await signIn(browser, OTHER, alice);
    const sid = decodeJwtParts(rpTokens.id_token).payload.sid;
    const before = sink.received.length;
    const page = await (await browser.get(`/session/end_session?client_id=${RP.id}`)).text();
    const done = await browser.postForm('/session/end_session', {
      confirm: 'yes',
      csrf: /name="csrf" value="([^"]+)"/.exec(page)![1]!,
      client_id: RP.id,
    });
    expect(done.status).to.equal(200);
    await sink.arrived(before + 2);
    const notices = sink.received.slice(before);
    expect(notices.map((n) => n.path).sort()).to.deep.equal(['/other/logout', '/rp/logout']);
    for (const notice of notices) {
      const payload = await verifyLogoutToken(notice.token, notice.path.startsWith('/rp') ? RP.id : OTHER.id);
      expect(payload).to.include({ sub: alice.id, sid });
    }
    const ended = await gatehouse.container.cradle.events.recent({ types: ['session.ended'], userId: alice.id });
    expect(ended.map((e) => e.reason)).to.deep.equal(['user']);
  });

  it('a code issued before the logout and redeemed after it → 400 invalid_grant, no tokens', async () => {
    const browser = new Browser(site as OAuthServer);
    const rpTokens = await signIn(browser, RP, await user());
    const { verifier, challenge } = pkcePair();
    const q = new URLSearchParams({
      client_id: OTHER.id,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: OTHER.cb,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    let next = locationOf(await browser.get(`/api/oauth2/authorize/?${q.toString()}`), site);
    if (next.pathname === '/api/oauth2/authorize/resume')
      next = locationOf(await browser.get(next.pathname + next.search), site);
    const code = next.searchParams.get('code')!;
    expect(code).to.be.a('string');

    const hint = new URLSearchParams({ id_token_hint: rpTokens.id_token, post_logout_redirect_uri: BYE });
    await browser.get(`/session/end_session?${hint.toString()}`);
    const res = await postForm(
      site,
      '/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: OTHER.cb, code_verifier: verifier },
      basic(OTHER.id, OTHER.secret),
    );
    expect([res.status, res.body.error, res.body.error_description]).to.deep.equal([
      400,
      'invalid_grant',
      'authorization code revoked',
    ]);
  });

  it('a post_logout_redirect_uri that is not registered: an error page, no redirect, still signed in', async () => {
    const browser = new Browser(site as OAuthServer);
    const tokens = await signIn(browser, RP, await user());
    for (const uri of ['https://evil.example/bye', `${BYE}/`, `${BYE}?x=1`]) {
      const q = new URLSearchParams({ id_token_hint: tokens.id_token, post_logout_redirect_uri: uri });
      const res = await browser.get(`/session/end_session?${q.toString()}`);
      expect(res.status).to.equal(400);
      expect(res.headers.get('location')).to.equal(null);
    }
    // Without an app there is nothing to check a redirect against either.
    const bare = await browser.get(`/session/end_session?post_logout_redirect_uri=${encodeURIComponent(BYE)}`);
    expect(bare.status).to.equal(400);
    expect((await silent(browser, RP)).searchParams.get('code')).to.be.a('string');
  });

  it('a forged hint is refused; an expired one of ours is accepted (RP-Initiated Logout §2)', async () => {
    const browser = new Browser(site as OAuthServer);
    const alice = await user();
    const tokens = await signIn(browser, RP, alice);
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ sub: alice.id, aud: RP.id, iss: site.issuer })
      .setProtectedHeader({ alg: 'ES256', kid: decodeProtectedHeader(tokens.id_token).kid! })
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
    const refused = await browser.get(`/session/end_session?id_token_hint=${forged}`);
    expect(refused.status).to.equal(400);
    expect(sessionCookieOf(browser)).to.be.a('string');

    const { keys } = gatehouse.container.cradle;
    const { signJwt } = await import('../../core/dist/oauth/jws.js');
    const past = Math.floor(Date.now() / 1000) - 7200;
    const expired = signJwt(
      await keys.signer(),
      { typ: 'JWT' },
      { iss: site.issuer, sub: alice.id, aud: RP.id, iat: past, exp: past + 60 },
    );
    const q = new URLSearchParams({ id_token_hint: expired, post_logout_redirect_uri: BYE });
    expect(locationOf(await browser.get(`/session/end_session?${q.toString()}`), site).href).to.equal(BYE);
  });

  it('without a hint the user confirms; the form is bound to the session (CSRF)', async () => {
    const browser = new Browser(site as OAuthServer);
    await signIn(browser, RP, await user());
    const confirm = await browser.get(
      `/session/end_session?client_id=${RP.id}&post_logout_redirect_uri=${encodeURIComponent(BYE)}&state=s2`,
    );
    expect(confirm.status).to.equal(200);
    expect(confirm.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    const html = await confirm.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    expect(html).to.include('Sign out?');

    const forged = await browser.postForm('/session/end_session', {
      confirm: 'yes',
      csrf: 'x'.repeat(43),
      client_id: RP.id,
    });
    expect(forged.status).to.equal(403);
    expect((await silent(browser, RP)).searchParams.get('code')).to.be.a('string');
    // That sign-in renewed the session cookie, and with it the form's token: the old one fails too.
    const stale = await browser.postForm('/session/end_session', { confirm: 'yes', csrf, client_id: RP.id });
    expect(stale.status).to.equal(403);
    const renewed = await (await browser.get(`/session/end_session?client_id=${RP.id}`)).text();

    const done = await browser.postForm('/session/end_session', {
      confirm: 'yes',
      csrf: /name="csrf" value="([^"]+)"/.exec(renewed)![1]!,
      client_id: RP.id,
      post_logout_redirect_uri: BYE,
      state: 's2',
    });
    expect(locationOf(done, site).href).to.equal(`${BYE}?state=s2`);
    expect((await silent(browser, RP)).searchParams.get('error')).to.equal('login_required');
  });

  it("a hint for another user than this browser's asks for confirmation", async () => {
    const bob = new Browser(site as OAuthServer);
    const bobTokens = await signIn(bob, RP, await user());
    const carol = new Browser(site as OAuthServer);
    await signIn(carol, RP, await user());
    const res = await carol.get(`/session/end_session?id_token_hint=${bobTokens.id_token}`);
    expect(res.status).to.equal(200);
    expect(await res.text()).to.include('Sign out?');
    expect((await silent(carol, RP)).searchParams.get('code')).to.be.a('string');
    expect((await silent(bob, RP)).searchParams.get('code')).to.be.a('string');
  });

  it('a notice the app does not take at first (500) is retried by the background jobs', async () => {
    const browser = new Browser(site as OAuthServer);
    const tokens = await signIn(browser, RP, await user());
    const before = sink.received.length;
    sink.script.push(500);
    await browser.get(`/session/end_session?id_token_hint=${tokens.id_token}`);
    await sink.arrived(before + 1);
    await gatehouse.idle();
    const { sql, jobs } = gatehouse.container.cradle;
    await sql.exec(`UPDATE jobs SET next_at = 0 WHERE kind = 'backchannel_logout'`);
    jobs.kick();
    await sink.arrived(before + 2);
    expect(sink.received[before + 1]!.path).to.equal('/rp/logout');
    await gatehouse.idle();
    expect(await sql.one(`SELECT id FROM jobs WHERE kind = 'backchannel_logout'`)).to.equal(null);
  });

  it("admin API: lists a user's sessions with their apps, ends one or all, and the apps are told", async () => {
    const alice = await user();
    const laptop = new Browser(site as OAuthServer);
    const phone = new Browser(site as OAuthServer);
    await signIn(laptop, RP, alice);
    await signIn(laptop, OTHER, alice);
    await signIn(phone, RP, alice);
    const admin = { Authorization: `Bearer ${ADMIN}` };
    const list = async () =>
      (
        (await (await fetch(site.url(`/admin/users/${alice.id}/sessions`), { headers: admin })).json()) as {
          data: { sid: string; clients: string[]; amr: string[] }[];
        }
      ).data;
    const sessions = await list();
    expect(sessions).to.have.length(2);
    expect(sessions.map((s) => s.clients.join(',')).sort()).to.deep.equal(['other,rp', 'rp']);
    expect(sessions[0]!.amr).to.deep.equal(['pwd']);

    const before = sink.received.length;
    const laptopSid = sessions.find((s) => s.clients.length === 2)!.sid;
    const one = await fetch(site.url(`/admin/users/${alice.id}/sessions/${laptopSid}`), {
      method: 'DELETE',
      headers: admin,
    });
    expect(one.status).to.equal(200);
    await sink.arrived(before + 2);
    expect((await silent(laptop, RP)).searchParams.get('error')).to.equal('login_required');
    expect((await silent(phone, RP)).searchParams.get('code')).to.be.a('string');
    const again = await fetch(site.url(`/admin/users/${alice.id}/sessions/${laptopSid}`), {
      method: 'DELETE',
      headers: admin,
    });
    expect(again.status).to.equal(404);

    const all = await fetch(site.url(`/admin/users/${alice.id}/sessions`), { method: 'DELETE', headers: admin });
    expect(((await all.json()) as { data: { ended: number } }).data.ended).to.equal(1);
    expect(await list()).to.deep.equal([]);
    expect((await fetch(site.url(`/admin/users/${alice.id}/sessions`))).status).to.equal(401);
  });

  it("a new password ends the user's sessions, and their apps are told", async () => {
    const alice = await user();
    const browser = new Browser(site as OAuthServer);
    await signIn(browser, RP, alice);
    const before = sink.received.length;
    const res = await fetch(site.url('/verification-actions-srv/setup/PASSWORD/initiation'), {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sub: alice.id, password: `${PASSWORD} but new` }),
    });
    expect(res.status).to.equal(200);
    await sink.arrived(before + 1);
    expect((await verifyLogoutToken(sink.received[before]!.token, RP.id)).sub).to.equal(alice.id);
    expect((await silent(browser, RP)).searchParams.get('error')).to.equal('login_required');
  });

  it('a step-up keeps the session id but renews its cookie: one logout reaches the apps of before and after', async () => {
    const alice = await user();
    const secret = await enrolTotp(alice);
    const browser = new Browser(site as OAuthServer);
    const first = await signIn(browser, RP, alice);
    const cookieBefore = browser.cookies.get('gh_session')!;
    const stepped = await signIn(browser, MFA, alice, secret); // password carried, TOTP asked
    expect(decodeJwtParts(stepped.id_token).payload.amr).to.deep.equal(['pwd', 'otp']);
    expect(decodeJwtParts(stepped.id_token).payload.sid).to.equal(decodeJwtParts(first.id_token).payload.sid);
    // The cookie is new after the step (ASVS 7.2.4: no fixation), ≥ 128 bits, and the old one is dead.
    const cookieAfter = browser.cookies.get('gh_session')!;
    expect(cookieBefore).to.match(/^[A-Za-z0-9_-]{22,}$/);
    expect(cookieAfter)
      .to.match(/^[A-Za-z0-9_-]{22,}$/)
      .and.not.equal(cookieBefore);
    const sessions = gatehouse.container.cradle.sessions;
    expect(await sessions.get(cookieBefore)).to.equal(null);
    expect((await sessions.get(cookieAfter))?.userId).to.equal(alice.id);
    const before = sink.received.length;
    await browser.get(`/session/end_session?id_token_hint=${stepped.id_token}`);
    await sink.arrived(before + 2);
    expect(
      sink.received
        .slice(before)
        .map((n) => n.path)
        .sort(),
    ).to.deep.equal(['/mfa/logout', '/rp/logout']);
  });

  it('hosted page: "Not you? Sign out" ends the session and starts the same sign-in again from its first stage', async () => {
    const alice = await user();
    await enrolTotp(alice);
    const browser = new Browser(site as OAuthServer);
    await signIn(browser, RP, alice);
    const { challenge } = pkcePair();
    const q = new URLSearchParams({
      client_id: MFA.id,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: MFA.cb,
      state: 'keep-me',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const login = locationOf(await browser.get(`/api/oauth2/authorize/?${q.toString()}`), site);
    const page = await (await browser.get(login.pathname + login.search)).text();
    expect(page).to.include(`Signed in as <strong>${alice.username}</strong>`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    const out = await browser.postForm('/session/end_session', {
      csrf,
      request_id: login.searchParams.get('request_id')!,
      confirm: 'yes',
    });
    const restart = locationOf(out, site);
    expect(restart.pathname).to.equal('/api/oauth2/authorize/');
    expect(restart.searchParams.get('state')).to.equal('keep-me');
    expect(restart.searchParams.get('code_challenge')).to.equal(challenge);
    const fresh = locationOf(await browser.get(restart.pathname + restart.search), site);
    const again = await (await browser.get(fresh.pathname + fresh.search)).text();
    expect(again).to.include('id="gh-identifier"');
    expect(again).to.not.include('Signed in as');
  });
});
