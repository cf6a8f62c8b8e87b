/**
 * @gatehouse-auth/worker-threads — argon2id hashing and the token endpoint's JWT signatures on
 * worker threads of their own (decisions 31, 57 and 77). It provides the core's
 * `passwordHashing` (the core's argon2id, each job run on a hashing thread) and `jwtSigning`
 * (signatures batched per turn of the event loop to a signing thread). Without it the core
 * hashes on libuv's pool and signs on the event loop.
 */
import { argon2Hashing, definePlugin, type JwtSigning } from '@gatehouse-auth/core';
import { availableParallelism } from 'node:os';
import { hashingThreads } from './hashing-threads.js';
import { workerThreadsOptions, type WorkerThreadsOptions } from './options.js';
import { signingThreads } from './signing-threads.js';

export { workerThreadsOptions, type WorkerThreadsOptions } from './options.js';
export { HashingThreads, hashingThreads } from './hashing-threads.js';
export { SigningThreads, signingThreads } from './signing-threads.js';

export default definePlugin<WorkerThreadsOptions>({
  name: '@gatehouse-auth/worker-threads',
  apiVersion: '^1.3',
  provides: ['passwordHashing', 'jwtSigning'],
  options: workerThreadsOptions,
  register(api, options) {
    const cores = availableParallelism();
    // The process's pools, started with their first job: every server of the process shares them.
    const hashing = hashingThreads(options.hashing_threads ?? Math.max(1, cores - 1));
    const signing = signingThreads(options.signing_threads ?? Math.max(1, Math.min(4, cores)));
    // The core's argon2id (its parameters, its rehash rule), bounded by the core's CPU-heavy-work limit.
    api.provide(
      'passwordHashing',
      argon2Hashing(api.services.heavy, (job) => hashing.run(job)),
    );
    // The private keys go to a thread once each, as KeyObjects (cloned, never exported or logged).
    const jwtSigning: JwtSigning = { sign: (key, args, input) => signing.sign(key, args, input) };
    api.provide('jwtSigning', jwtSigning);
  },
});
