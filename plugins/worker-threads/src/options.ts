import { z } from '@gatehouse-auth/core';

/**
 * Options of `@gatehouse-auth/worker-threads`: how many threads each pool may start. Left out,
 * the sizes the core used before decision 77, from the machine's cores.
 */
export const workerThreadsOptions = z.strictObject({
  /** Argon2id threads: cores − 1 by default, the CPU-heavy-work limit that bounds hashes at once. */
  hashing_threads: z.number().int().min(1).max(64).optional(),
  /** JWT signing threads: as many as cores, at most 4, by default. */
  signing_threads: z.number().int().min(1).max(64).optional(),
});

export type WorkerThreadsOptions = z.output<typeof workerThreadsOptions>;
