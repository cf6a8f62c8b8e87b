/**
 * Decision 76: the landing page at / is @gatehouse-auth/page-landing. A browser gets the page (the
 * account link only when a plugin provides `accountPage`), an API client the JSON 404; left out
 * of `plugins:`, / answers the JSON 404 to a browser too. The brand on it: plugins/branding/test.
 */
import { expect } from 'chai';
import { registerWithFakes } from '@gatehouse-auth/testing';
import landing from '@gatehouse-auth/page-landing';
import { ACCOUNT_PLUGIN } from '../../../test/oauth/console-support.js';
import { startServer, type OAuthServer } from '../../../test/oauth/support.js';

const LANDING = { name: '@gatehouse-auth/page-landing' };
const html = { Accept: 'text/html,*/*;q=0.8' };

describe('page-landing: / for a browser (decision 76)', function () {
  this.timeout(30_000);

  it('mounts one router at /', async () => {
    const registered = await registerWithFakes(landing);
    expect(registered.routes.map((r) => r.path)).to.deep.equal(['/']);
  });

  describe('with the account page', () => {
    let server: OAuthServer;
    before(async () => {
      server = await startServer({
        // The account page's second stage has BACKUPCODE.
        plugins: [
          { name: '@gatehouse-auth/method-backupcode', options: { memory_cost: 1024, time_cost: 2 } },
          ACCOUNT_PLUGIN,
          LANDING,
        ],
      });
    });
    after(() => server?.close());

    it('is the page for a browser, linking the account page (its accountPage service) and the discovery document', async () => {
      const res = await fetch(server.url('/'), { headers: html });
      expect(res.status).to.equal(200);
      expect(res.headers.get('referrer-policy')).to.equal('no-referrer');
      expect(res.headers.get('vary')).to.equal('Accept, Accept-Language');
      const body = await res.text();
      expect(body).to.include('<title>Gatehouse</title>');
      expect(body).to.include('<a href="/account" id="gh-account">Manage your account');
      expect(body).to.include('<a href="/.well-known/openid-configuration" id="gh-docs">OpenID Connect configuration');
      const de = await (await fetch(server.url('/'), { headers: { ...html, 'Accept-Language': 'de' } })).text();
      expect(de).to.include('Dies ist der Anmeldedienst von Gatehouse.');
    });

    it('is listed as contributing the route /, as `gatehouse plugins` shows it (the shared root)', () => {
      const info = server.gatehouse.plugins.find((p) => p.name === LANDING.name);
      expect(info?.contributes.routes).to.deep.equal(['/']);
    });

    it('keeps the JSON 404 for API clients, and answers only GET / (other paths pass on)', async () => {
      for (const accept of ['application/json', '*/*']) {
        const res = await fetch(server.url('/'), { headers: { Accept: accept } });
        expect(res.status, accept).to.equal(404);
        expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
      }
      expect((await fetch(server.url('/nothing-here'), { headers: html })).status).to.equal(404);
    });
  });

  it('without an account page: no account link', async () => {
    const server = await startServer({ plugins: [LANDING] });
    try {
      const body = await (await fetch(server.url('/'), { headers: html })).text();
      expect(body).to.include('<h1>Gatehouse</h1>');
      expect(body).not.to.include('gh-account');
    } finally {
      await server.close();
    }
  });

  it('left out of plugins: / is the JSON 404 for a browser too', async () => {
    const server = await startServer();
    try {
      const res = await fetch(server.url('/'), { headers: html });
      expect(res.status).to.equal(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
    } finally {
      await server.close();
    }
  });
});
