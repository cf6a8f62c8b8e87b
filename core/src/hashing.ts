import type { HashCost, HashJob, PasswordHashing } from '@gatehouse-auth/plugin-api';
import { hash, parseOptions, verify } from '@node-rs/argon2';

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
 * An argon2id job in this process: @node-rs/argon2's asynchronous calls, on libuv's pool. Each
 * pool thread that hashes keeps its 19 MiB block afterwards (decision 57):
 * `@gatehouse-auth/worker-threads` runs the jobs on threads of their own instead (decision 77).
 */
export const inProcessArgon2 = async (job: HashJob): Promise<string | boolean> => {
  if (job.op === 'hash') return hash(job.secret, { ...job.cost, algorithm: ARGON2ID });
  // A string that is not an argon2 PHC string verifies as false, as node-argon2's verify() answered.
  try {
    parseOptions(job.hash);
  } catch {
    return false;
  }
  return verify(job.hash, job.secret);
};

/**
 * Argon2id with a random 16-byte salt per hash (@node-rs/argon2, decision 57), each job run by
 * `run` (in this process, or on a plugin's worker threads). `limit` bounds how many run at once
 * (the core passes its CPU-heavy-work limiter), so a burst of logins cannot take every core from
 * the event loop.
 */
export function argon2Hashing(
  limit: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
  run: (job: HashJob) => Promise<string | boolean> = inProcessArgon2,
): PasswordHashing {
  return {
    withCost: (cost) => ({
      hash: (secret) => limit(async () => (await run({ op: 'hash', secret, cost })) as string),
      verify: (storedHash, secret) =>
        limit(async () => (await run({ op: 'verify', secret, hash: storedHash })) as boolean),
      needsRehash: (storedHash) => argon2NeedsRehash(storedHash, cost),
    }),
  };
}
