/**
 * Decision 75: the consent page and the account choice are page-consent's, on `web.authorize`.
 * Left out of `plugins:`, the app is answered at its redirect URI (OIDC Core §3.1.2.6), never
 * sent to a page nobody serves: `prompt=consent` → consent_required before any login,
 * `prompt=select_account` with a session → account_selection_required; discovery does not list
 * them; an app with `consent_required: true`, and oauth-dcr (whose apps all ask), stop start-up.
 */
import { expect } from 'chai';
import type { GatehouseConfig } from '@gatehouse-auth/core';
import {
  DEMO_ADMIN_TOKEN,
  DEMO_SPA,
  fullLogin,
  startAuthorization,
  startDemoServer,
  type DemoServer,
} from '../../../test/oauth/demo-server.js';
import { Browser } from '../../../test/oauth/support.js';

const PAGE_CONSENT = '@gatehouse-auth/page-consent';

/** The demo config without page-consent, then changed by `edit`. */
function withoutPlugin(edit: (config: GatehouseConfig) => void = () => {}) {
  return startDemoServer({
    configure(config) {
      config.plugins = config.plugins.filter((p) => p.name !== PAGE_CONSENT);
      edit(config);
    },
  });
}

describe('page-consent left out of plugins: (decision 75)', function () {
  let server: DemoServer;

  before(async function () {
    server = await withoutPlugin();
  });
  after(() => server?.close());

  /** The error a redirect to the SPA's redirect URI carries, with its state and issuer. */
  function answered(location: URL, state: string) {
    expect(location.origin + location.pathname).to.equal(DEMO_SPA.redirectUri);
    expect(location.searchParams.get('state')).to.equal(state);
    expect(location.searchParams.get('iss')).to.equal(server.issuer);
    return location.searchParams.get('error');
  }

  it('prompt=consent answers consent_required at once: no login, no flow cookie', async function () {
    const browser = new Browser(server);
    const auth = await startAuthorization(browser, server, DEMO_SPA, { prompt: 'consent' });
    expect(answered(auth.location, auth.state)).to.equal('consent_required');
    expect(browser.cookieNames().filter((name) => name.includes('gh_flow_'))).to.deep.equal([]);
  });

  it('prompt=consent from a signed-in browser answers consent_required too', async function () {
    const browser = new Browser(server);
    await fullLogin(browser, server, DEMO_SPA);
    const auth = await startAuthorization(browser, server, DEMO_SPA, { prompt: 'consent' });
    expect(answered(auth.location, auth.state)).to.equal('consent_required');
  });

  it('prompt=select_account with a session answers account_selection_required', async function () {
    const browser = new Browser(server);
    await fullLogin(browser, server, DEMO_SPA);
    const auth = await startAuthorization(browser, server, DEMO_SPA, { prompt: 'select_account' });
    expect(answered(auth.location, auth.state)).to.equal('account_selection_required');
  });

  it('prompt=select_account without a session has nobody to choose: the login starts', async function () {
    const auth = await startAuthorization(new Browser(server), server, DEMO_SPA, { prompt: 'select_account' });
    expect(auth.location.pathname).to.equal('/login');
  });

  it('the pages answer 404, and discovery lists neither prompt value', async function () {
    for (const path of ['/login/consent', '/login/account']) {
      expect((await fetch(server.url(`${path}?request_id=x`))).status, path).to.equal(404);
    }
    const metadata = (await (await fetch(server.url('/.well-known/openid-configuration'))).json()) as {
      prompt_values_supported: string[];
    };
    expect(metadata.prompt_values_supported).to.deep.equal(['none', 'login']);
  });

  it('the admin API refuses to store an app with consent_required: true (400 INVALID_APP)', async function () {
    const res = await fetch(server.url('/admin/apps'), {
      method: 'POST',
      headers: { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_id: 'asks-consent',
        token_endpoint_auth_method: 'none',
        redirect_uris: ['https://asks-consent.example.test/cb'],
        grant_types: ['authorization_code'],
        login_stages: [['PASSWORD']],
        consent_required: true,
      }),
    });
    expect(res.status).to.equal(400);
    const { error } = (await res.json()) as { error: { code: string; error: string } };
    expect(error.code).to.equal('INVALID_APP');
    expect(error.error).to.match(/^app\.consent_required: no plugin serves the consent page \(\/login\/consent\)/);
  });
});

describe('page-consent left out: what needs it stops start-up (decision 75)', function () {
  /** The error start-up failed with. */
  async function bootError(edit: (config: GatehouseConfig) => void): Promise<Error & { code?: string }> {
    try {
      const server = await withoutPlugin(edit);
      await server.close();
    } catch (err) {
      return err as Error & { code?: string };
    }
    throw new Error('start-up did not fail');
  }

  it('an app with consent_required: true, with one line naming the plugin', async function () {
    const err = await bootError((config) => {
      const spa = config.apps.findIndex((a) => a.client_id === DEMO_SPA.id);
      config.apps[spa]!.consent_required = true;
    });
    expect(err.code).to.equal('CONFIG_INVALID');
    expect(err.message).to.include(
      'consent_required: no plugin serves the consent page (/login/consent); add @gatehouse-auth/page-consent to plugins, or set it to false',
    );
  });

  it('oauth-dcr, whose apps all ask for consent', async function () {
    const err = await bootError((config) => {
      config.plugins.push({ name: '@gatehouse-auth/oauth-dcr', options: { open_registration: true } });
    });
    expect(err.code).to.equal('PLUGIN_MISSING_DEPENDENCY');
    expect(err.message).to.equal(
      'plugin @gatehouse-auth/oauth-dcr: depends on plugin @gatehouse-auth/page-consent, which is not configured',
    );
  });
});
