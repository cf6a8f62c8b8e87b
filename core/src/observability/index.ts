export { isClusterWorker, metricsSlot, NO_METRICS, type Metrics } from './metrics.js';
export { NO_TRACING, tracingSlot, type Tracing } from './tracing.js';
export { tracedDriver } from './database.js';
export { observeExpress, requestObserver, routeTemplate, type RequestObserver } from './http.js';
