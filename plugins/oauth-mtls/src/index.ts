import type { IncomingMessage } from 'node:http';
import { X509Certificate } from 'node:crypto';
import { definePlugin, OAuthError, z, type ClientAuthentication, type TokenBinding } from '@gatehouse-auth/core';
import { parseForwardedCertificate, thumbprint } from './certificate.js';
import { EXPECTATIONS, matches, type ExpectedCertificate } from './match.js';
import { registeredKey } from './self-signed.js';

export { parseForwardedCertificate, thumbprint } from './certificate.js';
export { matches, parseDn, type ExpectedCertificate } from './match.js';

export const mtlsOptions = z
  .strictObject({
    /**
     * The request header the TLS-terminating proxy puts the client certificate in (URL-encoded
     * PEM, PEM, or base64 DER). Believed only on connections from a trusted proxy (`server.trust_proxy`).
     */
    certificate_header: z
      .string()
      .regex(/^[A-Za-z0-9-]+$/, 'must be a header name')
      .default('x-ssl-client-cert')
      .transform((h) => h.toLowerCase()),
    /**
     * CA certificates (PEM) that must have issued a `tls_client_auth` certificate, checked here
     * as well as by the proxy: for a proxy that forwards certificates it did not verify (nginx
     * `optional_no_ca`). Empty (the default): the proxy's verification is relied on.
     */
    trusted_ca_certificates: z.array(z.string().includes('-----BEGIN CERTIFICATE-----')).default([]),
  })
  .default({ certificate_header: 'x-ssl-client-cert', trusted_ca_certificates: [] });

export type MtlsOptions = z.infer<typeof mtlsOptions>;

const optionalString = z.string().min(1).max(1024).optional();

/**
 * The app settings (RFC 8705 §2.1.2, §3.4): what its certificate must name for `tls_client_auth`
 * (exactly one), and whether its tokens must be certificate-bound.
 */
export const mtlsAppConfig = {
  tls_client_auth_subject_dn: optionalString,
  tls_client_auth_san_dns: optionalString,
  tls_client_auth_san_uri: optionalString,
  tls_client_auth_san_ip: z.ipv4().or(z.ipv6()).optional(),
  tls_client_auth_san_email: optionalString,
  tls_client_certificate_bound_access_tokens: z.boolean().default(false),
};

/**
 * @gatehouse-auth/oauth-mtls: OAuth 2.0 Mutual-TLS (RFC 8705) behind a TLS-terminating proxy
 * that forwards the client's certificate in a header. `tls_client_auth` client authentication
 * (§2.1) and certificate-bound tokens (§3, `cnf.x5t#S256`), checked at userinfo and on a public
 * client's refresh (docs/decisions/0052).
 *
 * @example
 * server: { trust_proxy: 'loopback' }
 * plugins:
 *   - name: '@gatehouse-auth/oauth-mtls'
 *     options: { certificate_header: x-ssl-client-cert }
 * apps:
 *   - client_id: payments
 *     token_endpoint_auth_method: tls_client_auth
 *     tls_client_auth_subject_dn: 'CN=payments,O=Example,C=DE'
 *     tls_client_certificate_bound_access_tokens: true
 */
export default definePlugin({
  name: '@gatehouse-auth/oauth-mtls',
  apiVersion: '^1.3',
  options: mtlsOptions,
  appConfig: mtlsAppConfig,
  register(api, options) {
    const header = options.certificate_header;
    const cas = options.trusted_ca_certificates.map((pem, i) => {
      try {
        return new X509Certificate(pem);
      } catch {
        throw new Error(`options.trusted_ca_certificates[${i}] is not a PEM certificate`);
      }
    });
    const trustedIssuer = (certificate: X509Certificate) =>
      cas.some((ca) => certificate.checkIssued(ca) && certificate.verify(ca.publicKey));
    const read = new WeakMap<IncomingMessage, X509Certificate | null>();

    /** The request's client certificate: only a trusted proxy's header counts; anyone else's is ignored. */
    const certificateOf = (req: IncomingMessage): X509Certificate | null => {
      if (read.has(req)) return read.get(req)!;
      const value = req.headers[header];
      let certificate: X509Certificate | null = null;
      if (value !== undefined && !api.web.fromTrustedProxy(req)) {
        api.logger.warn(
          { peer: req.socket.remoteAddress, header },
          'client certificate header from an untrusted address ignored',
        );
      } else if (Array.isArray(value)) {
        throw new OAuthError('invalid_request', `more than one ${header} header`);
      } else if (value !== undefined) {
        certificate = parseForwardedCertificate(value);
      }
      read.set(req, certificate);
      return certificate;
    };

    /** The request's certificate if it is valid now; else why not. */
    const presented = (req: IncomingMessage, method: string): X509Certificate | string => {
      const certificate = certificateOf(req);
      if (!certificate) return `${method} needs a client certificate`;
      const now = api.services.clock.now().getTime();
      if (now < Date.parse(certificate.validFrom) || now > Date.parse(certificate.validTo))
        return 'the client certificate is not valid now';
      return certificate;
    };

    const clientAuth: ClientAuthentication = {
      method: 'tls_client_auth',
      async authenticate(req, client) {
        // The proxy checked the chain (PKI), and the plugin too with trusted_ca_certificates.
        const certificate = presented(req, 'tls_client_auth');
        if (typeof certificate === 'string') return certificate;
        if (cas.length > 0 && !trustedIssuer(certificate))
          return 'the client certificate is not issued by a trusted CA (trusted_ca_certificates)';
        const expected: ExpectedCertificate = {};
        for (const key of EXPECTATIONS) {
          const value = client.settings[key];
          if (typeof value === 'string') expected[key] = value;
        }
        return matches(certificate, expected);
      },
    };

    const binding: TokenBinding = {
      confirmation: 'x5t#S256',
      algorithms: [],
      async tokenRequest(req) {
        const certificate = certificateOf(req.request);
        if (certificate) return { value: thumbprint(certificate) };
        if (req.client.settings.tls_client_certificate_bound_access_tokens === true) {
          throw new OAuthError(
            'invalid_request',
            'this app must present a client certificate (tls_client_certificate_bound_access_tokens)',
          );
        }
        return null;
      },
      async resourceRequest(req) {
        const certificate = certificateOf(req.request);
        return certificate ? thumbprint(certificate) : null;
      },
    };

    const selfSigned: ClientAuthentication = {
      method: 'self_signed_tls_client_auth',
      async authenticate(req, client) {
        // RFC 8705 §2.2: no chain; the certificate's key must be one the app registered.
        const certificate = presented(req, 'self_signed_tls_client_auth');
        if (typeof certificate === 'string') return certificate;
        const keys = api.web.clientKeys(client);
        if (keys && (await registeredKey(certificate, keys))) return true;
        return "the client certificate's key is not one of the app's keys (jwks)";
      },
    };

    api.clientAuthentication(clientAuth);
    api.clientAuthentication(selfSigned);
    api.tokenBinding(binding);
    api.discovery({ tls_client_certificate_bound_access_tokens: true });
  },
});
