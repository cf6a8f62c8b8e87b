/**
 * A test IdP: RSA keys with self-signed certificates (made by the openssl CLI, as node:crypto
 * cannot create X.509 certificates), SAML assertions, and enveloped signatures as RECIPES §2.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';

export const SAML_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
export const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';
export const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
export const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1';
export const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
export const SHA1 = 'http://www.w3.org/2000/09/xmldsig#sha1';
export const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
export const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';

export interface KeyPair {
  privateKey: string;
  certificate: string;
}

/** Makes `count` RSA-2048 keys with self-signed certificates in a temporary directory. */
export function makeKeyPairs(names: string[]): KeyPair[] {
  const dir = mkdtempSync(join(tmpdir(), 'saml2-bearer-test-'));
  try {
    return names.map((name) => {
      const key = join(dir, `${name}-key.pem`);
      const cert = join(dir, `${name}-cert.pem`);
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          key,
          '-out',
          cert,
          '-subj',
          `/CN=${name}`,
          '-days',
          '1',
        ],
        { stdio: 'ignore' },
      );
      return { privateKey: readFileSync(key, 'utf8'), certificate: readFileSync(cert, 'utf8') };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface AssertionFields {
  id: string;
  issuer: string;
  nameId: string;
  audience: string;
  recipient: string;
  method: string;
  notBefore: Date;
  notOnOrAfter: Date;
  confirmationNotOnOrAfter: Date;
  /** Extra elements after Conditions (e.g. an Advice). */
  extra: string;
}

const iso = (d: Date) => d.toISOString();

/** An unsigned saml:Assertion with every element RFC 7522 asks for. */
export function assertionXml(f: AssertionFields): string {
  return (
    `<saml:Assertion xmlns:saml="${SAML_NS}" ID="${f.id}" Version="2.0" IssueInstant="${iso(f.notBefore)}">` +
    `<saml:Issuer>${f.issuer}</saml:Issuer>` +
    `<saml:Subject>` +
    `<saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${f.nameId}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="${f.method}">` +
    `<saml:SubjectConfirmationData Recipient="${f.recipient}" NotOnOrAfter="${iso(f.confirmationNotOnOrAfter)}"/>` +
    `</saml:SubjectConfirmation>` +
    `</saml:Subject>` +
    `<saml:Conditions NotBefore="${iso(f.notBefore)}" NotOnOrAfter="${iso(f.notOnOrAfter)}">` +
    `<saml:AudienceRestriction><saml:Audience>${f.audience}</saml:Audience></saml:AudienceRestriction>` +
    `</saml:Conditions>` +
    f.extra +
    `<saml:AuthnStatement AuthnInstant="${iso(f.notBefore)}"><saml:AuthnContext>` +
    `<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:Password</saml:AuthnContextClassRef>` +
    `</saml:AuthnContext></saml:AuthnStatement>` +
    `</saml:Assertion>`
  );
}

export interface SignOptions {
  /** Put the signer's certificate in KeyInfo (as an attacker would, hoping it is trusted). */
  keyInfo?: boolean;
  signatureAlgorithm?: string;
  digestAlgorithm?: string;
  transforms?: string[];
  /** Sign the whole document with URI="" instead of "#ID". */
  emptyUri?: boolean;
  /** Where the Signature goes; default right after the Issuer, as the SAML schema requires. */
  location?: { reference: string; action: 'after' | 'append' | 'prepend' | 'before' };
}

/** Signs the root Assertion with an enveloped, exclusive-c14n signature. */
export function sign(xml: string, keys: KeyPair, opts: SignOptions = {}): string {
  const sig = new SignedXml({
    privateKey: keys.privateKey,
    publicCert: keys.certificate,
    signatureAlgorithm: opts.signatureAlgorithm ?? RSA_SHA256,
    canonicalizationAlgorithm: EXC_C14N,
    ...(opts.keyInfo ? { getKeyInfoContent: SignedXml.getKeyInfoContent } : {}),
  });
  sig.addReference({
    xpath: "/*[local-name(.)='Assertion']",
    digestAlgorithm: opts.digestAlgorithm ?? SHA256,
    transforms: opts.transforms ?? [ENVELOPED, EXC_C14N],
    ...(opts.emptyUri ? { isEmptyUri: true } : {}),
  });
  sig.computeSignature(xml, {
    prefix: 'ds',
    location: opts.location ?? {
      reference: "/*[local-name(.)='Assertion']/*[local-name(.)='Issuer']",
      action: 'after',
    },
  });
  return sig.getSignedXml();
}

/** RFC 7522 §2.1 encoding of the `assertion` parameter. */
export const encode = (xml: string): string => Buffer.from(xml, 'utf8').toString('base64url');

/** The `<ds:Signature>…</ds:Signature>` text of a signed document. */
export function signatureOf(signed: string): string {
  const match = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(signed);
  if (!match) throw new Error('no signature');
  return match[0];
}

/**
 * The NAIVE verification the attack tests are measured against: take the first Signature
 * anywhere, check it (optionally trusting the certificate in KeyInfo), then read the first
 * NameID in the document with `firstChild.data`. Returns the NameID it would log in, or null.
 */
export function naiveVerify(xml: string, certificate: string, trustKeyInfo = false): string | null {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const signature = doc.getElementsByTagNameNS(DSIG_NS, 'Signature')[0];
  if (!signature) return null;
  const sig = new SignedXml({
    publicCert: trustKeyInfo ? undefined : certificate,
    getCertFromKeyInfo: trustKeyInfo ? SignedXml.getCertFromKeyInfo : () => null,
  });
  sig.loadSignature(signature as unknown as Parameters<SignedXml['loadSignature']>[0]);
  try {
    if (!sig.checkSignature(xml)) return null;
  } catch {
    return null;
  }
  const nameId = doc.getElementsByTagNameNS(SAML_NS, 'NameID')[0];
  const text = nameId?.firstChild as { data?: string } | null | undefined;
  return text?.data ?? null;
}
