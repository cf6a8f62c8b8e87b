import type { KeyObject } from 'node:crypto';
import type { Element } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { AssertionRejected, BAD_SIGNATURE } from './rejection.js';
import {
  SAML_ASSERTION_NS,
  XMLDSIG_NS,
  childElements,
  descendantElements,
  elementsWithId,
  isNamed,
  parseXml,
  textOf,
} from './xml.js';

/** SHA-1 is refused: collisions are practical, and SAML2Int requires SHA-256 or better. */
const SIGNATURE_ALGORITHMS = new Set([
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
]);
const DIGEST_ALGORITHMS = new Set([
  'http://www.w3.org/2001/04/xmlenc#sha256',
  'http://www.w3.org/2001/04/xmlenc#sha512',
]);
/** The transforms of an enveloped SAML signature; no XPath or XSLT transforms that could select other content. */
const TRANSFORMS = new Set([
  'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
  'http://www.w3.org/2001/10/xml-exc-c14n#',
  'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
]);

/** A signature-checked assertion: the root element re-parsed from what was signed, and its issuer. */
export interface VerifiedAssertion {
  /** The Assertion element parsed from the canonical XML the signature covers (never the input DOM). */
  assertion: Element;
  id: string;
  issuer: string;
}

/** The keys trusted for an issuer (more than one during a certificate rollover); empty if none. */
export type TrustedKeys = (issuer: string) => KeyObject[];

function reject(detail: string): never {
  throw new AssertionRejected(BAD_SIGNATURE, detail);
}

/** The text of the single direct saml:Issuer child, or a rejection. */
function issuerOf(assertion: Element): string {
  const issuers = childElements(assertion, SAML_ASSERTION_NS, 'Issuer');
  const issuer = issuers.length === 1 ? textOf(issuers[0]!) : '';
  return issuer || reject('the assertion needs exactly one non-empty Issuer');
}

/** Loads the signature with one key and checks it; returns the one signed reference, or null. */
function checkWithKey(xml: string, signature: Element, rootId: string, key: KeyObject): string | null {
  // publicCert from configuration only: KeyInfo is never consulted (an attacker can put any cert there).
  const signed = new SignedXml({ publicCert: key, getCertFromKeyInfo: () => null });
  try {
    // xml-crypto bundles @xmldom 0.8; its API takes any DOM node, and 0.9 nodes work.
    signed.loadSignature(signature as unknown as Parameters<SignedXml['loadSignature']>[0]);
  } catch {
    reject('the signature element is malformed');
  }
  checkReferences(signed, rootId);
  if (!SIGNATURE_ALGORITHMS.has(signed.signatureAlgorithm ?? '')) reject('signature algorithm not allowed');
  let valid = false;
  try {
    valid = signed.checkSignature(xml);
  } catch {
    valid = false;
  }
  if (!valid) return null;
  // checkSignature reloads the references from the SignedInfo it verified: check those again.
  checkReferences(signed, rootId);
  const references = signed.getSignedReferences();
  return references.length === 1 ? references[0]! : reject('expected exactly one signed reference');
}

/** Exactly one reference, to the root by its ID, with only the transforms of an enveloped signature. */
function checkReferences(signed: SignedXml, rootId: string): void {
  const references = signed.getReferences();
  if (references.length !== 1) reject('the signature must have exactly one reference');
  const reference = references[0]!;
  if (reference.uri !== `#${rootId}`) reject('the signature does not reference the assertion root');
  if (reference.transforms.length > 2 || !reference.transforms.every((t) => TRANSFORMS.has(t))) {
    reject('reference transforms not allowed');
  }
  if (!DIGEST_ALGORITHMS.has(reference.digestAlgorithm)) reject('digest algorithm not allowed');
}

/**
 * Verifies an enveloped XML signature over a bare saml:Assertion the way that resists signature
 * wrapping (RECIPES §2, after node-saml's getVerifiedXml): the root must be the Assertion, carry
 * the only signature as a direct child, and be the one element with its ID; the signature must
 * reference exactly that ID and verify with a configured key for the Issuer. The result is
 * re-parsed from the signed canonical XML, so nothing outside the signature can reach a claim.
 */
export function verifyAssertionSignature(input: string, trustedKeys: TrustedKeys): VerifiedAssertion {
  // XML parsers normalise line ends; do it first so our DOM and xml-crypto's see the same text.
  const xml = input.replace(/\r\n?/g, '\n');
  // No DTDs at all: no entity expansion, no external entities, no entity-built ID attributes.
  if (/<!DOCTYPE/i.test(xml)) reject('DOCTYPE is not allowed');
  let root: Element | null;
  try {
    root = parseXml(xml).documentElement;
  } catch {
    throw new AssertionRejected('assertion is not well-formed XML');
  }
  if (!root || !isNamed(root, SAML_ASSERTION_NS, 'Assertion')) reject('the root element is not a saml:Assertion');
  const rootElement = root;
  const id = rootElement.getAttribute('ID') ?? '';
  // Quotes would break out of the XPath xml-crypto builds from the reference URI.
  if (!id || /["']/.test(id)) reject('the assertion ID is missing or malformed');
  if (elementsWithId(rootElement, id).length !== 1) reject('the assertion ID occurs more than once');

  const signatures = descendantElements(rootElement, (e) => isNamed(e, XMLDSIG_NS, 'Signature'));
  if (signatures.length !== 1) reject('the assertion must carry exactly one signature');
  const signature = signatures[0]!;
  if (signature.parentNode !== rootElement) reject('the signature is not a direct child of the assertion');

  // The unsigned Issuer only picks the key; it must equal the signed Issuer (checked below).
  const claimedIssuer = issuerOf(rootElement);
  const keys = trustedKeys(claimedIssuer);
  if (keys.length === 0) throw new AssertionRejected('assertion issuer is not trusted by this client');

  let signedXml: string | null = null;
  for (const key of keys) {
    signedXml = checkWithKey(xml, signature, id, key);
    if (signedXml !== null) break;
  }
  if (signedXml === null) reject('the signature does not verify with the issuer key');

  let assertion: Element | null;
  try {
    assertion = parseXml(signedXml).documentElement;
  } catch {
    reject('the signed reference is not well-formed XML');
  }
  if (!assertion || !isNamed(assertion, SAML_ASSERTION_NS, 'Assertion') || assertion.getAttribute('ID') !== id) {
    reject('the signed reference is not the assertion');
  }
  const issuer = issuerOf(assertion);
  if (issuer !== claimedIssuer) reject('the signed Issuer differs from the unsigned one');
  return { assertion, id, issuer };
}
