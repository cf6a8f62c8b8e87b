/**
 * A TLS-terminating proxy as nginx with `ssl_verify_client optional` runs it: asks for a client
 * certificate, refuses one the CA did not sign (400), and forwards the request over HTTP with
 * the verified certificate URL-encoded in `X-SSL-Client-Cert` (nginx `$ssl_client_escaped_cert`),
 * replacing any such header the client sent. Its connections to Gatehouse come from `localAddress`.
 * With `noCa` it forwards any certificate unverified (nginx `optional_no_ca`).
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Issued } from './pki.js';

export interface Proxy {
  url: string;
  close(): Promise<void>;
}

export async function startProxy(opts: {
  server: Issued;
  ca: string;
  /** Gatehouse's address. */
  target: { host: string; port: number };
  /** The address the proxy connects from (the one Gatehouse's `trust_proxy` names). */
  localAddress: string;
  /** As nginx's `ssl_verify_client optional_no_ca`: any certificate is forwarded, verified or not. */
  noCa?: boolean;
}): Promise<Proxy> {
  const proxy = https.createServer(
    { cert: opts.server.cert, key: opts.server.key, ca: opts.ca, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerCertificate();
      const hasCert = peer && Object.keys(peer).length > 0;
      if (hasCert && !socket.authorized && !opts.noCa) {
        res.writeHead(400, { 'Content-Type': 'text/plain' }).end('The SSL certificate error');
        return;
      }
      const headers = { ...req.headers };
      delete headers['x-ssl-client-cert'];
      if (hasCert) {
        const pem = `-----BEGIN CERTIFICATE-----\n${peer.raw.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END CERTIFICATE-----\n`;
        headers['x-ssl-client-cert'] = encodeURIComponent(pem);
      }
      headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
      headers['x-forwarded-proto'] = 'https';
      const upstream = http.request(
        { ...opts.target, localAddress: opts.localAddress, method: req.method, path: req.url, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    },
  );
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

/** A `fetch` over node:https that trusts `ca` and presents `client` (if given), as a client with mTLS would. */
export function mtlsFetch(ca: string, client?: Issued) {
  return (url: string | URL, init: { method?: string; headers?: unknown; body?: unknown } = {}): Promise<Response> =>
    new Promise((resolve, reject) => {
      const headers = new Headers(init.headers as ConstructorParameters<typeof Headers>[0]);
      const body =
        init.body === undefined || init.body === null
          ? undefined
          : init.body instanceof URLSearchParams
            ? init.body.toString()
            : String(init.body);
      if (init.body instanceof URLSearchParams && !headers.has('content-type'))
        headers.set('content-type', 'application/x-www-form-urlencoded');
      const req = https.request(
        url,
        {
          method: init.method ?? 'GET',
          headers: Object.fromEntries(headers),
          ca,
          ...(client ? { cert: client.cert, key: client.key } : {}),
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const out = new Headers();
            for (const [k, v] of Object.entries(res.headers)) {
              if (Array.isArray(v)) v.forEach((x) => out.append(k, x));
              else if (v !== undefined) out.set(k, v);
            }
            const status = res.statusCode ?? 500;
            const noBody = status === 204 || status === 304;
            resolve(new Response(noBody ? null : Buffer.concat(chunks), { status, headers: out }));
          });
        },
      );
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
}
