import { definePlugin } from '@gatehouse-auth/core';
import { velocityOptions, type VelocityOptions } from './options.js';
import { velocityRule } from './rule.js';

export { velocityOptions, type VelocityOptions } from './options.js';
export { velocityRule, VELOCITY_RULE_ID } from './rule.js';
export { backoffSeconds, secondsLeft } from './backoff.js';

/**
 * @gatehouse-auth/fds-velocity: failed attempts per user, per IP and per factor in a sliding window,
 * a growing back-off, and the NIST 800-63B lock after `lockout_failures` consecutive failures.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/fds-velocity'
 *     options: { max_failures_per_user: 30, lockout_failures: 100 }
 */
export default definePlugin<VelocityOptions>({
  name: '@gatehouse-auth/fds-velocity',
  apiVersion: '^1',
  options: velocityOptions,
  register(api, options) {
    api.fdsRules.add(velocityRule(options));
  },
});
