/**
 * The console's Apps page edits the apps stored in the database (decision 51): create (the
 * secret shown once), change redirect URIs, scopes and name, rotate the secret, delete; config
 * apps are shown read-only; every form needs the sign-in's CSRF token; each change is an event.
 */
import type { ClientAdmin } from '@gatehouse-auth/core';
import { expect } from 'chai';
import { csrfOf, signInToSite, startConsoleServer, userWithTotp, ADMINS } from '../../../test/oauth/console-support.js';
import { Browser, locationOf, MACHINE, machineToken, type OAuthServer } from '../../../test/oauth/support.js';

describe('@gatehouse-auth/page-console: apps', function () {
  let server: OAuthServer;
  let browser: Browser;
  let csrf: string;

  before(async () => {
    server = await startConsoleServer();
    const admin = await userWithTotp(server, ADMINS[0]);
    browser = new Browser(server);
    const page = await signInToSite(browser, server, '/console/apps', admin);
    expect(page.status).to.equal(200);
    csrf = csrfOf(await page.text());
  });
  after(() => server.close());

  const secretOf = (page: string) => /<code id="gh-secret-value">([^<]+)<\/code>/.exec(page)?.[1];

  it('lists the config apps read-only: no form to change them', async () => {
    const list = await (await browser.get('/console/apps')).text();
    expect(list).to.contain(`/console/apps/${MACHINE.id}`).and.to.contain('Config file (read-only)');
    const page = await (await browser.get(`/console/apps/${MACHINE.id}`)).text();
    expect(page).to.contain('This app is in the config file: change it there.');
    expect(page).to.not.contain(`action="/console/apps/${MACHINE.id}/delete"`);
    const res = await browser.postForm(`/console/apps/${MACHINE.id}/delete`, { csrf });
    expect(res.status).to.equal(409);
    expect((await machineToken(server)).status).to.equal(200);
  });

  it('creates an app, showing its secret once (no-store); it signs in at once', async () => {
    const res = await browser.postForm('/console/apps', {
      csrf,
      client_id: 'console-svc',
      name: 'Console service',
      type: 'confidential',
      grant_types: 'client_credentials',
      scopes: 'reports.read',
      redirect_uris: '',
    });
    expect(res.status).to.equal(201);
    expect(res.headers.get('cache-control')).to.contain('no-store');
    const page = await res.text();
    const secret = secretOf(page);
    expect(secret).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(page).to.contain('it is shown this once');
    expect((await machineToken(server, 'reports.read', { id: 'console-svc', secret: secret! })).status).to.equal(200);
    const again = await (await browser.get('/console/apps/console-svc')).text();
    expect(again).to.not.contain(secret!);
    const [event] = await server.gatehouse.container.cradle.events.recent({ types: ['console.app_created'], limit: 1 });
    expect(event).to.deep.include({ clientId: 'console-svc' });
  });

  it('a refused entry says why (400), a taken id 409; without the CSRF token 403 and nothing stored', async () => {
    const bad = await browser.postForm('/console/apps', { csrf, client_id: 'console-bad', grant_types: 'urn:none' });
    expect(bad.status).to.equal(400);
    expect(await bad.text()).to.contain('The app was not saved: app.grant_types[0]: no grant');
    const taken = await browser.postForm('/console/apps', { csrf, client_id: MACHINE.id });
    expect(taken.status).to.equal(409);
    expect(await taken.text()).to.contain('An app with this client ID exists already.');
    for (const body of [{}, { csrf: 'x'.repeat(43) }] as Record<string, string>[]) {
      const res = await browser.postForm('/console/apps', { ...body, client_id: 'console-csrf' });
      expect(res.status).to.equal(403);
    }
    expect(
      await server.gatehouse.container.cradle.services.resolve<ClientAdmin>('clientAdmin').get('console-csrf'),
    ).to.equal(null);
  });

  it('changes the redirect URIs, scopes and name; rotates the secret; deletes the app', async () => {
    const created = await browser.postForm('/console/apps', {
      csrf,
      client_id: 'console-web',
      type: 'confidential',
      grant_types: 'authorization_code client_credentials',
      scopes: 'openid reports.read',
      redirect_uris: 'https://web.example/cb',
    });
    const first = { id: 'console-web', secret: secretOf(await created.text())! };
    const saved = await browser.postForm('/console/apps/console-web', {
      csrf,
      name: 'Web',
      grant_types: 'authorization_code client_credentials',
      scopes: 'openid reports.read reports.write',
      redirect_uris: 'https://web.example/cb\r\nhttps://web.example/other',
    });
    const to = locationOf(saved, server);
    expect(to.searchParams.get('done')).to.equal('app_updated');
    const { clients } = server.gatehouse.container.cradle;
    expect(clients.get('console-web')).to.deep.include({
      name: 'Web',
      redirectUris: ['https://web.example/cb', 'https://web.example/other'],
      scopes: ['openid', 'reports.read', 'reports.write'],
    });

    const rotated = await browser.postForm('/console/apps/console-web/secret', { csrf, overlap_hours: '0' });
    expect(rotated.status).to.equal(200);
    const fresh = { id: 'console-web', secret: secretOf(await rotated.text())! };
    expect(fresh.secret)
      .to.match(/^[A-Za-z0-9_-]{43}$/)
      .and.to.not.equal(first.secret);
    expect((await machineToken(server, 'reports.write', first)).status).to.equal(401);
    expect((await machineToken(server, 'reports.write', fresh)).status).to.equal(200);

    const deleted = await browser.postForm('/console/apps/console-web/delete', { csrf });
    expect(locationOf(deleted, server).searchParams.get('done')).to.equal('app_deleted');
    expect(clients.get('console-web')).to.equal(undefined);
    expect((await browser.get('/console/apps/console-web')).status).to.equal(404);
  });

  it('speaks German', async () => {
    const res = await browser.get('/console/apps', { 'Accept-Language': 'de-DE,de;q=0.9' });
    expect(await res.text())
      .to.contain('Neue App')
      .and.to.contain('Konfigurationsdatei (nur lesbar)');
  });
});
