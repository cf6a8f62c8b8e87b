import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

/** A compiled `trust proxy` setting: whether the address `addr`, `i` hops away, is a trusted proxy. */
export type TrustFunction = (addr: string, i: number) => boolean;

/** `server.trust_proxy` compiled as express compiles its `trust proxy` setting. */
export function trustFunction(setting: boolean | number | string): TrustFunction {
  if (setting === true) return () => true;
  if (typeof setting === 'number') return (_addr, i) => i < setting;
  if (typeof setting === 'string') return proxyaddr.compile(setting.split(',').map((s) => s.trim()));
  return () => false;
}

/** Whether the request's connection comes from a trusted proxy (whose headers may then be believed). */
export const fromTrustedProxy = (req: IncomingMessage, trust: TrustFunction): boolean =>
  trust(req.socket.remoteAddress ?? '', 0);

/**
 * The client's address as express's `req.ip` has it (proxy-addr), without proxy-addr's arrays
 * when there is no X-Forwarded-For to read (the address is then the socket's, trusted or not).
 */
export function clientAddress(req: IncomingMessage, trust: TrustFunction): string {
  return req.headers['x-forwarded-for'] ? proxyaddr(req, trust) : (req.socket.remoteAddress ?? '');
}
