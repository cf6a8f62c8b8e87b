import { definePlugin } from '@gatehouse-auth/core';
import { pushFatigueOptions, type PushFatigueOptions } from './options.js';
import { pushFatigueRule } from './rule.js';

export { pushFatigueOptions, DEVICE_METHODS, type PushFatigueOptions } from './options.js';
export { pushFatigueRule, secondsLeft, PUSH_FATIGUE_RULE_ID } from './rule.js';

/**
 * @gatehouse-auth/fds-push-fatigue: caps the pushes a user gets per window, and blocks pushes
 * for a while after repeated denials on the device (push bombing, MFA fatigue).
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/fds-push-fatigue'
 *     options: { max_pushes: 5, window_seconds: 600, max_denials: 2, block_seconds: 1800 }
 */
export default definePlugin<PushFatigueOptions>({
  name: '@gatehouse-auth/fds-push-fatigue',
  apiVersion: '^1',
  options: pushFatigueOptions,
  register(api, options) {
    api.fdsRules.add(pushFatigueRule(options));
  },
});
