/**
 * Registration (issue 27, decision 46) against the whole server: prompt=create refused without
 * registration and answered with it, the form's every refusal with its status and code, the
 * code (wrong, expired, reused, too many), the taken address answered alike with a notice to its
 * owner, the limits, the FDS phase, CSRF; and a registration that lands in the app with tokens.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';
import type { Clock } from '@gatehouse-auth/core';
import {
  authorizePath,
  basic,
  Browser,
  decodeJwtParts,
  LEGACY,
  passwordStage,
  locationOf,
  pkcePair,
  postForm,
  startServer,
  WEB,
  WEB_CB,
  type OAuthServer,
} from '../../../test/oauth/support.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CAPTURE = path.join(here, '../../../test/verification/fixtures/capture-channel.js');
const BLOCKED = path.join(here, 'fixtures/blocked-domain.js');
const PASSWORD = 'a long enough passphrase for sign-up';

const REG = { id: 'reg', secret: 'reg-secret-0123456789abcdef0123456789abcdef' };
const REG_CB = 'https://reg.example.test/cb';
/** Its second stage is the email code: the code of the registration counts for it. */
const REG_EMAIL = { id: 'reg-email', secret: 'reg-email-secret-0123456789abcdef0123456789' };
/** Its second stage is TOTP, which a new user has not set up: the login goes on at the hosted page. */
const REG_TOTP = { id: 'reg-totp', secret: 'reg-totp-secret-0123456789abcdef01234567890' };
/** Proves a phone number by SMS. */
const REG_PHONE = { id: 'reg-phone', secret: 'reg-phone-secret-0123456789abcdef012345678' };
/** Usernames of their own, made at once without a code. */
const REG_NOW = { id: 'reg-now', secret: 'reg-now-secret-0123456789abcdef0123456789ab' };

interface Sent {
  kind: string;
  to: string;
  subject?: string;
  text: string;
}

/** A browser from an address of its own (X-Forwarded-For; the server trusts the proxy). */
class From extends Browser {
  constructor(
    server: OAuthServer,
    readonly ip: string,
  ) {
    super(server);
  }

  override request(pathOrUrl: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('X-Forwarded-For', this.ip);
    return super.request(pathOrUrl, { ...init, headers });
  }
}

describe('registration (prompt=create, /register)', function () {
  this.timeout(60_000);

  let server: OAuthServer;
  let sent: Sent[];
  let offset = 0;
  let serial = 0;
  const clock: Clock = { now: () => new Date(Date.now() + offset) };

  const nextIp = () => `198.51.100.${++serial}`;
  const nextEmail = (name = 'new') => `${name}${++serial}x${process.pid}@example.test`;

  before(async () => {
    sent = ((await import(pathToFileURL(CAPTURE).href)) as { sent: Sent[] }).sent;
    const app = (client: { id: string; secret: string }, extra: Record<string, unknown>) => ({
      client_id: client.id,
      name: `App ${client.id}`,
      client_secret: client.secret,
      redirect_uris: [REG_CB],
      scopes: ['openid', 'profile', 'email'],
      login_stages: [['PASSWORD']],
      ...extra,
    });
    const fields = [
      { name: 'email', required: true },
      { name: 'given_name', required: false },
    ];
    server = await startServer({
      clock,
      trustProxy: true,
      plugins: [
        { path: CAPTURE },
        { name: '@gatehouse-auth/method-email', options: { channel: 'capture' } },
        { path: BLOCKED },
        {
          name: '@gatehouse-auth/registration',
          options: {
            email_channel: 'capture',
            sms_channel: 'capture',
            max_attempts: 3,
            per_ip_per_hour: 5,
            per_address_per_hour: 3,
          },
        },
      ],
      apps: [
        app(REG, { registration: { enabled: true, fields, terms_version: '2026-01' } }),
        app(REG_EMAIL, { login_stages: [['PASSWORD'], ['EMAIL']], registration: { enabled: true, fields } }),
        app(REG_TOTP, { login_stages: [['PASSWORD'], ['TOTP']], registration: { enabled: true, fields } }),
        app(REG_PHONE, { registration: { enabled: true, fields: [{ name: 'phone', required: true }] } }),
        app(REG_NOW, {
          registration: {
            enabled: true,
            fields: [
              { name: 'username', required: true },
              { name: 'email', required: false },
            ],
            verify: 'none',
          },
        }),
      ],
    });
  });

  after(async () => {
    await server?.close();
  });

  /** /authorize with prompt=create: the registration page of a new flow. */
  async function openRegistration(browser: Browser, client = REG.id) {
    const pkce = pkcePair();
    const state = `st-${++serial}-0123456789`;
    const res = await browser.get(
      authorizePath({
        response_type: 'code',
        client_id: client,
        redirect_uri: REG_CB,
        scope: 'openid profile email',
        state,
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
        prompt: 'create',
      }),
    );
    const to = locationOf(res, server);
    expect(to.pathname).to.equal('/register');
    const requestId = to.searchParams.get('request_id')!;
    const page = await browser.get(to.pathname + to.search);
    const body = await page.text();
    expect(page.status, body).to.equal(200);
    return { requestId, csrf: csrfOf(body), pkce, state, body };
  }

  const csrfOf = (body: string) => /name="csrf" value="([^"]+)"/.exec(body)![1]!;
  const errorOf = (body: string) => /data-error="([A-Z_]+)"/.exec(body)?.[1] ?? null;

  async function expectRefusal(res: Response, status: number, code: string): Promise<string> {
    const body = await res.text();
    expect(res.status, body).to.equal(status);
    expect(errorOf(body), body).to.equal(code);
    return body;
  }

  /** The form's fields with defaults, `over` replacing some. */
  function form(opened: { requestId: string; csrf: string }, over: Record<string, string> = {}) {
    return {
      csrf: opened.csrf,
      request_id: opened.requestId,
      email: nextEmail(),
      given_name: 'Greta',
      password: PASSWORD,
      password_repeat: PASSWORD,
      terms: 'accepted',
      ...over,
    };
  }

  /** Submits the form; on success the code page's registration id and the code sent. */
  async function submit(browser: Browser, fields: Record<string, string>) {
    const before = sent.length;
    const res = await browser.postForm('/register', fields);
    const to = locationOf(res, server);
    expect(to.pathname).to.equal('/register/code');
    const page = await browser.get(to.pathname + to.search);
    const body = await page.text();
    expect(page.status, body).to.equal(200);
    // Enqueued: sent in the background, at once.
    for (let i = 0; i < 50 && sent.length === before; i++) await new Promise((r) => setTimeout(r, 20));
    const message = sent.slice(before).find((m) => m.to === fields.email);
    return {
      registration: to.searchParams.get('registration')!,
      codeCsrf: csrfOf(body),
      body,
      message,
      code: message ? (/\b(\d{6})\b/.exec(message.text)?.[1] ?? null) : null,
    };
  }

  function postCode(
    browser: Browser,
    requestId: string,
    got: { registration: string; codeCsrf: string },
    code: string,
  ) {
    return browser.postForm('/register/code', {
      csrf: got.codeCsrf,
      request_id: requestId,
      registration: got.registration,
      code,
    });
  }

  it('lists prompt create in discovery', async () => {
    const res = await fetch(server.url('/.well-known/openid-configuration'));
    const metadata = (await res.json()) as { prompt_values_supported: string[] };
    expect(metadata.prompt_values_supported).to.include('create').and.to.include('login');
  });

  it('refuses prompt=create for an app without registration, as without the plugin (invalid_request)', async () => {
    const browser = new From(server, nextIp());
    const res = await browser.get(
      authorizePath({
        response_type: 'code',
        client_id: WEB.id,
        redirect_uri: WEB_CB,
        scope: 'openid',
        state: 'st-web-0123456789',
        prompt: 'create',
      }),
    );
    const to = locationOf(res, server);
    expect(to.href.split('?')[0]).to.equal(WEB_CB);
    expect(to.searchParams.get('error')).to.equal('invalid_request');
    expect(to.searchParams.get('state')).to.equal('st-web-0123456789');
  });

  it('links the registration from the hosted login page only for an app with registration', async () => {
    const browser = new From(server, nextIp());
    const login = async (client: string, redirectUri: string) => {
      const res = await browser.get(
        authorizePath({
          response_type: 'code',
          client_id: client,
          redirect_uri: redirectUri,
          scope: 'openid',
          state: 'st-link-0123456789',
        }),
      );
      const to = locationOf(res, server);
      return {
        requestId: to.searchParams.get('request_id')!,
        body: await (await browser.get(to.pathname + to.search)).text(),
      };
    };
    const reg = await login(REG.id, REG_CB);
    expect(reg.body).to.contain(`href="/register?request_id=${reg.requestId}"`).and.to.contain('Create an account');
    const web = await login(WEB.id, WEB_CB);
    expect(web.body).not.to.contain('/register?');
    // The link leads to the form, for this very login.
    const page = await browser.get(`/register?request_id=${reg.requestId}`);
    expect(page.status).to.equal(200);
  });

  it('registers with an email code and lands in the app with tokens (PASSWORD done, address verified, terms kept)', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser);
    expect(opened.body).to.contain('Create your account for App reg').and.to.contain('version 2026-01');
    const fields = form(opened);
    const got = await submit(browser, fields);
    expect(got.message?.subject).to.equal('Your code for App reg');
    expect(got.code).to.match(/^\d{6}$/);
    expect(got.body).to.contain('n•••@example.test');
    expect(await server.gatehouse.container.cradle.users.findByIdentifier(fields.email)).to.equal(null);

    const res = await postCode(browser, opened.requestId, got, got.code!);
    const resume = locationOf(res, server);
    expect(resume.pathname).to.equal('/api/oauth2/authorize/resume');
    const back = locationOf(await browser.get(resume.pathname + resume.search), server);
    expect(back.href.split('?')[0]).to.equal(REG_CB);
    expect(back.searchParams.get('state')).to.equal(opened.state);
    const token = await postForm(
      server,
      '/oauth/token',
      {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: REG_CB,
        code_verifier: opened.pkce.verifier,
      },
      basic(REG.id, REG.secret),
    );
    expect(token.status, token.text).to.equal(200);
    const claims = decodeJwtParts(String(token.body.id_token)).payload;
    const user = (await server.gatehouse.container.cradle.users.findByIdentifier(fields.email))!;
    expect(claims.sub).to.equal(user.id);
    // The password set and the email code proven (decision 46).
    expect(claims.amr).to.deep.equal(['pwd', 'otp']);
    const services = server.gatehouse.container.cradle.services;
    expect(await services.accounts.verified(user, 'email')).to.equal(true);
    const accounts = services.resolve<{ profile(id: string): Promise<Record<string, unknown>> }>('userAccounts');
    expect((await accounts.profile(user.id)).given_name).to.equal('Greta');
    const types = (await services.history.recent({ userId: user.id, limit: 20 })).map((e) => e.type);
    expect(types).to.include.members(['registration.completed', 'registration.terms_accepted', 'login.registered']);
    const terms = (
      await services.history.recent({ userId: user.id, types: ['registration.terms_accepted'], limit: 1 })
    )[0];
    expect(terms?.data).to.deep.equal({ version: '2026-01' });
    // The password set at registration signs in (the password grant of the legacy app).
    const signIn = await postForm(
      server,
      '/oauth/token',
      { grant_type: 'password', username: fields.email, password: PASSWORD, scope: 'openid' },
      basic(LEGACY.id, LEGACY.secret),
    );
    expect(signIn.status, signIn.text).to.equal(200);
  });

  it('counts the proven email as the EMAIL stage: an app of [[PASSWORD], [EMAIL]] is done at once', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser, REG_EMAIL.id);
    const got = await submit(browser, form(opened, { terms: '' }));
    const res = await postCode(browser, opened.requestId, got, got.code!);
    expect(locationOf(res, server).pathname).to.equal('/api/oauth2/authorize/resume');
    const flow = await server.gatehouse.container.cradle.flows.get(opened.requestId);
    expect(flow?.status).to.equal('completed');
    expect(flow?.methods).to.deep.equal(['PASSWORD', 'EMAIL']);
  });

  it('goes on to the stages left: an app of [[PASSWORD], [TOTP]] continues at the hosted page, stage 2', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser, REG_TOTP.id);
    const got = await submit(browser, form(opened, { terms: '' }));
    const res = await postCode(browser, opened.requestId, got, got.code!);
    const next = locationOf(res, server);
    expect(next.pathname).to.equal('/login');
    expect(next.searchParams.get('request_id')).to.equal(opened.requestId);
    const flow = await server.gatehouse.container.cradle.flows.get(opened.requestId);
    expect(flow?.stage).to.equal(1);
    expect(flow?.status).to.equal('active');
    expect(flow?.userId).to.be.a('string');
  });

  it('proves a phone number by SMS: the phone is the username and verified', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser, REG_PHONE.id);
    const phone = `+1555${String(process.pid % 1000).padStart(3, '0')}${String(++serial).padStart(4, '0')}`;
    const before = sent.length;
    const res = await browser.postForm('/register', {
      csrf: opened.csrf,
      request_id: opened.requestId,
      phone,
      password: PASSWORD,
      password_repeat: PASSWORD,
    });
    const to = locationOf(res, server);
    expect(to.pathname).to.equal('/register/code');
    const page = await (await browser.get(to.pathname + to.search)).text();
    expect(page).to.contain(`•••${phone.slice(-4)}`);
    for (let i = 0; i < 50 && sent.length === before; i++) await new Promise((r) => setTimeout(r, 20));
    const sms = sent.slice(before).find((m) => m.to === phone)!;
    expect(sms.kind).to.equal('sms');
    const code = /\b(\d{6})\b/.exec(sms.text)![1]!;
    const got = { registration: to.searchParams.get('registration')!, codeCsrf: csrfOf(page) };
    expect(locationOf(await postCode(browser, opened.requestId, got, code), server).pathname).to.equal(
      '/api/oauth2/authorize/resume',
    );
    const user = (await server.gatehouse.container.cradle.users.findByIdentifier(phone))!;
    expect(user.username).to.equal(phone);
    expect(await server.gatehouse.container.cradle.services.accounts.verified(user, 'sms')).to.equal(true);
  });

  it('refuses a missing required field (400 FIELD_MISSING)', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser);
    await expectRefusal(await browser.postForm('/register', form(opened, { email: '' })), 400, 'FIELD_MISSING');
  });

  it('refuses a malformed address (400 INVALID_FIELD)', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser);
    await expectRefusal(
      await browser.postForm('/register', form(opened, { email: 'not-an-address' })),
      400,
      'INVALID_FIELD',
    );
  });

  it('enforces the password policy of the PASSWORD method (400 PASSWORD_TOO_SHORT, PASSWORD_TOO_COMMON)', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser);
    const short = form(opened, { password: 'short', password_repeat: 'short' });
    const body = await expectRefusal(await browser.postForm('/register', short), 400, 'PASSWORD_TOO_SHORT');
    // The form keeps what was typed, never the password.
    expect(body).to.contain(`value="${short.email}"`).and.not.to.contain('value="short"');
    const common = form(opened, { password: 'password123', password_repeat: 'password123' });
    await expectRefusal(await browser.postForm('/register', common), 400, 'PASSWORD_TOO_COMMON');
  });

  it('refuses two different passwords (400 PASSWORD_MISMATCH) and unaccepted terms (400 TERMS_NOT_ACCEPTED)', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser);
    await expectRefusal(
      await browser.postForm('/register', form(opened, { password_repeat: `${PASSWORD}!` })),
      400,
      'PASSWORD_MISMATCH',
    );
    await expectRefusal(await browser.postForm('/register', form(opened, { terms: '' })), 400, 'TERMS_NOT_ACCEPTED');
  });

  it('answers a taken address as a new one, mails its owner instead of a code, and makes no account', async () => {
    const owner = await server.user('owner');
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser);
    const got = await submit(browser, form(opened, { email: owner.email }));
    // The same page as for a new address (only the masked address differs).
    const stranger = new From(server, nextIp());
    const fresh = await submit(stranger, form(await openRegistration(stranger)));
    const strip = (html: string) =>
      html
        .replace(/value="[^"]*"/g, '')
        .replace(/[a-z]•••@example\.test/g, '')
        .replace(/nonce-[^']*/g, '');
    expect(strip(got.body)).to.equal(strip(fresh.body));
    expect(got.code).to.equal(null);
    expect(got.message?.subject).to.equal('Someone tried to register with your address');
    expect(got.message?.text).to.contain('already has one');
    await expectRefusal(await postCode(browser, opened.requestId, got, '123456'), 400, 'CODE_INVALID');
    const users = await server.gatehouse.container.cradle.users.search(owner.email);
    expect(users.map((u) => u.id)).to.deep.equal([owner.id]);
  });

  it('refuses a wrong code (400 CODE_INVALID), then too many (429 TOO_MANY_ATTEMPTS) and the right one after (410)', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser);
    const got = await submit(browser, form(opened));
    const wrong = got.code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 3; i++)
      await expectRefusal(await postCode(browser, opened.requestId, got, wrong), 400, 'CODE_INVALID');
    const res = await postCode(browser, opened.requestId, got, wrong);
    await expectRefusal(res, 429, 'TOO_MANY_ATTEMPTS');
    expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
    await expectRefusal(await postCode(browser, opened.requestId, got, got.code!), 410, 'CODE_EXPIRED');
  });

  it('takes a code once: a second use is refused (409 CODE_USED), and of two at once one wins', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser);
    const got = await submit(browser, form(opened));
    const [a, b] = await Promise.all([
      postCode(browser, opened.requestId, got, got.code!),
      postCode(browser, opened.requestId, got, got.code!),
    ]);
    expect([a.status, b.status].sort()).to.deep.equal([303, 409]);
    // Again, from a new login of the same browser: the registration is spent.
    const again = await openRegistration(browser);
    const res = await browser.postForm('/register/code', {
      csrf: again.csrf,
      request_id: again.requestId,
      registration: got.registration,
      code: got.code!,
    });
    await expectRefusal(res, 409, 'CODE_USED');
  });

  it('refuses a registration the FDS rules of the registration phase deny (403 REGISTRATION_REFUSED)', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser);
    const res = await browser.postForm('/register', form(opened, { email: `x${++serial}@blocked.test` }));
    await expectRefusal(res, 403, 'REGISTRATION_REFUSED');
    expect(res.headers.get('retry-after')).to.equal('60');
    const verdicts = await server.gatehouse.container.cradle.services.history.recent({
      types: ['fds.verdict'],
      limit: 20,
    });
    expect(verdicts.some((v) => v.data.phase === 'registration' && v.outcome === 'deny')).to.equal(true);
  });

  it('limits registrations per address across nodes (429 TOO_MANY_REQUESTS with Retry-After)', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser);
    for (let i = 0; i < 5; i++) {
      await expectRefusal(await browser.postForm('/register', form(opened, { email: '' })), 400, 'FIELD_MISSING');
    }
    const res = await browser.postForm('/register', form(opened));
    await expectRefusal(res, 429, 'TOO_MANY_REQUESTS');
    expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
  });

  it('limits the codes one address gets, taken or not (429 TOO_MANY_REQUESTS)', async () => {
    const email = nextEmail('limited');
    for (let i = 0; i < 3; i++) {
      const browser = new From(server, nextIp());
      await submit(browser, form(await openRegistration(browser), { email }));
    }
    const browser = new From(server, nextIp());
    const res = await browser.postForm('/register', form(await openRegistration(browser), { email }));
    await expectRefusal(res, 429, 'TOO_MANY_REQUESTS');
  });

  it('refuses a form without its CSRF token or from another site (403 CSRF_INVALID)', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser);
    await expectRefusal(await browser.postForm('/register', form(opened, { csrf: 'forged' })), 403, 'CSRF_INVALID');
    const foreign = await browser.request('/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://evil.example' },
      body: new URLSearchParams(form(opened)).toString(),
    });
    await expectRefusal(foreign, 403, 'CSRF_INVALID');
  });

  it("refuses another browser's login (403 FLOW_NOT_BOUND) and an unknown one (404 REQUEST_NOT_FOUND)", async () => {
    const opened = await openRegistration(new From(server, nextIp()));
    const other = new From(server, nextIp());
    await expectRefusal(await other.get(`/register?request_id=${opened.requestId}`), 403, 'FLOW_NOT_BOUND');
    await expectRefusal(await other.get('/register?request_id=nope'), 404, 'REQUEST_NOT_FOUND');
  });

  it('with verify none: a username account made at once, unverified; a taken address refused (409) and its owner told', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser, REG_NOW.id);
    const username = `self${++serial}x${process.pid}`;
    const email = nextEmail('now');
    const res = await browser.postForm('/register', {
      csrf: opened.csrf,
      request_id: opened.requestId,
      username,
      email,
      password: PASSWORD,
      password_repeat: PASSWORD,
    });
    expect(locationOf(res, server).pathname).to.equal('/api/oauth2/authorize/resume');
    const user = (await server.gatehouse.container.cradle.users.findByIdentifier(username))!;
    expect(user.email).to.equal(email);
    expect(await server.gatehouse.container.cradle.services.accounts.verified(user, 'email')).to.equal(false);

    const again = new From(server, nextIp());
    const second = await openRegistration(again, REG_NOW.id);
    const fields = { csrf: second.csrf, request_id: second.requestId, password: PASSWORD, password_repeat: PASSWORD };
    await expectRefusal(await again.postForm('/register', { ...fields, username, email: '' }), 409, 'USERNAME_TAKEN');
    await expectRefusal(
      await again.postForm('/register', { ...fields, username: 'someone@else.test' }),
      400,
      'INVALID_FIELD',
    );
    const before = sent.length;
    const taken = await again.postForm('/register', { ...fields, username: `other${++serial}`, email });
    await expectRefusal(taken, 409, 'REGISTRATION_FAILED');
    for (let i = 0; i < 50 && sent.length === before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sent.slice(before).map((m) => [m.to, m.subject])).to.deep.equal([
      [email, 'Someone tried to register with your address'],
    ]);
  });

  it('refuses a login whose first stage named its user already (409 WRONG_FLOW_STAGE)', async () => {
    const known = await server.user('known');
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser, REG_TOTP.id);
    const next = await passwordStage(browser, server, opened.requestId, known);
    expect(next.pathname).to.equal('/login');
    await expectRefusal(await browser.get(`/register?request_id=${opened.requestId}`), 409, 'WRONG_FLOW_STAGE');
    await expectRefusal(await browser.postForm('/register', form(opened)), 409, 'WRONG_FLOW_STAGE');
  });

  it('the core gives a flow its registered user once, and never to a flow a stage named (conditional update)', async () => {
    const { flows } = server.gatehouse.container.cradle;
    const opened = await openRegistration(new From(server, nextIp()), REG_TOTP.id);
    const flow = (await flows.get(opened.requestId))!;
    const change = (userId: string) => ({
      userId,
      stages: flow.stages,
      stage: 1,
      completions: [{ method: 'PASSWORD', amr: ['pwd'], at: 1 }],
    });
    const first = await flows.register(flow, change('00000000-0000-0000-0000-00000000000a'));
    expect(first?.userId).to.equal('00000000-0000-0000-0000-00000000000a');
    expect(first?.stage).to.equal(1);
    expect(await flows.register(flow, change('00000000-0000-0000-0000-00000000000b'))).to.equal(null);
    expect((await flows.get(opened.requestId))?.userId).to.equal('00000000-0000-0000-0000-00000000000a');
  });

  it('refuses an expired code (410 CODE_EXPIRED)', async () => {
    const browser = new From(server, nextIp());
    const opened = await openRegistration(browser);
    const got = await submit(browser, form(opened));
    offset += 11 * 60 * 1000;
    await expectRefusal(await postCode(browser, opened.requestId, got, got.code!), 410, 'CODE_EXPIRED');
  });

  it('answers a German page and German mails for ui_locales=de', async () => {
    const browser = new From(server, nextIp());
    const res = await browser.get(
      authorizePath({
        response_type: 'code',
        client_id: REG.id,
        redirect_uri: REG_CB,
        scope: 'openid',
        state: 'st-de-0123456789',
        prompt: 'create',
        ui_locales: 'de',
      }),
    );
    const to = locationOf(res, server);
    const body = await (await browser.get(to.pathname + to.search)).text();
    expect(body)
      .to.contain('Konto für App reg anlegen')
      .and.to.contain('E-Mail-Adresse')
      .and.to.contain('<html lang="de"');
    const opened = { requestId: to.searchParams.get('request_id')!, csrf: csrfOf(body) };
    const got = await submit(browser, form(opened));
    expect(got.body).to.contain('Adresse bestätigen');
    expect(got.message?.subject).to.equal('Ihr Code für App reg');
    await expectRefusal(await browser.postForm('/register', form(opened, { email: '' })), 400, 'FIELD_MISSING');
  });
});
