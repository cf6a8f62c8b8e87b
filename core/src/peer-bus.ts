import type { PeerBusService, PeerNews } from '@gatehouse-auth/plugin-api';
import { BootError } from './errors.js';

export type { PeerNews } from '@gatehouse-auth/plugin-api';

/**
 * Carries news every node must hear at once — revocations for the token caches, client blocks
 * (docs/decisions/0029), reloads of the stored apps (0051): to this node's listeners, and through
 * a plugin's `peerBus` to the other nodes (decision 87: `@gatehouse-auth/peer-bus`
 * between servers on one PostgreSQL database, and between the cluster workers of one primary);
 * nothing more for a lone process.
 */
export interface PeerBus {
  /**
   * Delivers `news` here at once and to every other node; resolves once every live peer has
   * acknowledged it (or after the provider's timeout, with a warning), so a revocation is
   * answered only after the other nodes have dropped what it revokes.
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

/**
 * Without a provided bus, a PostgreSQL node would never hear of what the others revoke or block,
 * and would serve tokens from its cache that another node revoked: start-up stops instead.
 */
export const NO_PEER_BUS =
  'database.url: several nodes on PostgreSQL tell each other of revoked tokens through the plugin @gatehouse-auth/peer-bus; list it under plugins:';

/** Likewise for the workers of `server.workers` (0 is one per CPU), whatever the database. */
export const NO_PEER_BUS_WORKERS =
  'server.workers: the workers of a cluster tell each other of revoked tokens through the plugin @gatehouse-auth/peer-bus (through their primary on SQLite); list it under plugins:';

/**
 * This node's bus: its listeners, and a plugin's bus to the other nodes once opened. Made before
 * the container (its listeners subscribe there) and off (`connected(false)`: caches off) until
 * `open`, once the plugins registered (the bus to the others is a plugin's).
 */
export class Peers implements PeerBus {
  private readonly listeners: PeerListener[] = [];
  private live = false;
  /** None until opened, and none for a lone process: nobody else to tell. */
  private others: PeerBusService | null = null;

  subscribe(listener: PeerListener): void {
    this.listeners.push(listener);
    listener.connected(this.live);
  }

  publish(news: PeerNews): Promise<void> {
    void this.deliver(news);
    return this.others ? this.others.publish(news) : Promise.resolve();
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

  private connected(up: boolean): void {
    this.live = up;
    for (const l of this.listeners) l.connected(up);
  }

  /**
   * Once the plugins registered and before the first request: a lone process is up at once; on
   * PostgreSQL and in a cluster the news must reach the other nodes, so a provided bus is required
   * (none stops start-up) and opened.
   */
  async open(others: PeerBusService | undefined, opts: { url: string; workers: number }): Promise<void> {
    if (!others) {
      if (/^postgres/.test(opts.url)) throw new BootError('CONFIG_INVALID', NO_PEER_BUS);
      if (opts.workers !== 1) throw new BootError('CONFIG_INVALID', NO_PEER_BUS_WORKERS);
      return this.connected(true);
    }
    this.others = others;
    await others.open({
      databaseUrl: opts.url,
      deliver: (news) => this.deliver(news),
      up: () => this.connected(true),
      down: () => this.connected(false),
    });
  }

  async close(): Promise<void> {
    await this.others?.close();
    this.connected(false);
  }
}
