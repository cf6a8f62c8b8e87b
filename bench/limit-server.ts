/**
 * The physical limit of a token request on this machine: a plain node:http server, in its own
 * process like the others, that reads the request body and answers a fixed token response with
 * the headers Gatehouse's token endpoint sends (Cache-Control, Pragma, X-Request-Id, JSON). It
 * does nothing else: no parsing, no authentication, no storage, no signature. What Gatehouse
 * spends above it per request is what Gatehouse itself does. Reports `{ type: 'ready', port,
 * issuer }` over IPC, like gatehouse-server.ts.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { freePort } from './lib/ports.js';
import { recordServerLatency } from './lib/server-latency.js';

process.setSourceMapsEnabled(false);

if (!process.send) {
  console.error('limit-server: start me from bench/run.ts (needs an IPC channel)');
  process.exit(2);
}

// The size of Gatehouse's answer to b (an opaque token of 43 characters).
const body = JSON.stringify({
  access_token: 'x'.repeat(43),
  token_type: 'bearer',
  expires_in: 3600,
  issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
  scope: 'api:read',
});
const length = Buffer.byteLength(body);

const server = http.createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(200, {
      'X-Request-Id': randomUUID(),
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': length,
    });
    res.end(body);
  });
});
// --server-latency only: the generator's share of the tail, against a server that does nothing.
recordServerLatency(server);
const port = await freePort();
await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
process.on('message', (message: { type?: string }) => {
  if (message?.type === 'stop') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready', port, issuer: `http://127.0.0.1:${port}` });
