/**
 * @gatehouse-auth/limits-redis — the limits that hold across nodes (the /authorize per-address
 * limit, plugins' `web.limit`) counted in Redis instead of the database (decisions 30 and 72).
 * It provides the `sharedCounters` service and checks Redis as the dependency `redis`. The core
 * keeps the limits themselves: which keys, how many hits, each node's own count first.
 */
import { definePlugin } from '@gatehouse-auth/core';
import { limitsRedisOptions, type LimitsRedisOptions } from './options.js';
import { RedisCounters } from './redis-counters.js';

export { limitsRedisOptions, type LimitsRedisOptions } from './options.js';
export { RedisCounters } from './redis-counters.js';

export default definePlugin<LimitsRedisOptions>({
  name: '@gatehouse-auth/limits-redis',
  apiVersion: '^1.3',
  provides: ['sharedCounters'],
  options: limitsRedisOptions,
  register(api, options) {
    const counters = new RedisCounters(options.url, api.logger, options.timeout_ms);
    api.provide('sharedCounters', counters);
    // On /health/dependencies and `gatehouse_dependency_up`, never in readiness (decision 32).
    api.dependency('redis', () => counters.ping());
  },
});
