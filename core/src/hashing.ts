import type { HashCost, PasswordHashing } from '@gatehouse-auth/plugin-api';
import { parseOptions } from '@node-rs/argon2';
import { hashingThreads, type HashingThreads } from './hashing-threads.js';

// @node-rs/argon2's `Algorithm` and `Version` are ambient const enums, which verbatimModuleSyntax cannot inline.
const ARGON2ID = 2;
const VERSION_0X13 = 1;

/**
 * Whether a stored hash is not argon2id v1.3 at `cost` (another variant, other parameters, or
 * not an argon2 PHC string at all): a login that proved the secret stores it again at `cost`.
 */
export function argon2NeedsRehash(storedHash: string, cost: HashCost): boolean {
  try {
    const made = parseOptions(storedHash);
    return (
      made.algorithm !== ARGON2ID ||
      made.version !== VERSION_0X13 ||
      made.memoryCost !== cost.memoryCost ||
      made.timeCost !== cost.timeCost ||
      made.parallelism !== cost.parallelism
    );
  } catch {
    return true;
  }
}

/**
 * Argon2id with a random 16-byte salt per hash, on the core's hashing threads (@node-rs/argon2,
 * decision 57). `limit` bounds how many run at once (the core passes its CPU-heavy-work limiter),
 * so a burst of logins cannot take every core from the event loop.
 */
export function argon2Hashing(
  limit: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
  threads: () => HashingThreads = hashingThreads,
): PasswordHashing {
  return {
    withCost: (cost) => ({
      hash: (secret) => limit(async () => (await threads().run({ op: 'hash', secret, cost })) as string),
      verify: (storedHash, secret) =>
        limit(async () => (await threads().run({ op: 'verify', secret, hash: storedHash })) as boolean),
      needsRehash: (storedHash) => argon2NeedsRehash(storedHash, cost),
    }),
  };
}
