/**
 * `@gatehouse-auth/limits-redis` on the plugin API (decision 72): the former `limits:` section
 * stops start-up naming the plugin, its options keep the core's old rules and default, it
 * provides `sharedCounters` and checks Redis as the dependency `redis`, and it lets hits through
 * while Redis does not answer. The `sharedCounters` service itself: the core hands any provider
 * hashed keys (a limit a plugin made before the provider registered included), closes it when
 * the server stops, and refuses a provider the contract check finds incomplete. The counting in
 * Redis across two nodes, a Redis gone and a partition are test/scale/shared-limits.test.ts.
 */
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { BootError, buildApp, createLogger, parseConfig } from '@gatehouse-auth/core';
import limitsRedis, { limitsRedisOptions, type RedisCounters } from '@gatehouse-auth/limits-redis';
import { fakeServices, registerWithFakes } from '@gatehouse-auth/testing';
import { testConfig } from '../../../test/support/config.js';
import { freePort } from '../../../test/oauth/support.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/** The start-up error of a server with these plugins. */
async function startupError(plugins: Record<string, unknown>[]): Promise<Error> {
  return buildApp(testConfig(plugins), { logger: createLogger('silent') }).then(
    async (app) => {
      await app.close();
      return expect.fail('expected start-up to fail');
    },
    (err: unknown) => err as Error,
  );
}

describe('@gatehouse-auth/limits-redis', function () {
  this.timeout(20_000);

  it('refuses the former limits: section at start-up in one line naming the plugin and its options', () => {
    for (const limits of [{ redis_url: 'redis://127.0.0.1:6379/0' }, { redis_timeout_ms: 300 }]) {
      expect(() => parseConfig({ limits }, {})).to.throw(
        BootError,
        /^limits: counting the shared limits in Redis is now the plugin @gatehouse-auth\/limits-redis; list it under plugins: with options url \(was redis_url\) and timeout_ms \(was redis_timeout_ms\)$/,
      );
    }
  });

  it("keeps the core's rules: a redis:// or rediss:// url (required), a positive timeout_ms of 300 by default", async () => {
    expect(limitsRedisOptions.parse({ url: 'rediss://cache.example:6380/1' })).to.deep.equal({
      url: 'rediss://cache.example:6380/1',
      timeout_ms: 300,
    });
    const plugin = (options: Record<string, unknown>) => ({ name: '@gatehouse-auth/limits-redis', options });
    const http = await startupError([plugin({ url: 'http://cache.example' })]);
    expect((http as BootError).code).to.equal('PLUGIN_OPTIONS_INVALID');
    expect(http.message).to.include('plugins[0].options.url: must be a redis:// or rediss:// URL');
    expect((await startupError([plugin({})])).message).to.include('plugins[0].options.url: is required');
    expect((await startupError([plugin({ url: 'redis://x', timeout_ms: 0 })])).message).to.include(
      'plugins[0].options.timeout_ms: must be at least',
    );
  });

  it('provides sharedCounters and checks redis; while Redis does not answer a hit is let through, fast', async () => {
    const services = fakeServices();
    const url = `redis://127.0.0.1:${await freePort()}/0`; // nothing listens there
    const registered = await registerWithFakes(limitsRedis, { url, timeout_ms: 200 }, services);
    const counters = services.provided.get('sharedCounters') as RedisCounters;
    try {
      expect([...registered.dependencies.keys()]).to.deep.equal(['redis']);
      const started = performance.now();
      const { count, resetsAt } = await counters.hit('authorize:k', 60_000);
      expect(count).to.equal(0);
      expect(resetsAt).to.be.at.most(Date.now());
      expect(performance.now() - started).to.be.below(1500);
      const down = await registered.dependencies.get('redis')!().then(
        () => null,
        (err: unknown) => err,
      );
      expect(down).to.be.instanceOf(Error);
    } finally {
      await counters.close();
    }
  });

  it('a sharedCounters provider the contract check finds incomplete stops start-up', async () => {
    const failure = await startupError([{ path: fixture('half-counters.js') }]);
    expect(String(failure)).to.include('plugin @fixture/half-counters: service "sharedCounters" has no close function');
  });

  it("the core's limits count in a provided sharedCounters, made before it or not, with hashed keys; closed at stop", async () => {
    const { seen } = (await import(fixture('memory-counters.js'))) as { seen: { keys: string[]; closed: number } };
    const { made } = (await import(fixture('early-limit.js'))) as {
      made: { limit: { hit(key: string): Promise<number | null> } };
    };
    const app = await buildApp(
      testConfig([{ path: fixture('early-limit.js') }, { path: fixture('memory-counters.js') }]),
      { logger: createLogger('silent') },
    );
    try {
      // Without the plugin's dependency check, only the database is checked.
      expect((await app.container.cradle.dependencies.states()).map((d) => d.name)).to.deep.equal(['database']);
      await app.container.cradle.counters.hit('authorize:10.9.8.7', 60_000);
      expect(await made.limit.hit('alice@example.test')).to.equal(null);
      expect(seen.keys).to.have.length(2);
      expect(seen.keys[0]).to.match(/^authorize:[A-Za-z0-9_-]{43}$/);
      expect(seen.keys[1]).to.match(/^plugin:[A-Za-z0-9_-]{43}$/);
      expect(seen.keys.join(' ')).to.not.include('10.9.8.7').and.not.include('alice');
    } finally {
      await app.close();
    }
    expect(seen.closed).to.equal(1);
  });
});
