import type { PeerBusService, PeerLink, PeerNews, PluginApi } from '@gatehouse-auth/core';
import { randomUUID } from 'node:crypto';
import cluster from 'node:cluster';
import { overCluster } from './cluster.js';
import { PostgresTransport } from './postgres-transport.js';

/** How long `publish` waits for the peers' acknowledgements before answering anyway. */
const ACK_TIMEOUT_MS = 1000;
/** Each node says it is alive this often; a node not heard of for three periods is gone. */
const HEARTBEAT_MS = 5000;
/** A transport's messages stop at 8000 bytes (NOTIFY's limit): split long lists of keys. */
const KEYS_PER_MESSAGE = 90;

export type Message =
  | { type: 'news'; node: string; seq: number; news: PeerNews }
  | { type: 'ack'; node: string; to: string; seq: number }
  | { type: 'alive' | 'bye'; node: string };

/** A broadcast channel that reaches every node; `end` closes it after the goodbye. */
export interface Channel {
  send(message: Message): Promise<void>;
  end(): Promise<void>;
}

/**
 * The protocol over any broadcast channel that reaches every node, the sender included: news,
 * acknowledgements addressed to its sender, and heartbeats that say who the peers are. The
 * `peerBus` this plugin provides; off until the core opens it (once the plugins registered) and
 * it chooses its channel: PostgreSQL's LISTEN/NOTIFY, a cluster worker's primary, or none.
 */
export class Peers implements PeerBusService {
  readonly node = randomUUID();
  /** The core's side: this node's caches. */
  private link: PeerLink | null = null;
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

  constructor(readonly logger: PluginApi['logger']) {}

  /**
   * On PostgreSQL the nodes are servers on one database (LISTEN/NOTIFY), a cluster worker of
   * SQLite talks through the primary, and a lone process has nobody to tell.
   */
  async open(link: PeerLink): Promise<void> {
    this.link = link;
    if (/^postgres/.test(link.databaseUrl))
      return overTransport(this, new PostgresTransport(this.logger), link.databaseUrl);
    if (cluster.isWorker && process.send) return overCluster(this);
    this.up();
  }

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
    this.link?.up();
  }

  /** The channel is gone: news may be missed, nobody will acknowledge. */
  down(): void {
    this.live = false;
    clearInterval(this.heartbeat);
    this.seen.clear();
    for (const w of this.waiting.values()) w.done();
    this.waiting.clear();
    this.link?.down();
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

  publish(news: PeerNews): Promise<void> {
    return Promise.all(pieces(news).map((piece) => this.publishOne(piece))).then(() => undefined);
  }

  // The core delivered it here already.
  private publishOne(news: PeerNews): Promise<void> {
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

  /** Hands news to this node's caches; resolves once those that work asynchronously are done. */
  private deliver(news: PeerNews): Promise<void> {
    return this.link ? this.link.deliver(news) : Promise.resolve();
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
 * Over PostgreSQL: the protocol writes and reads the messages (JSON), the transport only
 * carries them. While it is down the caches are off (`connected(false)`): a message missed then
 * is never replayed.
 */
async function overTransport(peers: Peers, transport: PostgresTransport, databaseUrl: string): Promise<void> {
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
