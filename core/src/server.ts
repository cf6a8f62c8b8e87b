import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Gatehouse } from './gatehouse.js';
import { capHeapGrowth } from './heap-growth.js';
import { InFlightHandlers } from './http/in-flight.js';
import { isClusterWorker } from './observability/metrics.js';
import type { StartedTogether } from './plugins/serve.js';

export interface RunningServer {
  server: http.Server;
  port: number;
  /** The ports of the listeners plugins opened (`api.serve`), by name: `{ metrics: 9464 }`. */
  listeners: Readonly<Record<string, number>>;
  /**
   * Stops accepting, lets in-flight requests finish (cutting their connections after
   * server.shutdown_timeout_ms), waits for handlers still running, then closes the database.
   */
  shutdown(): Promise<void>;
}

/** Listens with the config's host, port and optional TLS. */
export async function listen(gatehouse: Gatehouse): Promise<RunningServer> {
  const { server: cfg } = gatehouse.config;
  // A GC setting V8 reads at every full collection; one runs now so it holds from the start
  // (decisions 55 and 60).
  capHeapGrowth(cfg.heap_growth_percent);
  // Slow clients (a header a minute, a body at one byte a second) must not hold sockets.
  const limits: http.ServerOptions = {
    headersTimeout: cfg.headers_timeout_ms,
    requestTimeout: Math.max(cfg.request_timeout_ms, cfg.headers_timeout_ms),
    // How often node looks for connections past those limits (its default is 30 s).
    connectionsCheckingInterval: Math.min(1000, cfg.headers_timeout_ms),
  };
  const server = cfg.tls
    ? https.createServer({ ...limits, cert: readFileSync(cfg.tls.cert), key: readFileSync(cfg.tls.key) }, gatehouse.app)
    : http.createServer(limits, gatehouse.app);
  // Rejects with the listen error (EADDRINUSE, EACCES) instead of emitting it.
  await once(server.listen(cfg.port, cfg.host), 'listening');
  const port = (server.address() as AddressInfo).port;
  // What plugins run while the server serves (a listener of their own), once the port is ours.
  let served: StartedTogether;
  try {
    served = await gatehouse.serve({ host: cfg.host, port, worker: isClusterWorker() });
  } catch (err) {
    server.close();
    throw err;
  }
  let closing: Promise<void> | undefined;
  const handlers = new InFlightHandlers();
  // While draining, a keep-alive connection that just finished its response is closed at
  // once instead of idling until keepAliveTimeout.
  server.on('request', (_req, res: http.ServerResponse) => {
    handlers.track(res);
    if (closing) res.setHeader('Connection', 'close');
    res.on('finish', () => {
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
  });
  const shutdown = () =>
    (closing ??= (async () => {
      gatehouse.beginShutdown();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), cfg.shutdown_timeout_ms);
      await closed;
      clearTimeout(timer);
      // Handlers whose connection was cut still run (queued hashing, then their writes): the
      // database stays open for them, up to server.shutdown_settle_ms.
      if (!(await handlers.settled(cfg.shutdown_settle_ms))) {
        gatehouse.logger.warn({ running: handlers.size }, 'closing the database with request handlers still running');
      }
      await served.close();
      await gatehouse.close();
    })());
  return { server, port, listeners: served.ports, shutdown };
}
