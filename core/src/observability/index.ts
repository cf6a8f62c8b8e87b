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
export { NO_TRACING, tracingSlot, type Tracing } from './tracing.js';
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
