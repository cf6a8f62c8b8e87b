/**
 * Issue 12: an app's own login UI (login_page_url), without a browser: the flow cookie goes
 * cross-site (SameSite=None; Secure) for such apps only, the login-flow hijack stays closed
 * (a victim completing an attacker's request id gets FLOW_NOT_BOUND, sent back to the UI),
 * /public-srv/public answers what the UI shows, and the configuration is checked.
 */
import { expect } from 'chai';
import { parseConfig } from '@gatehouse-auth/core';
import { authenticatedStatus, Browser, completeStage, locationOf, pkcePair } from '../../../test/oauth/support.js';
import {
  ALICE_PASSWORD,
  DEMO_APP,
  DEMO_SPA,
  aliceTotp,
  generateRequest,
  redeemDemo,
  startAuthorization,
  startDemoServer,
  type DemoServer,
} from '../../../test/oauth/demo-server.js';

const UI = 'http://127.0.0.1:9/login';
const UI_ORIGIN = new URL(UI).origin;

describe('an app’s own login UI: binding, errors, public info (issue 12)', function () {
  let server: DemoServer;

  before(async function () {
    server = await startDemoServer({
      host: 'localhost',
      configure(config) {
        config.apps.find((a) => a.client_id === 'demo-app')!.login_page_url = UI;
      },
    });
  });
  after(() => server?.close());

  /** The UI's password form, posted by `browser` as alice (cross-site in a real browser). */
  const passwordForm = (browser: Browser, requestId: string, password = ALICE_PASSWORD) =>
    browser.postForm('/login-srv/login', { requestId, username: 'alice', password });
  /** The same, answered by a 303: where it sends the browser. */
  const afterPassword = async (browser: Browser, requestId: string, password = ALICE_PASSWORD) =>
    locationOf(await passwordForm(browser, requestId, password), server);
  /** alice's TOTP stage done by `browser` with the verification API and the continuation. */
  const totpStage = async (browser: Browser, requestId: string) =>
    completeStage(
      browser,
      server,
      requestId,
      'TOTP',
      { sub: server.alice.id },
      { pass_code: await aliceTotp(server) },
      '/login-srv/verification/login',
    );

  it('authorize sends the browser to the UI with requestId; only that app’s flow cookie is SameSite=None; Secure', async function () {
    const browser = new Browser(server, UI_ORIGIN);
    const res = await browser.get(
      `/api/oauth2/authorize/?${new URLSearchParams({ client_id: DEMO_APP.id, response_type: 'code', scope: 'openid', redirect_uri: DEMO_APP.redirectUri, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', ui_locales: 'de' }).toString()}`,
    );
    const location = new URL(res.headers.get('location')!);
    expect(location.origin + location.pathname).to.equal(UI);
    expect(location.searchParams.get('view_type')).to.equal('login');
    expect(location.searchParams.get('ui_locales')).to.equal('de');
    expect(res.headers.getSetCookie().find((c) => c.startsWith('gh_flow_')))
      .to.match(/SameSite=None/i)
      .and.match(/Secure/);
    const spa = await startAuthorization(new Browser(server), server, DEMO_SPA);
    expect(spa.location.pathname).to.equal('/login');

    const info = await fetch(server.url(`/public-srv/public/${location.searchParams.get('requestId')}`));
    const body = (await info.json()) as { data: Record<string, unknown> };
    expect(body.data).to.deep.include({
      client_id: 'demo-app',
      client_name: 'Gatehouse demo app',
      stage: 1,
      ui_locales: 'de',
    });
    const unknown = await fetch(server.url('/public-srv/public/nope'));
    expect(unknown.status).to.equal(404);
  });

  it("a victim completing an attacker's request id gets FLOW_NOT_BOUND, sent back to the UI; the attacker gets nothing", async function () {
    const attacker = new Browser(server, UI_ORIGIN);
    const auth = await startAuthorization(attacker, server, DEMO_APP);
    const requestId = auth.location.searchParams.get('requestId')!;
    const victim = new Browser(server, UI_ORIGIN);
    const back = await afterPassword(victim, requestId);
    expect(back.origin + back.pathname).to.equal(UI);
    expect(back.searchParams.get('error')).to.equal('FLOW_NOT_BOUND');
    const info = await fetch(server.url(`/public-srv/public/${requestId}`));
    expect(((await info.json()) as { data: { stage: number } }).data.stage).to.equal(1);
  });

  it('the password form of the UI completes the first stage and goes back to the UI with sub', async function () {
    const browser = new Browser(server, UI_ORIGIN);
    const auth = await startAuthorization(browser, server, DEMO_APP);
    const requestId = auth.location.searchParams.get('requestId')!;
    const next = await afterPassword(browser, requestId);
    expect(next.origin + next.pathname).to.equal(UI);
    expect(next.searchParams.get('sub')).to.equal(server.alice.id);
    expect(next.searchParams.get('error')).to.equal(null);
  });

  it('login_page_url needs an https issuer, or localhost', function () {
    const app = { client_id: 'x', login_page_url: 'https://app.example/login' };
    expect(() => parseConfig({ issuer: 'https://id.example', apps: [app] }, {})).to.not.throw();
  });

  describe('POST /authz-srv/authrequest/authz/generate: a request id asked for by XHR', function () {
    const generate = async (fields: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const res = await fetch(server.url('/authz-srv/authrequest/authz/generate'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify(fields),
      });
      return {
        status: res.status,
        body: (await res.json()) as Record<string, unknown> & { data?: { requestId: string } },
      };
    };
    const request = (extra: Record<string, string> = {}) => {
      const { verifier, challenge } = pkcePair();
      const fields = {
        client_id: DEMO_APP.id,
        redirect_uri: DEMO_APP.redirectUri,
        response_type: 'code',
        response_mode: 'query',
        scope: 'openid',
        nonce: 'n-1',
        state: 'st',
        ui_locales: 'de',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        ...extra,
      };
      return { fields, verifier };
    };

    it('answers a request id for the flow /authorize would start; the UI sees it at /public-srv/public', async function () {
      const res = await generate(request().fields);
      expect(res.status).to.equal(200);
      const requestId = res.body.data!.requestId;
      expect(requestId).to.be.a('string').with.length.above(20);
      const info = await fetch(server.url(`/public-srv/public/${requestId}`));
      expect(((await info.json()) as { data: Record<string, unknown> }).data).to.deep.include({
        client_id: 'demo-app',
        stage: 1,
        ui_locales: 'de',
      });
    });

    it('the first continuation claims the flow for its browser; the login ends in a code for that browser only', async function () {
      const { fields, verifier } = request();
      const requestId = (await generate(fields)).body.data!.requestId;
      const browser = new Browser(server, UI_ORIGIN);
      const first = await passwordForm(browser, requestId);
      const next = locationOf(first, server);
      expect(next.searchParams.get('sub')).to.equal(server.alice.id);
      expect(first.headers.getSetCookie().find((c) => c.startsWith('gh_flow_')))
        .to.match(/SameSite=None/i)
        .and.match(/Secure/);
      // Another browser, with the same request id, cannot move it on any more.
      const other = new Browser(server, UI_ORIGIN);
      const refused = await afterPassword(other, requestId);
      expect(refused.searchParams.get('error')).to.equal('FLOW_NOT_BOUND');
      const resume = await totpStage(browser, requestId);
      const callback = locationOf(await browser.get(resume.pathname + resume.search), server);
      expect(callback.origin + callback.pathname).to.equal(DEMO_APP.redirectUri);
      expect(callback.searchParams.get('state')).to.equal('st');
      const tokens = await redeemDemo(server, DEMO_APP, callback.searchParams.get('code')!, verifier);
      expect(tokens.id_token).to.be.a('string');
    });

    it('the first continuation claims the flow before its step runs: after a wrong password, another browser is refused', async function () {
      const requestId = (await generate(request().fields)).body.data!.requestId;
      const first = new Browser(server, UI_ORIGIN);
      const failed = await afterPassword(first, requestId, 'guess');
      expect(failed.searchParams.get('error')).to.equal('VERIFICATION_FAILED');
      expect(first.cookieNames().some((n) => n.startsWith('gh_flow_'))).to.equal(true);
      const other = new Browser(server, UI_ORIGIN);
      const refused = await afterPassword(other, requestId);
      expect(refused.searchParams.get('error')).to.equal('FLOW_NOT_BOUND');
      const retried = await afterPassword(first, requestId);
      expect(retried.searchParams.get('sub')).to.equal(server.alice.id);
    });

    it("an attacker's generated request id completed by the victim is the victim's: the attacker cannot continue it", async function () {
      const requestId = (await generate(request().fields)).body.data!.requestId;
      const victim = new Browser(server, UI_ORIGIN);
      await afterPassword(victim, requestId);
      const attacker = new Browser(server, UI_ORIGIN);
      const totp = await totpStage(attacker, requestId);
      expect(totp.searchParams.get('error')).to.equal('FLOW_NOT_BOUND');
      const info = await fetch(server.url(`/public-srv/public/${requestId}`));
      expect(((await info.json()) as { data: { stage: number } }).data.stage).to.equal(2);
    });

    for (const [name, fields, status, error] of [
      ['an unknown app', { client_id: 'nope' }, 400, 'invalid_client'],
      ['a redirect_uri not registered', { redirect_uri: 'https://evil.example/cb' }, 400, 'invalid_request'],
      ['an unsupported response_type', { response_type: 'magic' }, 400, 'unsupported_response_type'],
      ['prompt=none (no browser session can be seen)', { prompt: 'none' }, 400, 'login_required'],
      ['a parameter that is not a string', { scope: ['openid'] }, 400, 'invalid_request'],
    ] as const) {
      it(`refuses ${name}: ${status} ${error}`, async function () {
        const res = await generate({ ...request().fields, ...fields });
        expect(res.status, JSON.stringify(res.body)).to.equal(status);
        expect(res.body.error).to.equal(error);
      });
    }

    it('refuses an app without login_page_url: 400 unauthorized_client', async function () {
      const res = await generate({
        ...request().fields,
        client_id: DEMO_SPA.id,
        redirect_uri: DEMO_SPA.redirectUri,
      });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('unauthorized_client');
    });
  });
  describe('login CSRF: the attacker’s login forced into the victim’s browser (issue 25)', function () {
    const generated = () => generateRequest(server, { state: 'st' });
    /** The flow's stage as the UI sees it. */
    const stageOf = async (requestId: string) => {
      const info = await fetch(server.url(`/public-srv/public/${requestId}`));
      return ((await info.json()) as { data: { stage: number } }).data.stage;
    };
    /** A form POST as the victim's browser makes it from a page elsewhere (or with no Origin). */
    const crossSitePost = (path: string, fields: Record<string, string>, origin: string | null) =>
      fetch(server.url(path), {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          ...(origin === null ? {} : { Origin: origin }),
        },
        body: new URLSearchParams(fields).toString(),
      });
    const refused = async (res: Response) => {
      expect(res.status).to.equal(403);
      expect(res.headers.getSetCookie()).to.deep.equal([]);
      const body = (await res.json()) as { error?: { code?: string } };
      expect(body.error?.code).to.equal('ORIGIN_NOT_ALLOWED');
    };

    for (const [name, origin] of [
      ['another site', 'https://evil.example'],
      ['an opaque origin (Origin: null)', 'null'],
      ['no Origin at all', null],
    ] as const) {
      it(`the password form from ${name}: 403 ORIGIN_NOT_ALLOWED, nothing claimed, no session`, async function () {
        const { requestId } = await generated();
        await refused(
          await crossSitePost('/login-srv/login', { requestId, username: 'alice', password: ALICE_PASSWORD }, origin),
        );
        expect(await stageOf(requestId)).to.equal(1);
        // Still unclaimed: the app's own page can use it.
        const ui = new Browser(server, UI_ORIGIN);
        expect((await afterPassword(ui, requestId)).searchParams.get('sub')).to.equal(server.alice.id);
      });

      it(`a status_id earned through the JSON API, posted from ${name}: 403 ORIGIN_NOT_ALLOWED`, async function () {
        const { requestId } = await generated();
        const statusId = await authenticatedStatus(
          server,
          requestId,
          'PASSWORD',
          { identifier: 'alice' },
          { password: ALICE_PASSWORD },
        );
        await refused(
          await crossSitePost(
            '/login-srv/verification/login',
            { requestId, status_id: statusId, verificationType: 'PASSWORD' },
            origin,
          ),
        );
        expect(await stageOf(requestId)).to.equal(1);
      });
    }

    it('a flow started at /authorize is refused from another site too, though the browser holds its cookie', async function () {
      const browser = new Browser(server, 'https://evil.example');
      const auth = await startAuthorization(browser, server, DEMO_APP);
      const requestId = auth.location.searchParams.get('requestId')!;
      const res = await browser.postForm('/login-srv/login', {
        requestId,
        username: 'alice',
        password: ALICE_PASSWORD,
      });
      await refused(res);
      expect(await stageOf(requestId)).to.equal(1);
    });

    it('a generated flow claimed from the app’s login UI (another site) gets its code but makes no SSO session', async function () {
      const { requestId, verifier } = await generated();
      const browser = new Browser(server, UI_ORIGIN);
      await afterPassword(browser, requestId);
      const resume = await totpStage(browser, requestId);
      const callback = locationOf(await browser.get(resume.pathname + resume.search), server);
      expect(callback.origin + callback.pathname).to.equal(DEMO_APP.redirectUri);
      const tokens = await redeemDemo(server, DEMO_APP, callback.searchParams.get('code')!, verifier);
      expect(tokens.id_token).to.be.a('string');
      expect(browser.cookieNames().filter((n) => n.includes('gh_session'))).to.deep.equal([]);
      // Another app asking this browser silently: nobody is signed in.
      const silent = await startAuthorization(browser, server, DEMO_SPA, { prompt: 'none' });
      expect(silent.location.origin + silent.location.pathname).to.equal(DEMO_SPA.redirectUri);
      expect(silent.location.searchParams.get('error')).to.equal('login_required');
    });

    it('a flow started at /authorize and continued from the app’s login UI keeps its SSO session', async function () {
      const browser = new Browser(server, UI_ORIGIN);
      const auth = await startAuthorization(browser, server, DEMO_APP);
      const requestId = auth.location.searchParams.get('requestId')!;
      await afterPassword(browser, requestId);
      const resume = await totpStage(browser, requestId);
      await browser.get(resume.pathname + resume.search);
      expect(browser.cookieNames().filter((n) => n.includes('gh_session'))).to.have.length(1);
    });
  });
});
