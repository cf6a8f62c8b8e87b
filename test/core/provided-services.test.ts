/**
 * Issue 9: plugins add or replace services through the container (`provides` +
 * `api.provide`). A replacement of `passwordHashing` is used by method-password even when its
 * plugin is listed after it; a wrong replacement stops start-up with one line.
 */
import path from 'node:path';
import { expect } from 'chai';
import supertest from 'supertest';
import { BootError, buildApp, createLogger } from '@gatehouse-auth/core';
import { testConfig } from '../support/config.js';
import { REPO_ROOT } from '../support/paths.js';

const FIXTURES = path.join(REPO_ROOT, 'test/fixtures/plugins');
const quiet = { memory_cost: 1024, time_cost: 2 };

describe('services plugins provide (issue 9)', function () {
  this.timeout(20_000);

  it('a passwordHashing replacement listed after method-password is the one it uses', async () => {
    const { calls } = (await import(path.join(FIXTURES, 'pepper-hashing.js'))) as {
      calls: { hash: number; verify: number };
    };
    const gatehouse = await buildApp(
      testConfig(
        [
          { name: '@gatehouse-auth/method-password', options: quiet },
          { path: path.join(FIXTURES, 'pepper-hashing.js') },
          { name: '@gatehouse-auth/management' },
          { name: '@gatehouse-auth/setup-api' },
        ],
        { admin: { token: 'provided-services-admin-token-0123456789' } },
      ),
      { logger: createLogger('silent') },
    );
    try {
      expect(gatehouse.plugins.map((p) => p.name)).to.deep.equal([
        '@fixture/pepper-hashing',
        '@gatehouse-auth/management',
        '@gatehouse-auth/method-password',
        '@gatehouse-auth/setup-api',
      ]);
      expect(gatehouse.plugins[0]!.contributes).to.deep.equal({ services: ['passwordHashing'] });
      const before = calls.hash;
      const { id } = await gatehouse.container.cradle.users.create({ username: 'peppered' });
      const res = await supertest(gatehouse.app)
        .post('/verification-actions-srv/setup/PASSWORD/initiation')
        .set('Authorization', 'Bearer provided-services-admin-token-0123456789')
        .send({ sub: id, password: 'a perfectly long passphrase' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(calls.hash).to.be.greaterThan(before);
    } finally {
      await gatehouse.close();
    }
  });

  for (const [how, message] of [
    ['undeclared', 'plugin @fixture/bad-provider: provides service "userDirectory" without naming it in provides'],
    ['incomplete', 'plugin @fixture/bad-provider: service "passwordHashing" has no withCost function'],
    ['core', 'plugin @fixture/bad-provider: "sql" is a core service a plugin may not replace'],
    [
      'tracing',
      'plugin @fixture/bad-provider: service "tracing" has no request function, has no inTrace function, has no flush function, has no shutdown function',
    ],
    [undefined, 'plugin @fixture/bad-provider: names passwordHashing, sql, tracing in provides but did not provide it'],
  ] as const) {
    it(`refused at boot: ${how ?? 'a promised service never provided'}`, async () => {
      process.env.BAD_PROVIDER = how ?? '';
      try {
        await buildApp(testConfig([{ path: path.join(FIXTURES, 'bad-provider.js') }]), {
          logger: createLogger('silent'),
        });
        expect.fail('expected a BootError');
      } catch (err) {
        expect(err).to.be.instanceOf(BootError);
        expect((err as Error).message).to.equal(message);
      } finally {
        delete process.env.BAD_PROVIDER;
      }
    });
  }
});
