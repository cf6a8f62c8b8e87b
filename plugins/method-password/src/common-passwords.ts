import { dictionary } from '@zxcvbn-ts/language-common';

/**
 * The zxcvbn-ts list of ~49,000 common and breached passwords (lower case, ordered by
 * frequency), used whole. Built once at load: a Set lookup per check.
 */
const commonPasswords: ReadonlySet<string> = new Set(dictionary['passwords-common'].map((p) => p.toLowerCase()));

/** Whether `password` (already normalised) is on the common/breached list, ignoring case. */
export function isCommonPassword(password: string): boolean {
  return commonPasswords.has(password.toLowerCase());
}
