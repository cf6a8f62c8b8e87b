import type { PeerTransport } from '@gatehouse-auth/plugin-api';
import { randomUUID } from 'node:crypto';
import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { BootError } from './errors.js';
import type { Invalidation } from './oauth/token-cache.js';

/** What one node tells the others. */
export interface PeerNews {
  /** Tokens revoked: drop them from the token cache. */
  revoked?: Invalidation;
  /** Client authentication blocks (client id and address, until epoch ms). */
  blocked?: { key: string; until: number }[];
  /** Apps stored in the database changed: load them again (decision 0051). */
  clients?: boolean;
}

/**
 * Carries news every node must hear at once — revocations for the token caches, client blocks
 * (docs/decisions/0029): a plugin's `peerTransport` between servers on one PostgreSQL database
 * (decision 74), IPC through the primary between the cluster workers of one SQLite file,
 * nothing for a lone process.
 */
export interface PeerBus {
  /**
   * Delivers `news` here at once and to every other node; resolves once every live peer has
   * acknowledged it (or after ACK_TIMEOUT_MS, with a warning), so a revocation is answered only
   * after the other nodes have dropped what it revokes.
   */
  publish(news: PeerNews): Promise<void>;
  /**
   * `receive` for every piece of news, here or elsewhere; `connected(false)` while news from
   * peers may be missed (and `connected(true)` once it no longer can be).
   */
  subscribe(listener: PeerListener): void;
  close(): Promise<void>;
}

export interface PeerListener {
  /**
   * A listener that returns a promise (the database apps' reload, decision 51) is waited for
   * before this node acknowledges the news, so `publish` resolves once peers applied it.
   */
  receive(news: PeerNews): void | Promise<void>;
  connected(up: boolean): void;
}

/** How long `publish` waits for the peers' acknowledgements before answering anyway. */
const ACK_TIMEOUT_MS = 1000;
/** Each node says it is alive this often; a node not heard of for three periods is gone. */
const HEARTBEAT_MS = 5000;
/** A transport's messages stop at 8000 bytes (NOTIFY's limit): split long lists of keys. */
const KEYS_PER_MESSAGE = 90;

type Message =
  | { type: 'news'; node: string; seq: number; news: PeerNews }
  | { type: 'ack'; node: string; to: string; seq: number }
  | { type: 'alive' | 'bye'; node: string };

/** A broadcast channel that reaches every node; `end` closes it after the goodbye. */
interface Channel {
  send(message: Message): Promise<void>;
  end(): Promise<void>;
}

/**
 * The protocol over any broadcast channel that reaches every node, the sender included: news,
 * acknowledgements addressed to its sender, and heartbeats that say who the peers are. Made
 * before the container (its listeners subscribe there) and off until `openPeerBus` gives it its
 * channel, once the plugins registered (a transport is a plugin's).
 */
export class Peers implements PeerBus {
  readonly node = randomUUID();
  readonly listeners: PeerListener[] = [];
  private seq = 0;
  /** Peers by id, with when they were last heard of (epoch ms). */
  private readonly seen = new Map<string, number>();
  /** Publications waiting for acknowledgements: seq → peers still to answer. */
  private readonly waiting = new Map<number, { missing: Set<string>; done: () => void }>();
  private heartbeat: NodeJS.Timeout | undefined;
  private live = false;
  /** Set once `close` starts: a channel lost from then on is not connected again. */
  closing = false;
  /** None until opened, and none for a lone process: nobody else to tell. */
  private channel: Channel | null = null;

  constructor(readonly logger: Logger) {}

  attach(channel: Channel): void {
    this.channel = channel;
  }

  /** The channel works (again): say hello, and from now on say so every HEARTBEAT_MS. */
  up(): void {
    if (this.closing) return;
    this.live = true;
    clearInterval(this.heartbeat);
    if (this.channel) {
      this.emit({ type: 'alive', node: this.node });
      this.heartbeat = setInterval(() => this.emit({ type: 'alive', node: this.node }), HEARTBEAT_MS);
      this.heartbeat.unref();
    }
    for (const l of this.listeners) l.connected(true);
  }

  /** The channel is gone: news may be missed, nobody will acknowledge. */
  down(): void {
    this.live = false;
    clearInterval(this.heartbeat);
    this.seen.clear();
    for (const w of this.waiting.values()) w.done();
    this.waiting.clear();
    for (const l of this.listeners) l.connected(false);
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.live) await this.transmit({ type: 'bye', node: this.node }).catch(() => undefined);
    this.down();
    await this.channel?.end();
  }

  private transmit(message: Message): Promise<void> {
    return this.channel ? this.channel.send(message) : Promise.resolve();
  }

  subscribe(listener: PeerListener): void {
    this.listeners.push(listener);
    listener.connected(this.live);
  }

  publish(news: PeerNews): Promise<void> {
    return Promise.all(pieces(news).map((piece) => this.publishOne(piece))).then(() => undefined);
  }

  private publishOne(news: PeerNews): Promise<void> {
    void this.deliver(news);
    if (!this.live) return Promise.resolve(); // peers' caches are off or expire by age
    const seq = ++this.seq;
    const missing = new Set(this.livePeers());
    const acked = missing.size
      ? new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            this.waiting.delete(seq);
            this.logger.warn({ peers: missing.size }, 'peers did not acknowledge in time; they may see it late');
            resolve();
          }, ACK_TIMEOUT_MS);
          this.waiting.set(seq, {
            missing,
            done: () => {
              clearTimeout(timer);
              resolve();
            },
          });
        })
      : Promise.resolve();
    return this.transmit({ type: 'news', node: this.node, seq, news }).then(() => acked);
  }

  /** Every message the channel brings, this node's own included. */
  receive(message: Message): void {
    if (message.node === this.node) return;
    if (message.type === 'bye') {
      this.seen.delete(message.node);
      for (const [seq, w] of this.waiting) this.answered(seq, w, message.node);
      return;
    }
    const firstContact = !this.seen.has(message.node);
    this.seen.set(message.node, Date.now());
    // A newcomer learns of this node at once rather than at the next heartbeat.
    if (firstContact && message.type === 'alive') this.emit({ type: 'alive', node: this.node });
    if (message.type === 'news') {
      const ack = () => this.emit({ type: 'ack', node: this.node, to: message.node, seq: message.seq });
      void this.deliver(message.news).then(ack, ack);
    } else if (message.type === 'ack' && message.to === this.node) {
      const w = this.waiting.get(message.seq);
      if (w) this.answered(message.seq, w, message.node);
    }
  }

  private answered(seq: number, w: { missing: Set<string>; done: () => void }, peer: string): void {
    w.missing.delete(peer);
    if (w.missing.size > 0) return;
    this.waiting.delete(seq);
    w.done();
  }

  private livePeers(): string[] {
    const cutoff = Date.now() - 3 * HEARTBEAT_MS;
    for (const [id, at] of this.seen) if (at < cutoff) this.seen.delete(id);
    return [...this.seen.keys()];
  }

  /** Hands news to every listener; resolves once those that work asynchronously are done. */
  private deliver(news: PeerNews): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const l of this.listeners) {
      const done = l.receive(news);
      if (done) pending.push(done.catch(() => undefined));
    }
    return Promise.all(pending).then(() => undefined);
  }

  private emit(message: Message): void {
    this.transmit(message).catch((err: unknown) => this.logger.warn({ err }, 'peer bus: a message was not sent'));
  }
}

/** Splits long lists into NOTIFY-sized pieces. */
function pieces(news: PeerNews): PeerNews[] {
  const revoked = news.revoked ?? {};
  const blocked = news.blocked ?? [];
  const size = (revoked.keys?.length ?? 0) + (revoked.grants?.length ?? 0) + (revoked.subjects?.length ?? 0);
  if (size + blocked.length <= KEYS_PER_MESSAGE) return [news];
  // A reload of the apps goes with the first piece: splitting must not drop it.
  const out: PeerNews[] = news.clients ? [{ clients: true }] : [];
  for (const field of ['keys', 'grants', 'subjects'] as const) {
    const list = revoked[field] ?? [];
    for (let i = 0; i < list.length; i += KEYS_PER_MESSAGE)
      out.push({ revoked: { [field]: list.slice(i, i + KEYS_PER_MESSAGE) } });
  }
  for (let i = 0; i < blocked.length; i += KEYS_PER_MESSAGE)
    out.push({ blocked: blocked.slice(i, i + KEYS_PER_MESSAGE) });
  return out;
}

/**
 * Over a plugin's transport: the core writes and reads the messages (JSON), the transport only
 * carries them. While it is down the caches are off (`connected(false)`): a message missed then
 * is never replayed.
 */
async function overTransport(peers: Peers, transport: PeerTransport, databaseUrl: string): Promise<void> {
  peers.attach({ send: (message) => transport.send(JSON.stringify(message)), end: () => transport.close() });
  await transport.open({
    databaseUrl,
    receive: (raw) => {
      let message: Message | null = null;
      try {
        message = JSON.parse(raw) as Message | null;
      } catch (err) {
        peers.logger.warn({ err }, 'peer bus: unreadable message');
      }
      if (typeof message?.node === 'string') peers.receive(message);
    },
    up: () => peers.up(),
    down: () => peers.down(),
  });
}

/** What cluster workers and the primary send each other. */
export const CLUSTER_MESSAGE = 'gatehouse:peer-news';

/** A cluster worker's channel: the primary relays every worker's messages to all of them. */
function overCluster(peers: Peers): void {
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
export function relayPeerNews(): void {
  const nodeOf = new Map<number, string>();
  const broadcast = (message: object) => {
    // A worker may be going away meanwhile: its closed channel is no error of the primary's.
    for (const w of Object.values(cluster.workers ?? {}))
      if (w?.isConnected()) w.send(message, undefined, undefined, () => undefined);
  };
  cluster.on('message', (worker, raw: unknown) => {
    const m = raw as { type?: string; message?: Message };
    if (m?.type !== CLUSTER_MESSAGE || !m.message) return;
    nodeOf.set(worker.id, m.message.node);
    broadcast(m);
  });
  cluster.on('exit', (worker) => {
    const node = nodeOf.get(worker.id);
    nodeOf.delete(worker.id);
    if (node) broadcast({ type: CLUSTER_MESSAGE, message: { type: 'bye', node } });
  });
}

/**
 * Without a transport, a PostgreSQL node would never hear of what the others revoke or block,
 * and would serve tokens from its cache that another node revoked: start-up stops instead.
 */
export const NO_PEER_TRANSPORT =
  'database.url: several nodes on PostgreSQL tell each other of revoked tokens through the plugin @gatehouse-auth/peer-bus-postgres; list it under plugins:';

/**
 * Gives the bus its channel, once the plugins registered and before the first request:
 * PostgreSQL needs a plugin's `peerTransport` (none stops start-up), a cluster worker of SQLite
 * talks through the primary, and a lone process has nobody to tell (a transport is unused there).
 */
export async function openPeerBus(
  peers: Peers,
  opts: { dialect: 'sqlite' | 'postgres'; url: string; transport: PeerTransport | undefined },
): Promise<void> {
  if (opts.dialect === 'postgres') {
    if (!opts.transport) throw new BootError('CONFIG_INVALID', NO_PEER_TRANSPORT);
    return overTransport(peers, opts.transport, opts.url);
  }
  if (cluster.isWorker && process.send) return overCluster(peers);
  peers.up();
}
