import { expect } from 'chai';
import request from 'supertest';
import { BootError, buildApp } from '@gatehouse-auth/core';
import { testConfig, withHostedPage } from '../support/config.js';
import { fixturePlugin } from '../support/paths.js';

/** The start-up error of a server with page-login and a plugin mounted at `path`, or null when it starts. */
async function startupError(path: string): Promise<BootError | null> {
  try {
    const built = await buildApp(
      testConfig(withHostedPage([{ path: fixturePlugin('mount-at.js'), options: { path } }])),
    );
    await built.close();
    return null;
  } catch (err) {
    expect(err).to.be.instanceOf(BootError);
    return err as BootError;
  }
}

describe('route mount paths: one plugin each, only / shared', function () {
  this.timeout(20000);

  // Express matches a mount path without regard to case or a trailing slash: each of these is
  // page-login's /login, and a second router there would see its requests first or instead.
  for (const alias of ['/login', '/login/', '/LOGIN', '/Login//']) {
    it(`refuses ${JSON.stringify(alias)} beside page-login's /login`, async () => {
      const err = await startupError(alias);
      expect([err?.code, err?.message]).to.deep.equal([
        'PLUGIN_DUPLICATE_ID',
        // The fixture has no dependencies: it registers first, page-login's /login is the second.
        'plugin @gatehouse-auth/page-login: route "/login" is already registered by plugin @fixture/mount-at',
      ]);
    });
  }

  it('refuses a mount path with a query or fragment part (it could pose as a share of /)', async () => {
    for (const path of ['/#1', '/login?x=1']) {
      const err = await startupError(path);
      expect([err?.code, err?.message], path).to.deep.equal([
        'PLUGIN_INVALID',
        `plugin @fixture/mount-at: route ${JSON.stringify(path)} has a path that is not a plain path (no ?, # or spaces)`,
      ]);
    }
  });

  it('shares / and takes a path below another plugin’s mount', async () => {
    expect(await startupError('/')).to.equal(null);
    expect(await startupError('/login/elsewhere')).to.equal(null);
  });
});

describe('a router at / answers only what no other mount answers', function () {
  this.timeout(20000);

  it("a root router listed (and registered) before page-login does not take page-login's /login", async () => {
    const mount = { path: fixturePlugin('mount-at.js'), options: { path: '/', answers: ['/login', '/elsewhere'] } };
    const built = await buildApp(testConfig(withHostedPage([mount])));
    try {
      // page-login answers its own path: a login page without a flow is its error page, in HTML.
      const login = await request(built.app).get('/login').set('Accept', 'text/html');
      expect([login.status, login.type]).to.deep.equal([400, 'text/html']);
      // A path no other plugin mounts is the root router's.
      const elsewhere = await request(built.app).get('/elsewhere');
      expect([elsewhere.status, elsewhere.body]).to.deep.equal([200, { by: '@fixture/mount-at' }]);
    } finally {
      await built.close();
    }
  });
});
