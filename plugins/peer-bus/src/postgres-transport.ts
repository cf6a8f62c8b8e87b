import type { PluginApi } from '@gatehouse-auth/core';
import pg from 'pg';

/**
 * What the protocol hands the transport (decision 74's `PeerLink`, now this plugin's own): every
 * message goes to `receive` (its own may come back), `down()` while messages may be missed,
 * `up()` once they no longer can be.
 */
export interface TransportLink {
  readonly databaseUrl: string;
  receive(message: string): void;
  up(): void;
  down(): void;
}

const CHANNEL = 'gatehouse_peers';
/** How long between attempts to connect again after the connection was lost. */
const RETRY_MS = 1000;

/**
 * LISTEN on a connection of its own; NOTIFY through the same connection. While that connection
 * is down the protocol turns the token cache off (`link.down()`): a notification missed then is
 * never replayed. It connects again every second until a connection listens.
 */
export class PostgresTransport {
  private client: pg.Client | null = null;
  private retry: NodeJS.Timeout | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closing = false;

  constructor(private readonly logger: PluginApi['logger']) {}

  /** Connects and listens; a failure here stops start-up (the core's database is this one). */
  open(link: TransportLink): Promise<void> {
    return this.connect(link);
  }

  async send(message: string): Promise<void> {
    const c = this.client;
    if (!c) return;
    // One query at a time on the connection (pg 9 refuses overlapping ones).
    const sent = this.queue.then(() => c.query('SELECT pg_notify($1, $2)', [CHANNEL, message]));
    this.queue = sent.catch(() => undefined);
    await sent;
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.retry);
    const c = this.client;
    this.client = null;
    await c?.end();
  }

  private async connect(link: TransportLink): Promise<void> {
    // Named, so that an operator finds it in pg_stat_activity.
    const c = new pg.Client({ connectionString: link.databaseUrl, application_name: 'gatehouse-peer-bus' });
    c.on('notification', (n) => {
      if (n.channel === CHANNEL && n.payload) link.receive(n.payload);
    });
    const lost = (err?: Error) => {
      if (this.client !== c) return;
      this.client = null;
      link.down();
      if (this.closing) return;
      this.logger.warn({ err }, 'peer bus lost its connection; token cache off until it is back');
      this.reconnect(link);
    };
    c.on('error', lost);
    c.on('end', () => lost());
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
    // Closed while this attempt was under way: nobody is listening any more.
    if (this.closing) return void (await c.end().catch(() => undefined));
    this.client = c;
    link.up();
  }

  // Every second until a connection listens again: a failed attempt is not the end of trying
  // (it once was: the failure reached the lost connection's handler, which had nothing to do).
  private reconnect(link: TransportLink): void {
    this.retry = setTimeout(() => {
      this.connect(link).catch((err: unknown) => {
        if (this.closing) return;
        this.logger.debug({ err }, 'peer bus: reconnecting failed; trying again in a second');
        this.reconnect(link);
      });
    }, RETRY_MS);
  }
}
