import { FaceEngine } from './face-engine.js';
import { resolveOptions, type FaceEngineOptions } from './types.js';

let shared: { key: string; engine: Promise<FaceEngine> } | undefined;

/**
 * One engine per process, started by the first caller: servers built many times in one process
 * (tests) share one worker and load the models once. Every caller must ask for the same options;
 * a failed start is forgotten so that the next caller tries again.
 */
export function sharedFaceEngine(options?: FaceEngineOptions): Promise<FaceEngine> {
  const resolved = resolveOptions(options);
  const key = JSON.stringify(resolved);
  if (shared) {
    if (shared.key === key) return shared.engine;
    return Promise.reject(new Error(`the shared face engine runs with ${shared.key}, not ${key}`));
  }
  const entry = { key, engine: FaceEngine.start(resolved) };
  shared = entry;
  entry.engine.catch(() => {
    if (shared === entry) shared = undefined;
  });
  return entry.engine;
}

/** Ends the shared engine (tests, the bench); the next caller starts a new one. */
export async function closeSharedFaceEngine(): Promise<void> {
  const entry = shared;
  shared = undefined;
  const engine = await entry?.engine.catch(() => undefined);
  await engine?.close();
}
