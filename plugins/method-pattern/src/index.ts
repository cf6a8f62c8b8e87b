/**
 * @gatehouse-auth/method-pattern — PATTERN: the user draws their pattern (a colour and a path
 * over a 3×3 grid of dots) on their bound authenticator device. The core checks the device's
 * signed proof; this plugin checks the pattern against an argon2id hash kept for that device,
 * and locks it after too many wrong attempts in a row.
 */
import { addDeviceMethod, definePlugin, deviceMethodOptions, z, type HashCost } from '@gatehouse-auth/core';
import { patternDefinition } from './method.js';

export const patternOptions = deviceMethodOptions.extend({
  /** Fewest dots of a new pattern (4–9). */
  min_dots: z.int().min(4).max(9).default(4),
  /** Consecutive wrong patterns that lock the pattern until it is set up again (3–20). */
  max_failures: z.int().min(3).max(20).default(10),
});

export type PatternOptions = z.infer<typeof patternOptions>;

/**
 * The cost of the password method's defaults: when the server checks a pattern, the password
 * rules apply (security checklist §7). A pattern has few bits, so the cost slows, but does not
 * stop, guessing from a stolen database; the lock-out and the device key carry the rest.
 */
export const PATTERN_HASH_COST: HashCost = { memoryCost: 65536, timeCost: 3, parallelism: 4 };

export { PATTERN_CREDENTIAL, patternDefinition } from './method.js';
export { COLOURS, normalizePattern, patternRule } from './pattern.js';

export default definePlugin({
  name: '@gatehouse-auth/method-pattern',
  apiVersion: '^1',
  // The device API's routes: binding the device, its inbox and push steps (decision 69).
  dependencies: ['@gatehouse-auth/devices-api'],
  options: patternOptions,
  register(api, options) {
    // The core's hashing service (argon2id off the event loop, bounded), or a plugin's replacement.
    const hasher = api.services.passwordHashing.withCost(PATTERN_HASH_COST);
    addDeviceMethod(
      api,
      {
        id: 'PATTERN',
        // A software key on the device (swk), unlocked by a secret the user knows (pin).
        amr: ['swk', 'pin'],
        page: { label: 'Pattern on your phone', help: 'Draw your pattern in your authenticator app.' },
        ...patternDefinition({
          services: api.services,
          hasher,
          minDots: options.min_dots,
          maxFailures: options.max_failures,
        }),
      },
      options,
    );
  },
});
