import net from 'node:net';

/**
 * A TCP proxy to a dependency (PostgreSQL, Redis) that a test can cut (connections refused and
 * reset), blackhole (accepted, never answered: a partition) and restore.
 */
export class TcpProxy {
  private server: net.Server | null = null;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket | null }>();
  private mode: 'pass' | 'blackhole' = 'pass';
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async listen(): Promise<void> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  private accept(client: net.Socket): void {
    const pair = { client, upstream: null as net.Socket | null };
    this.pairs.add(pair);
    const drop = () => {
      client.destroy();
      pair.upstream?.destroy();
      this.pairs.delete(pair);
    };
    client.on('error', drop).on('close', drop);
    // Accepted, then silence: what a partition looks like to the server.
    if (this.mode === 'blackhole') return void client.on('data', () => undefined);
    const upstream = net.connect(this.target.port, this.target.host);
    pair.upstream = upstream;
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  }

  /** Connections refused and the open ones reset. */
  async cut(): Promise<void> {
    // close() calls back once every connection is gone: stop listening, then reset them.
    const closed = new Promise<void>((resolve) => this.server!.close(() => resolve()));
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream?.destroy();
    }
    this.pairs.clear();
    await closed;
  }

  /** Open connections go silent; new ones are accepted and never answered. */
  blackhole(): void {
    this.mode = 'blackhole';
    for (const { client, upstream } of this.pairs) {
      client.unpipe();
      upstream?.unpipe();
      client.on('data', () => undefined);
    }
  }

  /** Passes again (the silent connections are dropped, as a partition's end would find them). */
  async restore(): Promise<void> {
    this.mode = 'pass';
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream?.destroy();
    }
    this.pairs.clear();
    if (!this.server?.listening) await this.listen();
  }

  async close(): Promise<void> {
    await this.cut().catch(() => undefined);
  }
}
