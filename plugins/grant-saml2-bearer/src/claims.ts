import type { Element } from '@xmldom/xmldom';
import { AssertionRejected } from './rejection.js';
import { SAML_ASSERTION_NS, childElements, textOf } from './xml.js';

export const BEARER_METHOD = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

/** What the grant needs from a signed assertion once every condition holds. */
export interface AssertionClaims {
  /** The NameID: a user id, username, email or phone. */
  subject: string;
  /** How long the assertion ID must stay in the replay cache: the end of its validity plus skew. */
  replayUntil: Date;
}

export interface ClaimChecks {
  now: Date;
  /** Acceptable Audience and Recipient values: the token endpoint and its aliases. */
  audiences: string[];
  skewSeconds: number;
}

/** xs:dateTime with a zone (SAML requires UTC); a zoneless time would be read as local time. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function instant(element: Element, attribute: string): Date | null {
  if (!element.hasAttribute(attribute)) return null;
  const value = element.getAttribute(attribute) ?? '';
  const time = DATE_TIME.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(time)) throw new AssertionRejected(`assertion ${attribute} is not a valid dateTime`);
  return new Date(time);
}

function single(parent: Element, localName: string, what: string): Element {
  const found = childElements(parent, SAML_ASSERTION_NS, localName);
  if (found.length !== 1) throw new AssertionRejected(`assertion must have exactly one ${what}`);
  return found[0]!;
}

/** Whether `now` lies in [notBefore − skew, notOnOrAfter + skew). */
function within(now: Date, notBefore: Date | null, notOnOrAfter: Date | null, skewMs: number): boolean {
  if (notBefore && now.getTime() < notBefore.getTime() - skewMs) return false;
  if (notOnOrAfter && now.getTime() >= notOnOrAfter.getTime() + skewMs) return false;
  return true;
}

/** RFC 7522 §3 item 4: a bearer confirmation for us, with Recipient and a NotOnOrAfter still ahead. */
function bearerConfirmationEnd(subject: Element, checks: ClaimChecks, skewMs: number): Date {
  for (const confirmation of childElements(subject, SAML_ASSERTION_NS, 'SubjectConfirmation')) {
    if (confirmation.getAttribute('Method') !== BEARER_METHOD) continue;
    const data = childElements(confirmation, SAML_ASSERTION_NS, 'SubjectConfirmationData');
    if (data.length !== 1) continue;
    const recipient = data[0]!.getAttribute('Recipient') ?? '';
    const notOnOrAfter = instant(data[0]!, 'NotOnOrAfter');
    if (!checks.audiences.includes(recipient) || !notOnOrAfter) continue;
    if (within(checks.now, instant(data[0]!, 'NotBefore'), notOnOrAfter, skewMs)) return notOnOrAfter;
  }
  throw new AssertionRejected('assertion has no valid bearer SubjectConfirmation for this token endpoint');
}

/**
 * Checks the conditions of a signature-verified assertion (RFC 7522 §3) and reads its subject:
 * Version 2.0; one Subject with one NameID; a bearer SubjectConfirmation whose Recipient is the
 * token endpoint and whose NotOnOrAfter is ahead; Conditions valid now (with skew) and every
 * AudienceRestriction naming the token endpoint. `assertion` must come from the signed XML.
 */
export function checkClaims(assertion: Element, checks: ClaimChecks): AssertionClaims {
  const skewMs = checks.skewSeconds * 1000;
  if (assertion.getAttribute('Version') !== '2.0') throw new AssertionRejected('assertion Version must be 2.0');

  const subject = single(assertion, 'Subject', 'Subject');
  const nameId = textOf(single(subject, 'NameID', 'Subject NameID'));
  if (!nameId) throw new AssertionRejected('assertion NameID is empty');
  const confirmationEnd = bearerConfirmationEnd(subject, checks, skewMs);

  const conditions = single(assertion, 'Conditions', 'Conditions element');
  const notOnOrAfter = instant(conditions, 'NotOnOrAfter');
  if (!within(checks.now, instant(conditions, 'NotBefore'), notOnOrAfter, skewMs)) {
    throw new AssertionRejected('assertion is expired or not yet valid');
  }
  // SAML core §2.5.1.4: every AudienceRestriction must be satisfied, and RFC 7522 requires one.
  const restrictions = childElements(conditions, SAML_ASSERTION_NS, 'AudienceRestriction');
  const forUs = (restriction: Element) =>
    childElements(restriction, SAML_ASSERTION_NS, 'Audience').some((a) => checks.audiences.includes(textOf(a)));
  if (restrictions.length === 0 || !restrictions.every(forUs)) {
    throw new AssertionRejected('assertion audience is not this token endpoint');
  }

  const end = notOnOrAfter && notOnOrAfter < confirmationEnd ? notOnOrAfter : confirmationEnd;
  return { subject: nameId, replayUntil: new Date(end.getTime() + skewMs) };
}
