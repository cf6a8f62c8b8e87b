/**
 * Issue 8, critical: a browser session satisfies an app only when the methods it completed
 * (still set up, recent enough for max_age) meet that app's login stages and whatever the FDS
 * rules that check sessions ask for. Otherwise the login resumes at the first stage left, with
 * the user known. Run on the demo config: demo-spa is `[[PASSWORD]]`, demo-app is
 * `[[PASSWORD],[TOTP,SMS,BACKUPCODE]]`.
 */
import { expect } from 'chai';
import { decodeJwt } from 'jose';
import { Browser } from './support.js';
import {
  DEMO_ADMIN_TOKEN,
  DEMO_APP,
  DEMO_SPA,
  codeFrom,
  fullLogin,
  redeemDemo,
  stage,
  startAuthorization,
  startDemoServer,
  type DemoClient,
  type DemoServer,
} from './demo-server.js';

/** An error redirect to the client with state and iss. */
function expectErrorAtClient(location: URL, client: DemoClient, error: string, state: string, server: DemoServer) {
  expect(location.origin + location.pathname).to.equal(client.redirectUri);
  expect(location.searchParams.get('error'), location.search).to.equal(error);
  expect(location.searchParams.get('code')).to.equal(null);
  expect(location.searchParams.get('state')).to.equal(state);
  expect(location.searchParams.get('iss')).to.equal(server.issuer);
}

/** The hosted page of a flow: which methods it offers and whether it asks who the user is. */
async function loginPage(browser: Browser, location: URL) {
  expect(location.pathname).to.equal('/login');
  const res = await browser.get(location.pathname + location.search);
  expect(res.status).to.equal(200);
  const html = await res.text();
  const offered = [...html.matchAll(/name="method"\s+value="([A-Z0-9_]+)"/g)].map((m) => m[1]);
  return { offered, asksIdentifier: html.includes('id="gh-identifier"') };
}

async function amrOf(server: DemoServer, client: DemoClient, code: string, verifier: string) {
  const tokens = await redeemDemo(server, client, code, verifier);
  return decodeJwt(tokens.id_token as string);
}

describe('SSO across apps with different login stages (issue 8, demo config)', function () {
  let server: DemoServer;

  before(async function () {
    server = await startDemoServer();
  });
  after(() => server?.close());

  describe('every combination of the demo apps', function () {
    const combos: [DemoClient, DemoClient, 'sso' | 'second-factor'][] = [
      [DEMO_SPA, DEMO_SPA, 'sso'],
      [DEMO_SPA, DEMO_APP, 'second-factor'],
      [DEMO_APP, DEMO_SPA, 'sso'],
      [DEMO_APP, DEMO_APP, 'sso'],
    ];
    for (const [first, second, expected] of combos) {
      it(`signed in at ${first.id}, then ${second.id} → ${expected === 'sso' ? 'a code without a login' : 'the second factor is asked'}`, async function () {
        const browser = new Browser(server);
        await fullLogin(browser, server, first);

        // prompt=none never skips a stage the session has not met.
        const silent = await startAuthorization(browser, server, second, { prompt: 'none' });
        if (expected === 'second-factor') {
          expectErrorAtClient(silent.location, second, 'interaction_required', silent.state, server);
        } else {
          const code = await codeFrom(browser, server, silent.location, silent, second);
          expect((await amrOf(server, second, code, silent.verifier)).sub).to.equal(server.alice.id);
        }

        const auth = await startAuthorization(browser, server, second);
        if (expected === 'sso') {
          const code = await codeFrom(browser, server, auth.location, auth, second);
          const idToken = await amrOf(server, second, code, auth.verifier);
          expect(idToken.amr).to.deep.equal(first === DEMO_APP ? ['pwd', 'otp'] : ['pwd']);
          return;
        }
        // The page resumes at the second stage with the user known: no identifier, no password.
        const page = await loginPage(browser, auth.location);
        expect(page.asksIdentifier).to.equal(false);
        expect(page.offered).to.have.members(['TOTP', 'SMS', 'BACKUPCODE']);
        const requestId = auth.location.searchParams.get('request_id')!;
        const resume = await stage(browser, server, requestId, 'TOTP');
        const code = await codeFrom(browser, server, resume, auth, second);
        const idToken = await amrOf(server, second, code, auth.verifier);
        expect(idToken.sub).to.equal(server.alice.id);
        expect(idToken.amr).to.deep.equal(['pwd', 'otp']);

        // The new session carries both factors: demo-app now signs in silently.
        const again = await startAuthorization(browser, server, DEMO_APP, { prompt: 'none' });
        await codeFrom(browser, server, again.location, again, DEMO_APP);
      });
    }

    it('the token endpoint never sees a password-only grant for demo-app', async function () {
      const browser = new Browser(server);
      await fullLogin(browser, server, DEMO_SPA);
      const auth = await startAuthorization(browser, server, DEMO_APP);
      // No code until the second stage: the flow is at /login, not at resume.
      expect(auth.location.pathname).to.equal('/login');
      const resume = server.url(
        `/api/oauth2/authorize/resume?request_id=${auth.location.searchParams.get('request_id')}`,
      );
      const res = await browser.get(resume);
      expect(res.status).to.equal(400);
      expect(res.headers.get('location')).to.equal(null);
    });

    it('demo-service (no redirect URI, no login stages) cannot use a session', async function () {
      const browser = new Browser(server);
      await fullLogin(browser, server, DEMO_APP);
      const res = await browser.get(
        '/api/oauth2/authorize/?client_id=demo-service&response_type=code&scope=introspection&redirect_uri=http%3A%2F%2Flocalhost%3A8080%2Fcallback',
      );
      expect(res.status).to.equal(400);
      expect(res.headers.get('location')).to.equal(null);
    });
  });

  describe('a method counts once', function () {
    it('the password the session used is not offered again, and initiating it is refused', async function () {
      const browser = new Browser(server);
      await fullLogin(browser, server, DEMO_SPA);
      const auth = await startAuthorization(browser, server, DEMO_APP);
      const requestId = auth.location.searchParams.get('request_id')!;
      const res = await fetch(server.url('/verification-srv/authentication/PASSWORD/initiation'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: server.alice.id }),
      });
      const body = (await res.json()) as { error: { code: string } };
      expect(res.status).to.equal(403);
      expect(body.error.code).to.equal('METHOD_NOT_ENABLED');
    });
  });

  describe('max_age', function () {
    it('a password older than max_age is asked again, with the user known; a fresh second factor still counts', async function () {
      const browser = new Browser(server);
      await fullLogin(browser, server, DEMO_SPA); // password at T
      server.clock.advance(100);
      const upgrade = await startAuthorization(browser, server, DEMO_APP);
      const resume = await stage(browser, server, upgrade.location.searchParams.get('request_id')!, 'TOTP'); // TOTP at T+100(+30)
      await codeFrom(browser, server, resume, upgrade, DEMO_APP);
      server.clock.advance(60);

      // max_age 120: the password (≈190 s old) is too old, the TOTP (≈60 s) is not.
      const silent = await startAuthorization(browser, server, DEMO_APP, { prompt: 'none', max_age: '120' });
      expectErrorAtClient(silent.location, DEMO_APP, 'login_required', silent.state, server);
      const auth = await startAuthorization(browser, server, DEMO_APP, { max_age: '120' });
      const page = await loginPage(browser, auth.location);
      expect(page.asksIdentifier).to.equal(false);
      expect(page.offered).to.deep.equal(['PASSWORD']);
      const next = await stage(browser, server, auth.location.searchParams.get('request_id')!, 'PASSWORD');
      const code = await codeFrom(browser, server, next, auth, DEMO_APP);
      const idToken = await amrOf(server, DEMO_APP, code, auth.verifier);
      expect(idToken.amr).to.have.members(['pwd', 'otp']);
      const age = Math.floor(server.clock.now().getTime() / 1000) - (idToken.auth_time as number);
      expect(age).to.be.at.most(120);
    });

    it('nothing recent enough → a login from the first stage, and prompt=none → login_required', async function () {
      const browser = new Browser(server);
      await fullLogin(browser, server, DEMO_APP);
      server.clock.advance(600);
      const silent = await startAuthorization(browser, server, DEMO_SPA, { prompt: 'none', max_age: '300' });
      expectErrorAtClient(silent.location, DEMO_SPA, 'login_required', silent.state, server);
      const auth = await startAuthorization(browser, server, DEMO_SPA, { max_age: '300' });
      expect((await loginPage(browser, auth.location)).asksIdentifier).to.equal(true);
      // Without max_age the session still serves.
      const sso = await startAuthorization(browser, server, DEMO_SPA);
      expect(sso.location.pathname).to.equal('/api/oauth2/authorize/resume');
    });
  });

  describe('after a method was removed from the user', function () {
    it('through the API: every session ends, prompt=none → login_required at both apps', async function () {
      const fresh = await startDemoServer();
      try {
        const browser = new Browser(fresh);
        await fullLogin(browser, fresh, DEMO_APP);
        const res = await fetch(fresh.url(`/verification-actions-srv/setup/users/${fresh.alice.id}/methods/TOTP`), {
          method: 'DELETE',
          headers: { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}` },
        });
        expect(res.status).to.equal(200);
        for (const client of [DEMO_APP, DEMO_SPA]) {
          const silent = await startAuthorization(browser, fresh, client, { prompt: 'none' });
          expectErrorAtClient(silent.location, client, 'login_required', silent.state, fresh);
        }
      } finally {
        await fresh.close();
      }
    });

    it('outside the API (the session lives on): the removed TOTP no longer counts for demo-app', async function () {
      const fresh = await startDemoServer();
      try {
        const browser = new Browser(fresh);
        await fullLogin(browser, fresh, DEMO_APP);
        const credentials = fresh.gatehouse.container.cradle.services.credentials(fresh.alice.id, 'TOTP');
        for (const c of await credentials.list()) await credentials.remove(c.id);

        const silent = await startAuthorization(browser, fresh, DEMO_APP, { prompt: 'none' });
        expectErrorAtClient(silent.location, DEMO_APP, 'interaction_required', silent.state, fresh);
        const auth = await startAuthorization(browser, fresh, DEMO_APP);
        expect((await loginPage(browser, auth.location)).asksIdentifier).to.equal(false);
        // The password still counts for demo-spa.
        const spa = await startAuthorization(browser, fresh, DEMO_SPA, { prompt: 'none' });
        const code = await codeFrom(browser, fresh, spa.location, spa, DEMO_SPA);
        expect((await amrOf(fresh, DEMO_SPA, code, spa.verifier)).amr).to.deep.equal(['pwd']);
      } finally {
        await fresh.close();
      }
    });
  });

  describe('FDS rules that check sessions', function () {
    it('new_context: a session used from a new device must complete one more method', async function () {
      const fresh = await startDemoServer();
      try {
        const browser = new Browser(fresh);
        // Enough history from one device (min_history 3): two full logins, four successes.
        await fullLogin(browser, fresh, DEMO_APP);
        await fullLogin(browser, fresh, DEMO_APP, { prompt: 'login' });
        const otherDevice = { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' };

        const silent = await startAuthorization(browser, fresh, DEMO_APP, { prompt: 'none' }, otherDevice);
        expectErrorAtClient(silent.location, DEMO_APP, 'interaction_required', silent.state, fresh);
        const auth = await startAuthorization(browser, fresh, DEMO_APP, {}, otherDevice);
        const page = await loginPage(browser, auth.location);
        expect(page.asksIdentifier).to.equal(false);
        // Any method of the app not used yet: not the password, not the TOTP.
        expect(page.offered).to.have.members(['SMS', 'BACKUPCODE']);
        const next = await stage(browser, fresh, auth.location.searchParams.get('request_id')!, 'BACKUPCODE');
        await codeFrom(browser, fresh, next, auth, DEMO_APP);
        // The same device as before: no step-up.
        const same = await startAuthorization(browser, fresh, DEMO_APP, { prompt: 'none' });
        await codeFrom(browser, fresh, same.location, same, DEMO_APP);
      } finally {
        await fresh.close();
      }
    });

    it('ip_list: a session used from a denied address signs no one in', async function () {
      const fresh = await startDemoServer({ trustProxy: true });
      try {
        const browser = new Browser(fresh);
        await fullLogin(browser, fresh, DEMO_SPA);
        const denied = { 'X-Forwarded-For': '192.0.2.7' };
        const silent = await startAuthorization(browser, fresh, DEMO_SPA, { prompt: 'none' }, denied);
        expectErrorAtClient(silent.location, DEMO_SPA, 'login_required', silent.state, fresh);
        const auth = await startAuthorization(browser, fresh, DEMO_SPA, {}, denied);
        expect((await loginPage(browser, auth.location)).asksIdentifier).to.equal(true);
        const allowed = await startAuthorization(browser, fresh, DEMO_SPA, { prompt: 'none' });
        expect(allowed.location.pathname).to.equal('/api/oauth2/authorize/resume');
      } finally {
        await fresh.close();
      }
    });
  });

  it('a session stored before completions were kept satisfies nothing', async function () {
    const browser = new Browser(server);
    await fullLogin(browser, server, DEMO_APP);
    const { sql } = server.gatehouse.container.cradle;
    // As written by the previous release: auth_time and amr only.
    await sql.exec(`UPDATE sessions SET data = :data WHERE revoked_at IS NULL AND user_id = :u`, {
      data: JSON.stringify({ auth_time: Math.floor(server.clock.now().getTime() / 1000), amr: ['pwd', 'otp'] }),
      u: server.alice.id,
    });
    const silent = await startAuthorization(browser, server, DEMO_SPA, { prompt: 'none' });
    expectErrorAtClient(silent.location, DEMO_SPA, 'login_required', silent.state, server);
  });
});
