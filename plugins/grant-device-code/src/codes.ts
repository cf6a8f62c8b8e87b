import { randomInt } from 'node:crypto';

/** RFC 8628 §6.1: 20 consonants, no vowels (no words), upper case: 20^8 ≈ 2^34.5 codes. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

/** A fresh user code, without its dash (`BDFHJKLM`). */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** As shown to the user: `BDFH-JKLM`. */
export function displayUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What the user typed, as the stored form: upper case, without dashes and spaces (RFC 8628 §6.1).
 * Null when it cannot be a user code (wrong length or a character outside the alphabet).
 */
export function normalizeUserCode(input: unknown): string | null {
  if (typeof input !== 'string' || input.length > 32) return null;
  const code = input.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== USER_CODE_LENGTH) return null;
  for (const c of code) if (!USER_CODE_ALPHABET.includes(c)) return null;
  return code;
}
