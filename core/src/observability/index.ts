import { createRequire } from 'node:module';

export {
  clusterMetrics,
  createMetrics,
  isClusterWorker,
  NO_METRICS,
  PromMetrics,
  type GaugeSources,
  type Metrics,
  type MetricsSource,
} from './metrics.js';
export { createTracing, NO_TRACING, OtlpTracing, type Tracing } from './tracing.js';
export { tracedDriver } from './database.js';
export { metricsFromPrimary, primaryMetrics } from './cluster.js';
export {
  listenForMetrics,
  metricsRoutes,
  observeExpress,
  registrySource,
  requestObserver,
  routeTemplate,
  type MetricsListener,
  type RequestObserver,
} from './http.js';

/** The core's version, for the traces' `service.version` (from src and from dist alike). */
export const CORE_VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
