/**
 * The plugin against the contract it runs on (decision 67): it provides `metrics` as the
 * replaceable service's check wants it, mounts /metrics only with `expose: admin` (and then
 * refuses to start without the admin token), and opens its listener only when the server serves.
 */
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { buildApp, createLogger } from '@gatehouse-auth/core';
import metricsPlugin from '@gatehouse-auth/metrics-prometheus';
import { fakeServices, registerWithFakes } from '@gatehouse-auth/testing';
import { testConfig } from '../../../test/support/config.js';

const HALF_METRICS = fileURLToPath(new URL('./fixtures/half-metrics.js', import.meta.url));

describe('@gatehouse-auth/metrics-prometheus on the plugin API', () => {
  it('provides metrics, mounts no route with the default expose, and serves only once asked', async () => {
    const services = fakeServices();
    const registered = await registerWithFakes(metricsPlugin, {}, services);
    const metrics = services.provided.get('metrics') as { enabled: boolean };
    expect(metrics.enabled).to.equal(true);
    expect(registered.routes).to.deep.equal([]);
    // Registering opened nothing: the listener waits for `api.serve`'s start.
    expect(registered.serving).to.have.length(1);
    // A cluster worker opens no listener of its own.
    expect(await registered.serving[0]!({ host: '127.0.0.1', port: 3000, worker: true })).to.equal(undefined);
  });

  it('with expose: admin, refuses to start without the admin token (the fakes have none)', async () => {
    const refused = await registerWithFakes(metricsPlugin, { expose: 'admin' }).then(
      () => null,
      (err: unknown) => err as Error,
    );
    expect(refused?.message).to.equal('options.expose: admin needs admin.token set');
  });

  it('a metrics provider the contract check finds incomplete stops start-up', async () => {
    const failure = await buildApp(testConfig([{ path: HALF_METRICS }]), { logger: createLogger('silent') }).then(
      async (app) => void (await app.close()),
      (err: unknown) => err as Error,
    );
    expect(String(failure)).to.include('plugin @fixture/half-metrics: service "metrics" has no delivery function');
  });
});
