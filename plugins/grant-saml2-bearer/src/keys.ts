import { X509Certificate, type KeyObject } from 'node:crypto';
import type { OAuthClient } from '@gatehouse-auth/core';

/** A bare base64 DER body (pasted without the PEM armour) is wrapped into PEM. */
function toPem(certificate: string): string {
  const text = certificate.trim();
  if (text.startsWith('-----BEGIN')) return text;
  const body = text.replace(/\s+/g, '');
  return `-----BEGIN CERTIFICATE-----\n${body.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
}

/**
 * The public keys of the clients' configured SAML issuers, parsed once per certificate. Only an
 * X.509 certificate is accepted (a pasted private key or bare public key is a configuration
 * error and throws, a fault rather than a client error).
 */
export class IssuerKeys {
  private readonly cache = new Map<string, KeyObject>();

  /** Keys configured on `client` for `issuer` (several during a certificate rollover). */
  keysFor(client: OAuthClient, issuer: string): KeyObject[] {
    return client.samlIssuers.filter((entry) => entry.issuer === issuer).map((entry) => this.key(entry.certificate));
  }

  private key(certificate: string): KeyObject {
    let key = this.cache.get(certificate);
    if (!key) {
      try {
        key = new X509Certificate(toPem(certificate)).publicKey;
      } catch (err) {
        throw new Error('saml_issuers: a certificate is not a valid X.509 certificate', { cause: err });
      }
      this.cache.set(certificate, key);
    }
    return key;
  }
}
