import type { BindingRequest } from '@gatehouse-auth/plugin-api';
import type { IncomingMessage } from 'node:http';

/** A request as the token binding sees it: the issuer's URL of its path (DPoP `htu`). */
export function bindingRequest(issuer: string, req: IncomingMessage & { originalUrl?: string }): BindingRequest {
  const path = (req.originalUrl ?? req.url ?? '/').split('?')[0]!;
  return { method: req.method ?? 'GET', url: issuer.replace(/\/$/, '') + path, headers: req.headers, request: req };
}
