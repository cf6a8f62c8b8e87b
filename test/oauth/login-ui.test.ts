/**
 * Issue 12: an app's own login UI (login_page_url), without a browser: the flow cookie goes
 * cross-site (SameSite=None; Secure) for such apps only, the login-flow hijack stays closed
 * (a victim completing an attacker's request id gets FLOW_NOT_BOUND, sent back to the UI),
 * /public-srv/public answers what the UI shows, and the configuration is checked.
 */
import { expect } from 'chai';
import { parseConfig } from '@gatehouse-auth/core';
import { Browser, locationOf } from './support.js';
import {
  ALICE_PASSWORD,
  DEMO_APP,
  DEMO_SPA,
  startAuthorization,
  startDemoServer,
  type DemoServer,
} from './demo-server.js';

const UI = 'http://127.0.0.1:9/login';

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

  it('authorize sends the browser to the UI with requestId; only that app’s flow cookie is SameSite=None; Secure', async function () {
    const browser = new Browser(server);
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
    const attacker = new Browser(server);
    const auth = await startAuthorization(attacker, server, DEMO_APP);
    const requestId = auth.location.searchParams.get('requestId')!;
    const victim = new Browser(server);
    const res = await victim.postForm('/login-srv/login', { requestId, username: 'alice', password: ALICE_PASSWORD });
    const back = locationOf(res, server);
    expect(back.origin + back.pathname).to.equal(UI);
    expect(back.searchParams.get('error')).to.equal('FLOW_NOT_BOUND');
    const info = await fetch(server.url(`/public-srv/public/${requestId}`));
    expect(((await info.json()) as { data: { stage: number } }).data.stage).to.equal(1);
  });

  it('the password form of the UI completes the first stage and goes back to the UI with sub', async function () {
    const browser = new Browser(server);
    const auth = await startAuthorization(browser, server, DEMO_APP);
    const requestId = auth.location.searchParams.get('requestId')!;
    const res = await browser.postForm('/login-srv/login', { requestId, username: 'alice', password: ALICE_PASSWORD });
    const next = locationOf(res, server);
    expect(next.origin + next.pathname).to.equal(UI);
    expect(next.searchParams.get('sub')).to.equal(server.alice.id);
    expect(next.searchParams.get('error')).to.equal(null);
  });

  it('login_page_url needs an https issuer, or localhost', function () {
    const app = { client_id: 'x', login_page_url: 'https://app.example/login' };
    expect(() => parseConfig({ issuer: 'https://id.example', apps: [app] }, {})).to.not.throw();
  });
});
