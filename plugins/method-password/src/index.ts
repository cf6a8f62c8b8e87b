/**
 * @gatehouse-auth/method-password — the PASSWORD verification method: argon2id hashes, NIST
 * SP 800-63B length rules and a list of common/breached passwords, no composition rules.
 */
import { randomBytes } from 'node:crypto';
import { definePlugin, z, type AuthMethod, type SecretHasher } from '@gatehouse-auth/core';
import { passwordMethod } from './method.js';

export const passwordOptions = z
  .strictObject({
    /** Shortest accepted password, in Unicode code points (NIST: at least 8). */
    min_length: z.int().min(8).max(64).default(8),
    /** Longest accepted password, in Unicode code points (NIST: allow at least 64). */
    max_length: z.int().min(64).max(4096).default(256),
    /**
     * Argon2id memory cost in KiB. The defaults (19 MiB, t=2, p=1) are OWASP's minimum for
     * argon2id: about 30 ms of one core each, so a 2-core node signs in dozens of users a
     * second. Stored hashes of other parameters are rehashed at the next successful login.
     */
    memory_cost: z.int().min(1024).default(19456),
    /** Argon2id iterations. */
    time_cost: z.int().min(1).default(2),
    /** Argon2id lanes. */
    parallelism: z.int().min(1).max(16).default(1),
  })
  .prefault({});

export type PasswordOptions = z.infer<typeof passwordOptions>;

export { passwordMethod, PASSWORD_CREDENTIAL } from './method.js';
export { isCommonPassword } from './common-passwords.js';

/**
 * Builds the method from parsed options and a hasher with their cost. The dummy hash for
 * unenrolled users is made with the same hasher, so both paths cost the same.
 */
export async function createPasswordMethod(options: PasswordOptions, hasher: SecretHasher): Promise<AuthMethod> {
  const dummyHash = await hasher.hash(randomBytes(32).toString('base64url'));
  return passwordMethod({
    hasher,
    policy: { minLength: options.min_length, maxLength: options.max_length },
    dummyHash,
  });
}

export default definePlugin({
  name: '@gatehouse-auth/method-password',
  apiVersion: '^1',
  options: passwordOptions,
  async register(api, options) {
    // The core's hashing service (argon2id off the event loop, bounded), or a plugin's replacement.
    const hasher = api.services.passwordHashing.withCost({
      memoryCost: options.memory_cost,
      timeCost: options.time_cost,
      parallelism: options.parallelism,
    });
    api.methods.add(await createPasswordMethod(options, hasher));
  },
});
