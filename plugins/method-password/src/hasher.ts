import { argon2id, hash, verify } from 'argon2';

/** Argon2id cost parameters (memory in KiB). */
export interface Argon2Cost {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

/** Hashes and checks passwords; an interface so tests can observe that a check really ran. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(storedHash: string, password: string): Promise<boolean>;
}

/** Argon2id with a random salt per hash; node-argon2 runs the work on the libuv thread pool. */
export function argon2Hasher(
  cost: Argon2Cost,
  limit: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
): PasswordHasher {
  return {
    hash: (password) => limit(() => hash(password, { type: argon2id, ...cost })),
    verify: (storedHash, password) => limit(() => verify(storedHash, password)),
  };
}
