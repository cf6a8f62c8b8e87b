import { argon2id, hash, needsRehash, verify } from 'argon2';

/** Argon2id cost parameters (memory in KiB). */
export interface HashCost {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

/** Hashes and checks one kind of secret (passwords, backup codes) at one cost. */
export interface SecretHasher {
  hash(secret: string): Promise<string>;
  verify(storedHash: string, secret: string): Promise<boolean>;
  /** Whether a stored hash was made with other parameters than this hasher's (rehash it on a login). */
  needsRehash?(storedHash: string): boolean;
}

/**
 * The `passwordHashing` service: slow, salted hashing for secrets people choose or read out.
 * A plugin may replace it (`provides: ['passwordHashing']`), e.g. with a hasher in an HSM.
 */
export interface PasswordHashing {
  /** A hasher with this cost; hashes it made stay verifiable whatever the cost later is. */
  withCost(cost: HashCost): SecretHasher;
}

/**
 * Argon2id with a random salt per hash. node-argon2 runs the work on the libuv thread pool;
 * `limit` bounds how many run at once (the core passes its CPU-heavy-work limiter), so a burst
 * of logins cannot take every core from the event loop.
 */
export function argon2Hashing(limit: <T>(work: () => Promise<T>) => Promise<T> = (work) => work()): PasswordHashing {
  return {
    withCost: (cost) => ({
      hash: (secret) => limit(() => hash(secret, { type: argon2id, ...cost })),
      verify: (storedHash, secret) => limit(() => verify(storedHash, secret)),
      needsRehash: (storedHash) => needsRehash(storedHash, cost),
    }),
  };
}
