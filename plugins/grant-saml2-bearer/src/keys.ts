import { X509Certificate, type KeyObject } from 'node:crypto';
import { z, type OAuthClient } from '@gatehouse-auth/core';

/** A bare base64 DER body (pasted without the PEM armour) is wrapped into PEM. */
function toPem(certificate: string): string {
  const text = certificate.trim();
  if (text.startsWith('-----BEGIN')) return text;
  const body = text.replace(/\s+/g, '');
  return `-----BEGIN CERTIFICATE-----\n${body.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
}

/** Whether text is an X.509 certificate (PEM, or its bare base64 body). */
function isCertificate(text: string): boolean {
  try {
    new X509Certificate(toPem(text));
    return true;
  } catch {
    return false;
  }
}

/**
 * `apps[i].saml_issuers`: the SAML 2.0 IdPs an app trusts, issuer and certificate (a key this
 * plugin adds to apps). A certificate that does not parse stops start-up, naming the key.
 */
export const samlIssuersConfig = z
  .array(
    z.strictObject({
      issuer: z.string().min(1),
      certificate: z.string().min(1).refine(isCertificate, 'must be an X.509 certificate (PEM)'),
    }),
  )
  .default([]);

export type SamlIssuer = z.output<typeof samlIssuersConfig>[number];

/** The client's trusted SAML issuers (none when its app names none). */
export function samlIssuersOf(client: OAuthClient): SamlIssuer[] {
  return (client.settings.saml_issuers as SamlIssuer[] | undefined) ?? [];
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
    return samlIssuersOf(client)
      .filter((entry) => entry.issuer === issuer)
      .map((entry) => this.key(entry.certificate));
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
