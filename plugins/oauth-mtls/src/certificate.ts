import { createHash, X509Certificate } from 'node:crypto';
import { OAuthError } from '@gatehouse-auth/core';

/** Longer than any client certificate chain a proxy forwards: a bigger header is refused unparsed. */
const MAX_HEADER_LENGTH = 32 * 1024;

const malformed = () => new OAuthError('invalid_request', 'the forwarded client certificate is malformed');

/**
 * The certificate a TLS-terminating proxy forwarded in a header, in the shapes proxies write it:
 * URL-encoded PEM (nginx `$ssl_client_escaped_cert`, Envoy's `Cert="…"` in
 * `x-forwarded-client-cert`), plain PEM (on one line or several), or base64 DER (HAProxy
 * `ssl_c_der,base64`). Empty: no certificate. Anything else is a 400 `invalid_request`.
 */
export function parseForwardedCertificate(value: string): X509Certificate | null {
  if (value.length > MAX_HEADER_LENGTH) throw malformed();
  let text = value.trim();
  // Envoy's XFCC: `By=…;Hash=…;Cert="<URL-encoded PEM>";…`, one element per proxy; the first is the client's.
  const xfcc = /(?:^|;)Cert="([^"]*)"/i.exec(text.split(',')[0] ?? '');
  if (xfcc) text = xfcc[1]!;
  text = text.replace(/^"|"$/g, '');
  if (text === '' || text === '(null)') return null;
  if (text.includes('%')) {
    try {
      text = decodeURIComponent(text);
    } catch {
      throw malformed();
    }
  }
  const pem = /-----BEGIN CERTIFICATE-----([^-]*)-----END CERTIFICATE-----/.exec(text);
  const base64 = (pem ? pem[1]! : text).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(base64)) throw malformed();
  try {
    return new X509Certificate(
      Buffer.from(base64, base64.includes('-') || base64.includes('_') ? 'base64url' : 'base64'),
    );
  } catch {
    throw malformed();
  }
}

/** RFC 8705 §3.1: the base64url SHA-256 of the certificate's DER, the token's `cnf` `x5t#S256`. */
export const thumbprint = (certificate: X509Certificate): string =>
  createHash('sha256').update(certificate.raw).digest('base64url');
