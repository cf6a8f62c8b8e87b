import { randomUUID } from 'node:crypto';
import cluster from 'node:cluster';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Invalidation } from './token-cache.js';

/**
 * Carries revocations to every node that caches active tokens (docs/decisions/0029): PostgreSQL
 * LISTEN/NOTIFY between servers on one database, IPC through the primary between the cluster
 * workers of one SQLite file, nothing for a lone process.
 */
export interface RevocationBus {
  /**
   * Delivers `what` here at once and to every other node; resolves once the other nodes have
   * been sent it (the sender's own copy came back through the same channel), so a revocation
   * is answered only after the other caches are told.
   */
  publish(what: Invalidation): Promise<void>;
  /** `invalidate` for every revocation, here or elsewhere; `connected(false)` while peers may be missed. */
  subscribe(handlers: { invalidate(what: Invalidation): void; connected(up: boolean): void }): void;
  close(): Promise<void>;
}

type Handlers = Parameters<RevocationBus['subscribe']>[0];

/** How long `publish` waits for its own copy before answering anyway (and saying so). */
const ECHO_TIMEOUT_MS = 1000;
/** NOTIFY payloads stop at 8000 bytes: split long lists of keys. */
const KEYS_PER_MESSAGE = 90;
const CHANNEL = 'gatehouse_revocations';

interface Message {
  node: string;
  seq: number;
  what: Invalidation;
}

/** The pieces a bus implementation shares: local delivery, sequence numbers, echo waiting. */
class Echoes {
  readonly node = randomUUID();
  private seq = 0;
  private readonly waiting = new Map<number, () => void>();
  handlers: Handlers | null = null;

  constructor(private readonly logger: Logger) {}

  /** A message from `what`, delivered here now; `sent` resolves when its echo comes back. */
  send(what: Invalidation, transmit: (message: Message) => Promise<void>, live: boolean): Promise<void> {
    this.handlers?.invalidate(what);
    const message = { node: this.node, seq: ++this.seq, what };
    if (!live) return transmit(message);
    const echoed = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(message.seq);
        this.logger.warn('a revocation was not echoed back in time; other nodes may see it late');
        resolve();
      }, ECHO_TIMEOUT_MS);
      this.waiting.set(message.seq, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return transmit(message).then(() => echoed);
  }

  receive(message: Message): void {
    if (message.node !== this.node) return this.handlers?.invalidate(message.what);
    this.waiting.get(message.seq)?.();
    this.waiting.delete(message.seq);
  }

  /** Releases every waiting publisher (the channel is gone; nobody will echo). */
  releaseAll(): void {
    for (const wake of this.waiting.values()) wake();
    this.waiting.clear();
  }
}

/** One process, nobody else to tell. */
export function localRevocationBus(): RevocationBus {
  let handlers: Handlers | null = null;
  return {
    publish: async (what) => handlers?.invalidate(what),
    subscribe: (h) => (handlers = h),
    close: async () => undefined,
  };
}

/** Splits a large invalidation into NOTIFY-sized pieces. */
function pieces(what: Invalidation): Invalidation[] {
  const all = [...(what.keys ?? []), ...(what.grants ?? []), ...(what.subjects ?? [])];
  if (all.length <= KEYS_PER_MESSAGE) return [what];
  const out: Invalidation[] = [];
  for (const field of ['keys', 'grants', 'subjects'] as const) {
    const list = what[field] ?? [];
    for (let i = 0; i < list.length; i += KEYS_PER_MESSAGE) out.push({ [field]: list.slice(i, i + KEYS_PER_MESSAGE) });
  }
  return out;
}

/**
 * LISTEN on a connection of its own; NOTIFY through the same connection. While that connection
 * is down the cache is off (`connected(false)`): a notification missed then is never replayed.
 */
export async function postgresRevocationBus(url: string, logger: Logger): Promise<RevocationBus> {
  const echoes = new Echoes(logger);
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let queue: Promise<unknown> = Promise.resolve();

  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on('notification', (n) => {
      if (n.channel !== CHANNEL || !n.payload) return;
      try {
        echoes.receive(JSON.parse(n.payload) as Message);
      } catch (err) {
        logger.warn({ err }, 'unreadable revocation notification');
      }
    });
    const lost = (err?: Error) => {
      if (client !== c) return;
      client = null;
      echoes.handlers?.connected(false);
      echoes.releaseAll();
      if (closed) return;
      logger.warn({ err }, 'revocation listener lost its connection; token cache off until it is back');
      retry = setTimeout(() => void connect().catch(lost), 1000);
    };
    c.on('error', lost);
    c.on('end', () => lost());
    await c.connect();
    await c.query(`LISTEN ${CHANNEL}`);
    client = c;
    echoes.handlers?.connected(true);
  };
  await connect();

  return {
    publish: (what) =>
      Promise.all(
        pieces(what).map((piece) =>
          echoes.send(
            piece,
            async (message) => {
              const c = client;
              if (!c) return; // nobody hears; the other nodes' caches are off or expire by age
              // One query at a time on the connection (pg 9 refuses overlapping ones).
              const sent = queue.then(() => c.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify(message)]));
              queue = sent.catch(() => undefined);
              await sent;
            },
            client !== null,
          ),
        ),
      ).then(() => undefined),
    subscribe: (h) => {
      echoes.handlers = h;
      h.connected(client !== null);
    },
    close: async () => {
      closed = true;
      clearTimeout(retry);
      const c = client;
      client = null;
      echoes.releaseAll();
      await c?.end();
    },
  };
}

/** What cluster workers and the primary send each other. */
export const CLUSTER_MESSAGE = 'gatehouse:revoked';

/** A cluster worker's bus: the primary relays every worker's revocations to all of them. */
export function clusterRevocationBus(logger: Logger): RevocationBus {
  const echoes = new Echoes(logger);
  const onMessage = (message: unknown) => {
    const m = message as { type?: string; message?: Message };
    if (m?.type === CLUSTER_MESSAGE && m.message) echoes.receive(m.message);
  };
  process.on('message', onMessage);
  return {
    publish: (what) =>
      echoes.send(
        what,
        (message) =>
          new Promise<void>((resolve, reject) =>
            process.send!({ type: CLUSTER_MESSAGE, message }, undefined, {}, (err) => (err ? reject(err) : resolve())),
          ),
        true,
      ),
    subscribe: (h) => {
      echoes.handlers = h;
      h.connected(true);
    },
    close: async () => {
      process.off('message', onMessage);
      echoes.releaseAll();
    },
  };
}

/** In the primary: relays each worker's revocations to every worker, the sender too (its echo). */
export function relayRevocations(): void {
  cluster.on('message', (_worker, message: unknown) => {
    if ((message as { type?: string })?.type !== CLUSTER_MESSAGE) return;
    for (const w of Object.values(cluster.workers ?? {})) if (w?.isConnected()) w.send(message as object);
  });
}

/** The bus for this process: PostgreSQL, a cluster worker's IPC, or none. */
export async function openRevocationBus(opts: {
  dialect: 'sqlite' | 'postgres';
  url: string;
  logger: Logger;
}): Promise<RevocationBus> {
  if (opts.dialect === 'postgres') return postgresRevocationBus(opts.url, opts.logger);
  if (cluster.isWorker && process.send) return clusterRevocationBus(opts.logger);
  return localRevocationBus();
}
