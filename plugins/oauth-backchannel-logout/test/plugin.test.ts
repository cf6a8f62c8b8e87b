/**
 * Decision 71: back-channel logout is the oauth-backchannel-logout plugin's, on three contract
 * pieces: `api.sessionEnded`, `api.job` and `services.signJwt`. Left out of `plugins:`, an app
 * with its keys stops start-up naming it and discovery says nothing of back-channel logout; the
 * delivery itself is tested in test/oauth/logout.test.ts, on a config that lists it.
 */
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { BootError, buildApp, createLogger, type EndedSession } from '@gatehouse-auth/core';
import { registerWithFakes } from '@gatehouse-auth/testing';
import plugin, { BACKCHANNEL_LOGOUT_JOB } from '@gatehouse-auth/oauth-backchannel-logout';
import { testConfig, withHostedPage } from '../../../test/support/config.js';
import { WEB, obtainCode, redeem, startServer, type OAuthServer } from '../../../test/oauth/support.js';

const PLUGIN = '@gatehouse-auth/oauth-backchannel-logout';
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}.js`, import.meta.url));
/** A password login's plugins, with the hosted page the app needs, and `more`. */
const withLogin = (...more: Record<string, unknown>[]) =>
  withHostedPage([
    { name: '@gatehouse-auth/method-password' },
    { name: '@gatehouse-auth/grant-authorization-code' },
    ...more,
  ]);
const app = (extra: Record<string, unknown>) => ({
  client_id: 'rp',
  client_secret: 'rp-secret-0123456789abcdef0123456789abcdef',
  redirect_uris: ['https://rp.example.test/cb'],
  login_stages: [['PASSWORD']],
  ...extra,
});

/** The BootError buildApp stops with for these plugins and apps. */
async function startupError(plugins: Record<string, unknown>[], apps: Record<string, unknown>[] = []) {
  const config = testConfig(withLogin(...plugins), { apps });
  try {
    const built = await buildApp(config, { logger: createLogger('silent') });
    await built.close();
  } catch (err) {
    expect(err).to.be.instanceOf(BootError);
    return err as BootError;
  }
  return expect.fail('expected start-up to fail');
}

describe('oauth-backchannel-logout: what it registers', function () {
  it('its app keys, the notice job, a session end listener and the two discovery members', async () => {
    expect(Object.keys(plugin.appConfig ?? {})).to.deep.equal([
      'backchannel_logout_uri',
      'backchannel_logout_session_required',
    ]);
    const registered = await registerWithFakes(plugin);
    expect([...registered.jobs.keys()]).to.deep.equal([BACKCHANNEL_LOGOUT_JOB]);
    expect(registered.jobs.get(BACKCHANNEL_LOGOUT_JOB)!.maxAttempts).to.equal(8);
    expect(registered.sessionEnded).to.have.length(1);
    expect(Object.fromEntries(registered.metadata)).to.deep.equal({
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
    });
  });
});

describe('oauth-backchannel-logout left out of plugins: (decision 71)', function () {
  it("refuses an app's backchannel_logout_uri at start-up, naming the plugin", async () => {
    const err = await startupError([], [app({ backchannel_logout_uri: 'https://rp.example.test/bc' })]);
    expect([err.code, err.message]).to.deep.equal([
      'CONFIG_INVALID',
      `apps[0].backchannel_logout_uri: is not a known key (neither the core nor a loaded plugin adds it; the plugin ${PLUGIN} does)`,
    ]);
  });

  it('refuses backchannel_logout_session_required the same way; with the plugin both start', async () => {
    const err = await startupError([], [app({ backchannel_logout_session_required: true })]);
    expect(err.message).to.equal(
      `apps[0].backchannel_logout_session_required: is not a known key (neither the core nor a loaded plugin adds it; the plugin ${PLUGIN} does)`,
    );
    const config = testConfig(withLogin({ name: PLUGIN }), {
      apps: [app({ backchannel_logout_uri: 'https://rp.example.test/bc', backchannel_logout_session_required: true })],
    });
    const built = await buildApp(config, { logger: createLogger('silent') });
    expect(built.container.cradle.clients.get('rp')!.settings).to.include({
      backchannel_logout_uri: 'https://rp.example.test/bc',
      backchannel_logout_session_required: true,
    });
    await built.close();
  });

  it('the plugin key is held to https outside dev_mode: named in appUrlKeys, checked by the core (config and stored apps)', async () => {
    expect(plugin.appUrlKeys).to.deep.equal(['backchannel_logout_uri']);
    const plain = app({ backchannel_logout_uri: 'http://rp.example/bc' });
    const config = testConfig(withLogin({ name: PLUGIN }), { issuer: 'https://auth.example', apps: [plain] });
    const err = await buildApp(config, { logger: createLogger('silent') }).then(
      () => expect.fail('expected start-up to fail'),
      (e: BootError) => e,
    );
    expect([err.code, err.message]).to.deep.equal([
      'CONFIG_INVALID',
      'apps[0].backchannel_logout_uri: must be https (http only to localhost, 127.0.0.1 or [::1]); set dev_mode: true for a test setup',
    ]);
    // dev_mode lets it start; an app stored in the database is held to it all the same without.
    const dev = testConfig(withLogin({ name: PLUGIN }), {
      issuer: 'https://auth.example',
      apps: [plain],
      dev_mode: true,
    });
    await (await buildApp(dev, { logger: createLogger('silent') })).close();
    const strict = testConfig(withLogin({ name: PLUGIN }), { issuer: 'https://auth.example', apps: [app({})] });
    const built = await buildApp(strict, { logger: createLogger('silent') });
    try {
      expect(() => built.container.cradle.services.appStore.check({ ...plain, client_id: 'stored' })).to.throw(
        BootError,
        'app.backchannel_logout_uri: must be https (http only to localhost, 127.0.0.1 or [::1]) unless dev_mode is on',
      );
    } finally {
      await built.close();
    }
  });

  describe('a server without it', function () {
    let server: OAuthServer;
    before(async () => {
      server = await startServer({ without: [PLUGIN] });
    });
    after(() => server?.close());

    it('discovery names no back-channel logout support, in either document', async () => {
      for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        const meta = (await (await fetch(server.url(path))).json()) as Record<string, unknown>;
        expect(meta, path).to.not.have.property('backchannel_logout_supported');
        expect(meta, path).to.not.have.property('backchannel_logout_session_supported');
      }
    });
  });
});

describe('the contract pieces it stands on (plugin API 1.3)', function () {
  let server: OAuthServer;
  before(async () => {
    server = await startServer({ plugins: [{ path: fixture('session-listener') }] });
  });
  after(() => server?.close());
  const heard = () => (globalThis as unknown as { endedSessions: EndedSession[] }).endedSessions;

  it('api.sessionEnded: told of an ended session with its user, sid, apps and reason; its failure ends nothing less', async () => {
    const user = await server.user('ender');
    const got = await obtainCode(server, user, { clientId: WEB.id });
    const { id_token } = (await redeem(server, got, WEB)).body as { id_token: string };
    const sid = JSON.parse(Buffer.from(id_token.split('.')[1]!, 'base64url').toString()).sid as string;
    const { logout } = server.gatehouse.container.cradle;
    expect(await logout.endSession(sid, 'admin')).to.equal(true);
    expect(heard()).to.deep.equal([{ sub: user.id, sid, clientIds: [WEB.id], reason: 'admin' }]);
    // Ended, though the listener threw: a second end finds nothing and tells no one.
    expect(await logout.endSession(sid, 'admin')).to.equal(false);
    expect(heard()).to.have.length(1);
  });

  it("services.signJwt: the server's key and issuer, an explicit typ of a plugin's own kind only", async () => {
    const { services } = server.gatehouse.container.cradle;
    for (const typ of ['JWT', 'jwt', 'at+jwt', 'AT+JWT', '', 'logout', '+jwt', 'a b+jwt']) {
      let refused: unknown = null;
      await services.signJwt(typ, { sub: 'x' }).catch((err: unknown) => (refused = err));
      expect(refused, typ).to.be.instanceOf(Error);
    }
    const token = await services.signJwt('logout+jwt', { sub: 'x', iss: 'https://someone.else' }, 'RS256');
    const jwks = (await (await fetch(server.url('/.well-known/jwks.json'))).json()) as Parameters<
      typeof createLocalJWKSet
    >[0];
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: server.issuer, typ: 'logout+jwt' });
    expect(payload.sub).to.equal('x');
    expect(decodeProtectedHeader(token).alg).to.equal('RS256');
  });

  it('api.job: a kind the core or another plugin has stops start-up', async () => {
    const core = await startupError([{ path: fixture('job-kind'), options: { kind: 'delivery' } }]);
    expect([core.code, core.message]).to.deep.equal([
      'PLUGIN_DUPLICATE_ID',
      'plugin @fixture/job-kind: a job handler for "delivery" is registered already',
    ]);
    const taken = await startupError([
      { name: PLUGIN },
      { path: fixture('job-kind'), options: { kind: BACKCHANNEL_LOGOUT_JOB } },
    ]);
    expect(taken.message).to.equal(
      `plugin @fixture/job-kind: a job handler for "${BACKCHANNEL_LOGOUT_JOB}" is registered already`,
    );
  });
});
