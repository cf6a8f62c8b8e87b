/**
 * @gatehouse-auth/metrics-prometheus — the core's counters and gauges as Prometheus metrics
 * (decisions 25 and 67). It provides the `metrics` service, serves `GET /metrics` on a listener
 * of its own (loopback by default) or on the main port behind the admin token, and in a cluster
 * adds the workers up in the primary. The core chooses every call site and every label.
 */
import { BootError, definePlugin } from '@gatehouse-auth/core';
import { answerPrimary, metricsFromPrimary, primaryMetrics } from './cluster.js';
import { metricsOptions, type MetricsOptions } from './options.js';
import { PromMetrics } from './prom-metrics.js';
import {
  listenForMetrics,
  METRICS_PATH,
  metricsRoute,
  PLUGIN_NAME,
  registrySource,
  type MetricsSource,
} from './scrape.js';

export { metricsOptions, type MetricsOptions } from './options.js';
export { PromMetrics } from './prom-metrics.js';

export default definePlugin<MetricsOptions>({
  name: PLUGIN_NAME,
  apiVersion: '^1.3',
  provides: ['metrics'],
  options: metricsOptions,
  register(api, options) {
    const metrics = new PromMetrics(api.services.stats, { defaultMetrics: options.default_metrics });
    api.provide('metrics', metrics);
    let source: MetricsSource = registrySource(metrics.registry);
    if (options.expose === 'admin') {
      // Never on the public port without the admin token: refuse to start rather than answer
      // every scrape with 403 (decision 25).
      api.check(() => {
        if (!api.web.adminTokenSet) throw new Error('options.expose: admin needs admin.token set');
      });
      api.routes.add({ path: METRICS_PATH, router: metricsRoute(api, () => source) });
    }
    api.serve(async (serving) => {
      if (serving.worker) {
        // The primary adds the workers up: it asks for this registry over IPC, and a worker that
        // takes a scrape on the main port asks the primary for the sum. Workers open no
        // listener: a shared port would hand each scrape to one worker at random.
        answerPrimary(metrics.registry);
        source = metricsFromPrimary(metrics.registry.contentType);
        return;
      }
      if (options.expose !== 'listener') return;
      if (options.port !== 0 && options.port === serving.port) {
        throw new BootError(
          'CONFIG_INVALID',
          `plugin ${PLUGIN_NAME}: options.port must differ from server.port (use expose: admin to serve metrics on the main port)`,
        );
      }
      return listenForMetrics(options, source);
    });
  },
  async primary(_api, options) {
    // The workers' metrics, added up: on the metrics' own listener (the workers have none), and
    // for the scrapes the workers pass on (`expose: admin`).
    const source = primaryMetrics();
    try {
      const listener = options.expose === 'listener' ? await listenForMetrics(options, source) : null;
      return {
        ...(listener ? { ports: listener.ports } : {}),
        close: async () => {
          source.stop();
          await listener?.close();
        },
      };
    } catch (err) {
      source.stop();
      throw err;
    }
  },
});
