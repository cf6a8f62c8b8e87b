/**
 * The inspector's sampling heap profiler, in the server's own process: every allocation of the
 * sampled window counts, collected or not (the young generation's garbage is most of a
 * request's cost), attributed to the function that allocated it. Bench-only.
 */
import { Session } from 'node:inspector/promises';

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** Bytes allocated in the window, and the functions that allocated most (self), biggest first. */
export interface AllocationSummary {
  type: 'heap-summary';
  totalBytes: number;
  top: { where: string; bytes: number }[];
}

let session: Session | null = null;

export async function startSampling(): Promise<void> {
  session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}

export async function stopSampling(count = 40): Promise<AllocationSummary> {
  if (!session) throw new Error('heap sampling was not started');
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
  session.disconnect();
  session = null;
  const bySite = new Map<string, number>();
  let totalBytes = 0;
  const walk = (node: SamplingNode) => {
    totalBytes += node.selfSize;
    if (node.selfSize) {
      const { functionName, url, lineNumber } = node.callFrame;
      const file = url
        .replace(/^file:\/\//, '')
        .replace(/^.*\/node_modules\//, '~/')
        .replace(/^.*\/(core|plugins)\//, '$1/');
      const where = `${functionName || '(anonymous)'} ${file || '(native)'}:${lineNumber + 1}`;
      bySite.set(where, (bySite.get(where) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const top = [...bySite.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([where, bytes]) => ({ where, bytes }));
  return { type: 'heap-summary', totalBytes, top };
}
