import { argon2id, hash, verify } from 'argon2';

/** Argon2id cost parameters (memory in KiB). */
export interface Argon2Cost {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

/** Hashes and checks codes; an interface so tests can observe which checks ran. */
export interface CodeHasher {
  hash(code: string): Promise<string>;
  verify(storedHash: string, code: string): Promise<boolean>;
}

/** Argon2id with a random salt per code; node-argon2 runs the work on the libuv thread pool. */
export function argon2Hasher(
  cost: Argon2Cost,
  limit: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
): CodeHasher {
  return {
    hash: (code) => limit(() => hash(code, { type: argon2id, ...cost })),
    verify: (storedHash, code) => limit(() => verify(storedHash, code)),
  };
}
