/**
 * @gatehouse-auth/management (decision 0063): it provides `userAccounts` and `clientAdmin` on the
 * core's stores; a plugin that uses them, loaded without it, stops start-up with one line naming
 * it; left out with no such plugin, the server runs and a resolve of either service throws.
 */
import { expect } from 'chai';
import {
  buildApp,
  createLogger,
  isBootError,
  type ClientAdmin,
  type Gatehouse,
  type UserAccounts,
} from '@gatehouse-auth/core';
import { testConfig, TEST_ADMIN_TOKEN } from '../../../test/support/config.js';

const MANAGEMENT = { name: '@gatehouse-auth/management' };
const CLIENT_CREDENTIALS = { name: '@gatehouse-auth/grant-client-credentials' };
const actor = { via: 'test', userId: 'tester', ip: null };

async function bootError(plugins: { name: string }[]): Promise<Error & { code?: string }> {
  try {
    const gatehouse = await buildApp(testConfig(plugins, { admin: { token: TEST_ADMIN_TOKEN } }), {
      logger: createLogger('silent'),
    });
    await gatehouse.close();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('start-up did not fail');
}

describe('@gatehouse-auth/management left out', function () {
  this.timeout(60_000);

  for (const user of [
    '@gatehouse-auth/admin-api',
    '@gatehouse-auth/page-login',
    '@gatehouse-auth/oauth-dcr',
    '@gatehouse-auth/compat-cidaas',
  ]) {
    it(`${user} stops start-up with one line naming the missing plugin`, async () => {
      const err = await bootError([CLIENT_CREDENTIALS, { name: user }]);
      expect(isBootError(err)).to.equal(true);
      expect(err.code).to.equal('PLUGIN_MISSING_DEPENDENCY');
      expect(err.message).to.equal(
        `plugin ${user}: depends on plugin @gatehouse-auth/management, which is not configured`,
      );
    });
  }

  it('with no plugin that uses them, the server runs; the services are not there', async () => {
    const gatehouse = await buildApp(testConfig([CLIENT_CREDENTIALS]), { logger: createLogger('silent') });
    try {
      const { services } = gatehouse.container.cradle;
      expect(() => services.resolve('userAccounts')).to.throw('no service "userAccounts" is provided');
      expect(() => services.resolve('clientAdmin')).to.throw('no service "clientAdmin" is provided');
    } finally {
      await gatehouse.close();
    }
  });
});

describe('@gatehouse-auth/management listed', function () {
  this.timeout(60_000);
  let gatehouse: Gatehouse;
  before(async () => {
    gatehouse = await buildApp(
      testConfig([CLIENT_CREDENTIALS, MANAGEMENT], {
        apps: [{ client_id: 'from-config', client_secret: 'a-config-secret-0123456789abcdef0123' }],
      }),
      { logger: createLogger('silent') },
    );
  });
  after(() => gatehouse?.close());

  const accounts = () => gatehouse.container.cradle.services.resolve<UserAccounts>('userAccounts');
  const apps = () => gatehouse.container.cradle.services.resolve<ClientAdmin>('clientAdmin');

  it('userAccounts acts on the core stores, each action an event naming who did it', async () => {
    const user = await accounts().createUser(actor, { username: 'managed-user' });
    await accounts().disable(actor, user);
    expect((await accounts().findById(user.id))!.status).to.equal('disabled');
    await accounts().enable(actor, (await accounts().findById(user.id))!);
    const profile = await accounts().updateProfile(user, { given_name: 'Ada' });
    expect(profile).to.include({ given_name: 'Ada' });
    expect(await accounts().setRequiredActions(actor, user, ['second_factor'])).to.deep.equal(['second_factor']);
    const { events } = gatehouse.container.cradle;
    const types = (await events.recent({ userId: user.id, limit: 20 })).map((e) => e.type);
    expect(types).to.include.members([
      'test.user_created',
      'test.user_disabled',
      'test.user_enabled',
      'user.profile_updated',
      'test.required_actions_set',
    ]);
    expect(await accounts().deleteUser(actor, user)).to.equal(true);
    expect(await accounts().findById(user.id)).to.equal(null);
  });

  it('overview lists the loaded plugins, this one included', async () => {
    const { plugins, apps: served } = await accounts().overview();
    expect(plugins.map((p) => p.name)).to.include('@gatehouse-auth/management');
    expect(served.map((a) => a.clientId)).to.include('from-config');
  });

  it('clientAdmin keeps config apps read-only and serves a created app at once', async () => {
    const config = await apps().get('from-config');
    expect(config).to.deep.include({ source: 'config', has_secret: true, created_at: null });
    expect(config!.app).to.not.have.property('client_secret');
    const refused = await apps()
      .patch(actor, 'from-config', { name: 'x' })
      .catch((err: { code: string }) => err.code);
    expect(refused).to.equal('APP_READ_ONLY');

    const created = await apps().create(actor, { client_id: 'managed-app', grant_types: ['client_credentials'] });
    expect(created.client_secret).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(gatehouse.container.cradle.clients.get('managed-app')?.clientId).to.equal('managed-app');
    const rotated = await apps().rotateSecret(actor, 'managed-app', { overlapSeconds: 60 });
    expect(rotated.app.previous_secret_expires_at).to.be.a('string');
    expect((await apps().list()).map((a) => a.client_id)).to.deep.equal(['from-config', 'managed-app']);
    expect(await apps().delete(actor, 'managed-app')).to.deep.equal({ revoked_grants: 0, revoked_tokens: 0 });
    expect(gatehouse.container.cradle.clients.get('managed-app')).to.equal(undefined);
  });
});
