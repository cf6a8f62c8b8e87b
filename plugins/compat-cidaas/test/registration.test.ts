/**
 * The cidaas SDK's registration calls (issue 27) on @gatehouse-auth/registration: the field
 * list, register (then the hosted code page), and user existence, which says nothing unless the
 * app allows it. Every refusal with its status and code, in the cidaas envelope.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { authorizePath, Browser, locationOf, startServer, type OAuthServer } from '../../../test/oauth/support.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CAPTURE = path.join(here, '../../../test/verification/fixtures/capture-channel.js');
const PASSWORD = 'a long enough passphrase for the sdk';
const APP = { id: 'sdk-app', secret: 'sdk-app-secret-0123456789abcdef0123456789ab' };
const OPEN = { id: 'sdk-open', secret: 'sdk-open-secret-0123456789abcdef0123456789a' };
const CB = 'https://sdk.example.test/cb';

/** The cidaas envelope, as far as the tests read it. */
interface Envelope {
  success: boolean;
  data: Record<string, unknown>;
  error: { code: string };
}

interface Sent {
  to: string;
  subject?: string;
  text: string;
}

describe('cidaas registration calls', function () {
  this.timeout(60_000);

  let server: OAuthServer;
  let sent: Sent[];
  let serial = 0;

  before(async () => {
    sent = ((await import(pathToFileURL(CAPTURE).href)) as { sent: Sent[] }).sent;
    const registration = (extra: Record<string, unknown> = {}) => ({
      enabled: true,
      fields: [
        { name: 'email', required: true },
        { name: 'phone', required: false },
        { name: 'given_name', required: true },
      ],
      ...extra,
    });
    const app = (client: typeof APP, extra: Record<string, unknown> = {}) => ({
      client_id: client.id,
      client_secret: client.secret,
      redirect_uris: [CB],
      scopes: ['openid', 'profile'],
      login_stages: [['PASSWORD']],
      registration: registration(extra),
    });
    server = await startServer({
      trustProxy: true,
      plugins: [
        { path: CAPTURE },
        { name: '@gatehouse-auth/compat-cidaas' },
        { name: '@gatehouse-auth/registration', options: { email_channel: 'capture' } },
      ],
      apps: [app(APP), app(OPEN, { user_existence: 'answer' })],
    });
  });

  after(async () => {
    await server?.close();
  });

  /** A login flow of this browser (prompt=create), and its request id. */
  async function flowOf(browser: Browser, client = APP.id): Promise<string> {
    const res = await browser.get(
      authorizePath({
        response_type: 'code',
        client_id: client,
        redirect_uri: CB,
        scope: 'openid',
        state: `st-${++serial}-0123456789`,
        prompt: 'create',
      }),
    );
    return locationOf(res, server).searchParams.get('request_id')!;
  }

  const fromIp = (browser: Browser) => {
    const ip = `192.0.2.${++serial}`;
    return (pathOrUrl: string, init: RequestInit) => {
      const headers = new Headers(init.headers);
      headers.set('X-Forwarded-For', ip);
      return browser.request(pathOrUrl, { ...init, headers });
    };
  };

  async function register(browser: Browser, requestId: string, body: Record<string, unknown>, origin?: string) {
    const call = fromIp(browser);
    const res = await call('/users-srv/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', requestId, ...(origin ? { Origin: origin } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Envelope };
  }

  const user = (over: Record<string, unknown> = {}) => ({
    email: `sdk${++serial}x${process.pid}@example.test`,
    given_name: 'Sam',
    password: PASSWORD,
    password_echo: PASSWORD,
    ...over,
  });

  function expectError(res: { status: number; body: Envelope }, status: number, code: string) {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.success).to.equal(false);
    expect(res.body.error.code).to.equal(code);
  }

  it('lists the app’s fields in the cidaas shape, in the language asked for', async () => {
    const browser = new Browser(server);
    const requestId = await flowOf(browser);
    const res = await fetch(server.url(`/registration-setup-srv/public/list?requestId=${requestId}&acceptlanguage=de`));
    const body = (await res.json()) as { success: boolean; data: Record<string, unknown>[] };
    expect(res.status).to.equal(200);
    expect(body.data.map((f) => [f.fieldKey, f.dataType, f.required])).to.deep.equal([
      ['email', 'EMAIL', true],
      ['mobile_number', 'MOBILE', false],
      ['given_name', 'TEXT', true],
      ['password', 'PASSWORD', true],
      ['password_echo', 'PASSWORD', true],
    ]);
    expect(body.data[0]!.localeText).to.deep.equal({ locale: 'de', language: 'de', name: 'E-Mail-Adresse' });
    const unknown = await fetch(server.url('/registration-setup-srv/public/list?requestId=nope'));
    expect(unknown.status).to.equal(404);
    expect(((await unknown.json()) as Envelope).error.code).to.equal('REQUEST_NOT_FOUND');
  });

  it('registers: a code to the address, then the hosted code page finishes it into the login', async () => {
    const browser = new Browser(server);
    const requestId = await flowOf(browser);
    const given = user();
    const before = sent.length;
    const res = await register(browser, requestId, given);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.userStatus).to.equal('VERIFICATION_PENDING');
    expect(res.body.data.verification_medium).to.equal('email');
    for (let i = 0; i < 50 && sent.length === before; i++) await new Promise((r) => setTimeout(r, 20));
    const code = /\b(\d{6})\b/.exec(sent.slice(before).find((m) => m.to === given.email)!.text)![1]!;
    const page = new URL(String(res.body.data.verification_url));
    const html = await (await browser.get(page.pathname + page.search)).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const done = await browser.postForm('/register/code', {
      csrf,
      request_id: requestId,
      registration: page.searchParams.get('registration')!,
      code,
    });
    expect(locationOf(done, server).pathname).to.equal('/api/oauth2/authorize/resume');
    expect(await server.gatehouse.container.cradle.users.findByIdentifier(given.email)).to.not.equal(null);
  });

  it('answers a taken address exactly as a new one', async () => {
    const owner = await server.user('sdkowner');
    const a = new Browser(server);
    const taken = await register(a, await flowOf(a), user({ email: owner.email }));
    const b = new Browser(server);
    const fresh = await register(b, await flowOf(b), user());
    expect(taken.status).to.equal(200);
    const shape = (r: typeof taken) => ({ ...r.body.data, medium_text: '', verification_url: '' });
    expect(shape(taken)).to.deep.equal(shape(fresh));
  });

  it('refuses what the form refuses, in the envelope (400 PASSWORD_MISMATCH, PASSWORD_TOO_SHORT, FIELD_MISSING)', async () => {
    const browser = new Browser(server);
    const requestId = await flowOf(browser);
    expectError(await register(browser, requestId, user({ password_echo: 'other' })), 400, 'PASSWORD_MISMATCH');
    expectError(
      await register(browser, requestId, user({ password: 'short', password_echo: 'short' })),
      400,
      'PASSWORD_TOO_SHORT',
    );
    expectError(await register(browser, requestId, user({ given_name: undefined })), 400, 'FIELD_MISSING');
  });

  it('refuses a register call from another site (403 ORIGIN_NOT_ALLOWED) and without a login (400 FIELD_MISSING)', async () => {
    const browser = new Browser(server);
    const requestId = await flowOf(browser);
    expectError(await register(browser, requestId, user(), 'https://evil.example'), 403, 'ORIGIN_NOT_ALLOWED');
    const res = await fetch(server.url('/users-srv/register'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: server.issuer },
      body: JSON.stringify(user()),
    });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as Envelope).error.code).to.equal('FIELD_MISSING');
  });

  it('user existence: a constant answer unless the app allows it', async () => {
    const owner = await server.user('exists');
    const ask = async (client: string, email: string) => {
      const browser = new Browser(server);
      const requestId = await flowOf(browser, client);
      const res = await fromIp(browser)(`/useractions-srv/userexistence/${requestId}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email }),
      });
      expect(res.status).to.equal(200);
      return ((await res.json()) as Envelope).data;
    };
    expect(await ask(APP.id, owner.email)).to.deep.equal({ exist: null });
    expect(await ask(APP.id, 'nobody@example.test')).to.deep.equal({ exist: null });
    expect(await ask(OPEN.id, owner.email)).to.deep.equal({ exist: true });
    expect(await ask(OPEN.id, 'nobody@example.test')).to.deep.equal({ exist: false });
  });
});
