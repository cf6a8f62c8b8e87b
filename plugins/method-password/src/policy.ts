import type { EnrollmentOutcome } from '@gatehouse-auth/core';
import { isCommonPassword } from './common-passwords.js';

/** NFKC, which NIST SP 800-63B allows, so the same password typed on different keyboards matches. */
export function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}

/** Length in Unicode code points, not UTF-16 units: an emoji counts once. */
export function codePointLength(value: string): number {
  return [...value].length;
}

export interface PasswordPolicy {
  minLength: number;
  maxLength: number;
}

type Refusal = Extract<EnrollmentOutcome, { ok: false }>;

/**
 * Checks a new (normalised) password: length bounds and the common-password list only, no
 * composition rules (NIST SP 800-63B §3.1.1.2). Returns the refusal, or null when acceptable.
 */
export function checkNewPassword(password: string, policy: PasswordPolicy): Refusal | null {
  const length = codePointLength(password);
  if (length < policy.minLength) {
    return refuse('PASSWORD_TOO_SHORT', `The password must have at least ${policy.minLength} characters.`);
  }
  if (length > policy.maxLength) {
    return refuse('PASSWORD_TOO_LONG', `The password must have at most ${policy.maxLength} characters.`);
  }
  if (isCommonPassword(password)) {
    return refuse(
      'PASSWORD_TOO_COMMON',
      'This password appears in a list of common or breached passwords; choose a different one.',
    );
  }
  return null;
}

function refuse(code: string, message: string): Refusal {
  return { ok: false, code, status: 400, message };
}
