import net from 'node:net';
import tls from 'node:tls';

/**
 * Resolves once the endpoint's host accepts a connection, and for https completes a verified TLS
 * handshake (an expired certificate shows here before a code fails to go out). Nothing is sent:
 * a provider sees no request.
 */
export function reachable(url: URL, timeoutMs: number): Promise<void> {
  const https = url.protocol === 'https:';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port) || (https ? 443 : 80);
  return new Promise((resolve, reject) => {
    const socket = https
      ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }) })
      : net.connect({ host, port });
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    socket.once(https ? 'secureConnect' : 'connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      socket.destroy(); // a failed TLS handshake leaves the connection open otherwise
      // The code says it best (ECONNREFUSED, CERT_HAS_EXPIRED, ERR_SSL_WRONG_VERSION_NUMBER).
      reject(new Error(`${url.host}: ${err.code ?? err.message}`));
    });
  });
}
