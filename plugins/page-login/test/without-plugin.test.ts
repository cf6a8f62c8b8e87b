/**
 * Decision 43: the hosted login page is the page-login plugin's. Left out of `plugins:`, /login
 * answers 404, an app without a login_page_url stops start-up with a line naming the plugin to
 * add, and apps with their own login UI work as before: /authorize sends the browser there.
 */
import { expect } from 'chai';
import { buildApp, createLogger, listen, type Gatehouse, type RunningServer } from '@gatehouse-auth/core';
import { pkcePair } from '../../../test/oauth/support.js';
import { parseConfig } from '@gatehouse-auth/core';
import { testConfigInput } from '../../../test/support/config.js';

const ISSUER = 'http://localhost:3999';
const CALLBACK = 'http://localhost:9/cb';
const UI = 'http://localhost:9/login';

const PLUGINS = [
  { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
  { name: '@gatehouse-auth/grant-authorization-code' },
  { name: '@gatehouse-auth/openapi' },
];

function app(clientId: string, extra: Record<string, unknown> = {}) {
  return {
    client_id: clientId,
    name: clientId,
    redirect_uris: [CALLBACK],
    login_stages: [['PASSWORD']],
    ...extra,
  };
}

async function build(
  apps: Record<string, unknown>[],
  plugins: Record<string, unknown>[] = PLUGINS,
): Promise<Gatehouse> {
  // Exactly these plugins: the test harness adds the hosted page otherwise.
  const config = parseConfig({ ...testConfigInput([], { issuer: ISSUER, apps }), plugins }, {});
  return buildApp(config, { logger: createLogger('silent') });
}

describe('page-login left out of plugins: (decision 43)', function () {
  it('refuses an app without login_page_url at start-up, naming the plugin to add', async function () {
    let error: unknown = null;
    try {
      const gatehouse = await build([app('own-ui', { login_page_url: UI }), app('hosted')]);
      await gatehouse.close();
    } catch (err) {
      error = err;
    }
    expect(error, 'start-up must fail').to.be.instanceOf(Error);
    const message = (error as Error).message;
    expect(message).to.include('apps[1] (hosted)');
    expect(message).to.include('no plugin serves the hosted login page');
    expect(message).to.include('@gatehouse-auth/page-login');
  });

  it('starts with the plugin listed', async function () {
    const gatehouse = await build(
      [app('hosted')],
      [
        ...PLUGINS,
        { name: '@gatehouse-auth/management' },
        { name: '@gatehouse-auth/page-login' },
        { name: '@gatehouse-auth/verification-api' },
      ],
    );
    await gatehouse.close();
  });

  describe('with only apps that have their own login UI', function () {
    let running: RunningServer;
    let issuer: string;

    before(async function () {
      const gatehouse = await build([app('own-ui', { login_page_url: UI })]);
      running = await listen(gatehouse);
      issuer = `http://127.0.0.1:${running.port}`;
    });
    after(() => running?.shutdown());

    it('answers 404 at /login and its assets, and the shared style sheet still loads', async function () {
      for (const path of ['/login?request_id=abc', '/login/assets/login.js', '/login/offer?request_id=abc']) {
        expect((await fetch(`${issuer}${path}`)).status, path).to.equal(404);
      }
      expect((await fetch(`${issuer}/login/assets/login.css`)).status).to.equal(200);
      const doc = (await (await fetch(`${issuer}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths)).not.to.include('/login/offer/setup/{step}');
    });

    it("sends /authorize to the app's login UI", async function () {
      const { challenge } = pkcePair();
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: 'own-ui',
        redirect_uri: CALLBACK,
        scope: 'openid',
        state: 'some-state',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      const res = await fetch(`${issuer}/api/oauth2/authorize/?${query}`, { redirect: 'manual' });
      expect(res.status).to.equal(303);
      expect(res.headers.get('location')).to.match(/^http:\/\/localhost:9\/login\?/);
    });
  });
});
