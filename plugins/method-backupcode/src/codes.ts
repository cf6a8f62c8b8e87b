import { randomInt } from 'node:crypto';

/** Crockford's base32: no I, L, O or U, so codes survive being read aloud or copied by hand. */
export const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 12 characters × 5 bits = 60 bits per code. */
export const CODE_LENGTH = 12;
/** Characters of a code stored in clear as its lookup id. */
export const LOOKUP_LENGTH = 4;

/** A new code from the CSPRNG, normalised (no separators). */
export function generateCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** How a code is shown to the user: XXXX-XXXX-XXXX. */
export function formatCode(code: string): string {
  return code.match(/.{1,4}/g)!.join('-');
}

/**
 * The canonical form of what a user typed, or null if it cannot be a code: separators
 * (spaces, dashes) dropped, upper case, and Crockford's look-alikes O→0, I/L→1 folded.
 */
export function normalizeCode(input: string): string | null {
  const code = input.replace(/[\s-]/g, '').toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1');
  if (code.length !== CODE_LENGTH) return null;
  for (const char of code) if (!ALPHABET.includes(char)) return null;
  return code;
}

/** The lookup id kept with each code's hash (`data.lookup`), so a check hashes one candidate, not ten. */
export function lookupId(code: string): string {
  return code.slice(0, LOOKUP_LENGTH);
}
