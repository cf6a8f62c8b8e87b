import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BootError, type Served, type Services, type WebApi } from '@gatehouse-auth/core';
import type { Router } from 'express';
import type { Registry } from 'prom-client';

export const PLUGIN_NAME = '@gatehouse-auth/metrics-prometheus';

/** What a scrape answers: the exposition text and its content type. */
export interface MetricsSource {
  text(): Promise<string>;
  contentType: string;
}

export const METRICS_PATH = '/metrics';

/** Answers a scrape: the registry's text, or 500 with no detail if collecting failed. */
async function scrape(text: () => Promise<string>, contentType: string, res: ServerResponse): Promise<void> {
  let body: string;
  try {
    body = await text();
  } catch {
    res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
    return void res.end('metrics collection failed\n');
  }
  res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
  res.end(body);
}

/**
 * `GET /metrics` on the main port, behind the admin token (`expose: admin`). `source` is read at
 * each scrape: a cluster worker's turns into the primary's sum once it serves.
 */
export function metricsRoute(
  { web, services }: { web: Pick<WebApi, 'requireAdmin'>; services: Pick<Services, 'http'> },
  source: () => MetricsSource,
): Router {
  const router = services.http.createRouter();
  // Mounted at METRICS_PATH, not at `/`: a plugin mount is one path per plugin, and `/` is
  // compat-cidaas's (its paths are spread over the root).
  router.get('/', async (req, res) => {
    await web.requireAdmin(req);
    const current = source();
    await scrape(() => current.text(), current.contentType, res);
  });
  return router;
}

/** This server's registry as a scrape source. */
export function registrySource(registry: Registry): MetricsSource {
  return { text: () => registry.metrics(), contentType: registry.contentType };
}

/**
 * The metrics' own listener (`expose: listener`): `GET /metrics` and nothing else, on a
 * host and port apart from the public ones (loopback by default).
 */
export async function listenForMetrics(
  where: { host: string; port: number },
  source: MetricsSource,
): Promise<Served & { port: number }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== METRICS_PATH) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      return void res.end('not found\n');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
      return void res.end('method not allowed\n');
    }
    void scrape(() => source.text(), source.contentType, res);
  });
  await new Promise<void>((resolve, reject) => {
    const refused = (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new BootError(
              'CONFIG_INVALID',
              `plugin ${PLUGIN_NAME}: options.port: ${where.host}:${where.port} is already in use; stop what listens there or set another port`,
            )
          : err,
      );
    server.once('error', refused);
    server.listen(where.port, where.host, () => {
      server.off('error', refused);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    ports: { metrics: port },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
