/**
 * @gatehouse-auth/method-backupcode — the BACKUPCODE verification method: a set of single-use
 * recovery codes (60 bits each), shown once and stored as argon2id hashes.
 */
import { randomBytes } from 'node:crypto';
import { definePlugin, z, type AuthMethod, type SecretHasher } from '@gatehouse-auth/core';
import { backupCodeMethod } from './method.js';

/**
 * Argon2id defaults are OWASP's minimum (19 MiB, t=2, p=1), lighter than for passwords: a code
 * carries 60 random bits, and a set of codes is hashed in one request.
 */
export const backupCodeOptions = z
  .strictObject({
    /** Codes per set. */
    count: z.int().min(1).max(50).default(10),
    /** Argon2id memory cost in KiB. */
    memory_cost: z.int().min(1024).default(19456),
    /** Argon2id iterations. */
    time_cost: z.int().min(1).default(2),
    /** Argon2id lanes. */
    parallelism: z.int().min(1).max(16).default(1),
  })
  .prefault({});

export type BackupCodeOptions = z.infer<typeof backupCodeOptions>;

export { backupCodeMethod, CODE_CREDENTIAL } from './method.js';
export { formatCode, normalizeCode, lookupId } from './codes.js';

/** Builds the method from parsed options and a hasher with their cost. */
export async function createBackupCodeMethod(options: BackupCodeOptions, hasher: SecretHasher): Promise<AuthMethod> {
  const dummyHash = await hasher.hash(randomBytes(16).toString('base64url'));
  return backupCodeMethod({ hasher, count: options.count, dummyHash });
}

export default definePlugin({
  name: '@gatehouse-auth/method-backupcode',
  apiVersion: '^1',
  options: backupCodeOptions,
  async register(api, options) {
    // The core's hashing service (argon2id off the event loop, bounded), or a plugin's replacement.
    const hasher = api.services.passwordHashing.withCost({
      memoryCost: options.memory_cost,
      timeCost: options.time_cost,
      parallelism: options.parallelism,
    });
    api.methods.add(await createBackupCodeMethod(options, hasher));
  },
});
