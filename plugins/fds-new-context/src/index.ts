import { definePlugin } from '@gatehouse-auth/core';
import { newContextOptions, type NewContextOptions } from './options.js';
import { newContextRule } from './rule.js';

export { newContextOptions, type NewContextOptions, type SignalName } from './options.js';
export { newContextRule, detectSignals, NEW_CONTEXT_RULE_ID } from './rule.js';
export { deviceKey, networkPrefix, primaryLanguage, hourDistance } from './signals.js';

/**
 * @gatehouse-auth/fds-new-context: a step-up (or another configured verdict) when a user shows a
 * device, network or language never seen in their latest successes, or logs in at an unusual hour.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/fds-new-context'
 *     options: { verdicts: { new_device: step_up, new_network: allow }, history_size: 50 }
 */
export default definePlugin<NewContextOptions>({
  name: '@gatehouse-auth/fds-new-context',
  apiVersion: '^1',
  options: newContextOptions,
  register(api, options) {
    api.fdsRules.add(newContextRule(options));
  },
});
