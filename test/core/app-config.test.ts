/**
 * Issue 9: plugins contribute their own per-app config. A method reads its options for the app
 * of the login (`apps[i].methods.<ID>`, parsed with its `appOptions`); a grant plugin's keys are
 * parsed with their defaults for every app and reach it as `client.settings`.
 */
import path from 'node:path';
import { expect } from 'chai';
import supertest from 'supertest';
import { buildApp, createLogger, type Gatehouse, type GatehousePlugin } from '@gatehouse-auth/core';
import { fakeServices, fakeUser, registerWithFakes, verifyContext } from '@gatehouse-auth/testing';
import { HOSTED_PAGE, MANAGEMENT, testConfig, VERIFICATION_API } from '../support/config.js';
import { REPO_ROOT } from '../support/paths.js';

const app = (id: string, extra: Record<string, unknown> = {}) => ({
  client_id: id,
  client_secret: `${id}-secret-0123456789abcdef0123456789`,
  redirect_uris: [`https://${id}.example/cb`],
  login_stages: [['GREETING']],
  ...extra,
});

describe('per-app config contributed by plugins (issue 9)', () => {
  let gatehouse: Gatehouse;
  before(async () => {
    gatehouse = await buildApp(
      testConfig(
        [
          { path: path.join(REPO_ROOT, 'test/fixtures/plugins/greeting-method.js') },
          { name: '@gatehouse-auth/grant-client-credentials' },
          HOSTED_PAGE,
          MANAGEMENT,
          VERIFICATION_API,
        ],
        {
          apps: [
            app('garden', { methods: { GREETING: { phrase: 'hello garden' } }, service_subjects: { user: true } }),
            app('plain'),
          ],
        },
      ),
      { logger: createLogger('silent') },
    );
    await gatehouse.container.cradle.users.create({ username: 'greta' });
  });
  after(() => gatehouse.close());

  async function signIn(clientId: string, phrase: string): Promise<number> {
    const flow = await gatehouse.container.cradle.flows.create({ clientId, stages: [['GREETING']], ttlSeconds: 600 });
    const http = supertest(gatehouse.app);
    const init = await http
      .post('/verification-srv/authentication/GREETING/initiation')
      .send({ request_id: flow.id, usage_type: 'INITIAL_AUTHENTICATION', identifier: 'greta' });
    await gatehouse.idle();
    const res = await http
      .post('/verification-srv/authentication/GREETING/verification')
      .send({ exchange_id: init.body.data.exchange_id.exchange_id, phrase });
    return res.status;
  }

  it("a method checks against the login's app's own options, defaults where the app sets none", async () => {
    expect(await signIn('garden', 'hello garden')).to.equal(200);
    expect(await signIn('garden', 'open sesame')).to.equal(401);
    expect(await signIn('plain', 'open sesame')).to.equal(200);
  });

  it("a grant plugin's keys reach the client as settings, with defaults", () => {
    const { clients } = gatehouse.container.cradle;
    // enroll_on_login: the hosted login page's key (@gatehouse-auth/page-login), off by default.
    expect(clients.get('garden')!.settings).to.deep.equal({
      service_subjects: { enterprise: [], user: true },
      enroll_on_login: false,
    });
    expect(clients.get('plain')!.settings).to.deep.equal({
      service_subjects: { enterprise: [], user: false },
      enroll_on_login: false,
    });
  });

  it('the testing kit hands a method its per-app options as the server does', async () => {
    const fixture = path.join(REPO_ROOT, 'test/fixtures/plugins/greeting-method.js');
    const { default: greetingMethod } = (await import(fixture)) as { default: GatehousePlugin };
    const services = fakeServices();
    const { methods } = await registerWithFakes(greetingMethod, {}, services);
    const verify = (phrase: string) =>
      methods[0]!.verify(
        verifyContext({
          services,
          user: fakeUser(),
          method: 'GREETING',
          fields: { phrase },
          appOptions: { phrase: 'hi all' },
        }),
      );
    expect(await verify('hi all')).to.deep.equal({ ok: true });
    expect(await verify('open sesame')).to.deep.equal({ ok: false, reason: 'mismatch' });
  });
});
