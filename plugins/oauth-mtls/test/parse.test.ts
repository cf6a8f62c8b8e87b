/**
 * The forwarded certificate in each shape proxies write it, and RFC 8705 §2.1.2 matching of the
 * subject DN and SANs, on certificates made by openssl.
 */
import { X509Certificate } from 'node:crypto';
import { expect } from 'chai';
import { OAuthError, parseConfig } from '@gatehouse-auth/core';
import { matches, parseDn, parseForwardedCertificate, thumbprint } from '../src/index.js';
import { makePki, type Pki } from './pki.js';

describe('@gatehouse-auth/oauth-mtls: the forwarded certificate and its match', function () {
  this.timeout(20_000);
  let pki: Pki;
  let pem: string;
  let der: Buffer;
  let cert: X509Certificate;

  before(function () {
    pki = makePki();
    pem = pki.client(
      '/C=DE/O=Example Beispiel/OU=Treasury, Europe/CN=Zoë',
      'DNS:pay.example.test,URI:https://pay.example.test/client,IP:2001:db8::1,email:ops@example.test',
    ).cert;
    cert = new X509Certificate(pem);
    der = cert.raw;
  });
  after(() => pki.remove());

  const same = (parsed: X509Certificate | null) => expect(parsed && thumbprint(parsed)).to.equal(thumbprint(cert));

  it('reads URL-encoded PEM (nginx), PEM on one line or several, base64 DER (HAProxy, quoted or not), Envoy XFCC', function () {
    same(parseForwardedCertificate(encodeURIComponent(pem)));
    same(parseForwardedCertificate(pem));
    same(parseForwardedCertificate(pem.replace(/\n/g, ' ')));
    same(parseForwardedCertificate(der.toString('base64')));
    same(parseForwardedCertificate(`"${der.toString('base64')}"`));
    same(parseForwardedCertificate(`By=spiffe://gatehouse;Hash=abc;Cert="${encodeURIComponent(pem)}";Subject="CN=x"`));
  });

  it('an empty header is no certificate; garbage is 400 invalid_request', function () {
    expect(parseForwardedCertificate('')).to.equal(null);
    expect(parseForwardedCertificate('(null)')).to.equal(null);
    for (const bad of ['not a certificate', 'QUJD', '%E0%A4%A', 'x'.repeat(40_000)]) {
      let thrown: unknown = null;
      try {
        parseForwardedCertificate(bad);
      } catch (err) {
        thrown = err;
      }
      expect(thrown, bad.slice(0, 20)).to.be.instanceOf(OAuthError);
      expect((thrown as OAuthError).code).to.equal('invalid_request');
      expect((thrown as OAuthError).status).to.equal(400);
    }
  });

  it('the thumbprint is the base64url SHA-256 of the DER (RFC 8705 §3.1)', async function () {
    const digest = Buffer.from(await crypto.subtle.digest('SHA-256', der)).toString('base64url');
    expect(thumbprint(cert)).to.equal(digest);
  });

  it('subject DN: RFC 4514 order, escapes, types in any case; another order or value does not match', function () {
    expect(
      matches(cert, { tls_client_auth_subject_dn: 'CN=Zoë,OU=Treasury\\, Europe,O=Example Beispiel,C=DE' }),
    ).to.equal(true);
    expect(
      matches(cert, { tls_client_auth_subject_dn: 'cn=Zo\\C3\\AB, ou=Treasury\\, Europe, o=Example Beispiel, c=DE' }),
    ).to.equal(true);
    expect(
      matches(cert, { tls_client_auth_subject_dn: 'C=DE,O=Example Beispiel,OU=Treasury\\, Europe,CN=Zoë' }),
    ).to.equal('the client certificate does not match tls_client_auth_subject_dn');
    expect(
      matches(cert, { tls_client_auth_subject_dn: 'CN=Zoe,OU=Treasury\\, Europe,O=Example Beispiel,C=DE' }),
    ).to.be.a('string');
    expect(parseDn('CN=a\\,b,O=c')).to.deep.equal([
      ['cn', 'a,b'],
      ['o', 'c'],
    ]);
  });

  it('SANs: DNS (any case), URI, IP (as an address), email; others do not match', function () {
    expect(matches(cert, { tls_client_auth_san_dns: 'PAY.example.test' })).to.equal(true);
    expect(matches(cert, { tls_client_auth_san_dns: 'example.test' })).to.be.a('string');
    expect(matches(cert, { tls_client_auth_san_uri: 'https://pay.example.test/client' })).to.equal(true);
    expect(matches(cert, { tls_client_auth_san_uri: 'https://pay.example.test/' })).to.be.a('string');
    expect(matches(cert, { tls_client_auth_san_ip: '2001:0db8:0:0:0:0:0:1' })).to.equal(true);
    expect(matches(cert, { tls_client_auth_san_ip: '2001:db8::2' })).to.be.a('string');
    expect(matches(cert, { tls_client_auth_san_email: 'ops@example.test' })).to.equal(true);
    expect(matches(cert, { tls_client_auth_san_email: 'dev@example.test' })).to.be.a('string');
  });

  it('an app must name exactly one expectation', function () {
    expect(matches(cert, {})).to.match(/names 0 of/);
    expect(
      matches(cert, { tls_client_auth_san_dns: 'pay.example.test', tls_client_auth_san_email: 'ops@example.test' }),
    ).to.match(/names 2 of/);
  });

  it('config: a tls_client_auth app with a secret, a self_signed_tls_client_auth app without keys stop start-up', function () {
    const config = (app: Record<string, unknown>) => () =>
      parseConfig(
        {
          issuer: 'https://id.example.test',
          database: { url: 'sqlite::memory:' },
          secrets: { encryption_key: Buffer.alloc(32, 1).toString('base64') },
          apps: [{ client_id: 'payments', token_endpoint_auth_method: 'tls_client_auth', ...app }],
        },
        {},
      );
    expect(config({ client_secret: 's'.repeat(40) })).to.throw(
      'apps[0].token_endpoint_auth_method: a tls_client_auth app authenticates with its certificate and has no secret',
    );
    expect(config({})).not.to.throw();
    expect(config({ token_endpoint_auth_method: 'self_signed_tls_client_auth' })).to.throw(
      'apps[0].jwks: (or jwks_uri) is required for self_signed_tls_client_auth',
    );
  });
});
