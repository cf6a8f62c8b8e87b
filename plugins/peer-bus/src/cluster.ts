import cluster, { type Worker } from 'node:cluster';
import type { Message, Peers } from './protocol.js';

/** What cluster workers and the primary send each other. */
export const CLUSTER_MESSAGE = 'gatehouse:peer-news';

/** A cluster worker's channel: the primary relays every worker's messages to all of them. */
export function overCluster(peers: Peers): void {
  const onMessage = (raw: unknown) => {
    const m = raw as { type?: string; message?: Message };
    if (m?.type === CLUSTER_MESSAGE && m.message) peers.receive(m.message);
  };
  peers.attach({
    send: (message) =>
      new Promise<void>((resolve, reject) =>
        process.send!({ type: CLUSTER_MESSAGE, message }, undefined, {}, (err) => (err ? reject(err) : resolve())),
      ),
    end: async () => void process.off('message', onMessage),
  });
  process.on('message', onMessage);
  peers.up();
}

/**
 * In the primary: relays each worker's messages to every worker, and says goodbye for a worker
 * that died (so the others stop waiting for its acknowledgements).
 */
export function relayPeerNews(): () => void {
  const nodeOf = new Map<number, string>();
  const broadcast = (message: object) => {
    // A worker may be going away meanwhile: its closed channel is no error of the primary's.
    for (const w of Object.values(cluster.workers ?? {}))
      if (w?.isConnected()) w.send(message, undefined, undefined, () => undefined);
  };
  const onMessage = (worker: Worker, raw: unknown) => {
    const m = raw as { type?: string; message?: Message };
    if (m?.type !== CLUSTER_MESSAGE || !m.message) return;
    nodeOf.set(worker.id, m.message.node);
    broadcast(m);
  };
  const onExit = (worker: Worker) => {
    const node = nodeOf.get(worker.id);
    nodeOf.delete(worker.id);
    if (node) broadcast({ type: CLUSTER_MESSAGE, message: { type: 'bye', node } });
  };
  cluster.on('message', onMessage);
  cluster.on('exit', onExit);
  // When the primary stops.
  return () => void cluster.off('message', onMessage).off('exit', onExit);
}
