import { OAuthError } from '@gatehouse-auth/core';

/** Bigger than any bearer assertion an IdP sends; stops a client making us parse megabytes. */
export const MAX_ASSERTION_CHARS = 100_000;

/** base64url (RFC 7522 §2.1) or standard base64, optionally padded; no whitespace. */
const BASE64_ANY = /^[A-Za-z0-9+/_-]+={0,2}$/;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes the `assertion` parameter to XML text. RFC 7522 sends base64url; standard base64 is
 * accepted too, as some IdP tooling produces it. Anything else → invalid_grant.
 */
export function decodeAssertion(value: string): string {
  if (value.length > MAX_ASSERTION_CHARS) throw new OAuthError('invalid_grant', 'assertion is too large');
  if (!BASE64_ANY.test(value) || value.replace(/=+$/, '').length % 4 === 1) {
    throw new OAuthError('invalid_grant', 'assertion is not base64url-encoded');
  }
  let xml: string;
  try {
    xml = utf8.decode(Buffer.from(value, 'base64'));
  } catch {
    throw new OAuthError('invalid_grant', 'assertion is not UTF-8 text');
  }
  if (!xml.trimStart().startsWith('<')) throw new OAuthError('invalid_grant', 'assertion is not XML');
  return xml;
}
