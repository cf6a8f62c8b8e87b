import type {
  AuthMethod,
  EnrollmentHandlers,
  NewCredential,
  VerifyContext,
  VerifyOutcome,
  SecretHasher,
} from '@gatehouse-auth/core';
import { formatCode, generateCode, lookupId, normalizeCode } from './codes.js';

/** Credential type of one backup code: data.lookup = lookup id, secret = argon2id hash of the code. */
export const CODE_CREDENTIAL = 'code';

export interface BackupCodeMethodDeps {
  hasher: SecretHasher;
  /** Codes per set. */
  count: number;
  /**
   * A hash made with the same cost, checked when no code has the typed lookup id, so that the
   * response time does not reveal whether the first characters were right.
   */
  dummyHash: string;
}

/** The BACKUPCODE method: single-use recovery codes, shown once and stored hashed. */
export function backupCodeMethod({ hasher, count, dummyHash }: BackupCodeMethodDeps): AuthMethod {
  const enrollment: EnrollmentHandlers = {
    async initiate(ctx) {
      const codes = Array.from({ length: count }, generateCode);
      const rows: NewCredential[] = await Promise.all(
        codes.map(async (code, i) => ({
          type: CODE_CREDENTIAL,
          // What a listing shows: which code of the set, never any part of it.
          label: `Backup code ${i + 1}`,
          secret: await hasher.hash(code),
          data: { lookup: lookupId(code) },
        })),
      );
      // One replaceAll, so the old set stops working exactly when the new one starts.
      await ctx.credentials.replaceAll(CODE_CREDENTIAL, rows);
      return { ok: true, done: true, response: { codes: codes.map(formatCode) } };
    },
  };

  return {
    id: 'BACKUPCODE',
    // RFC 8176 has no value for recovery codes; 'otp' (a one-time password) is the closest.
    amr: ['otp'],
    verifyFields: ['pass_code'],
    page: {
      label: 'Backup code',
      help: 'One of the codes you saved when you set up your account. Each works once.',
      inputs: [{ field: 'pass_code', label: 'Backup code', autocomplete: 'off' }],
      renew: {
        button: 'Make new backup codes',
        text: 'You get a new set to save; the codes you have now stop working.',
      },
    },
    async isEnrolled(ctx) {
      return (await ctx.credentials.list(CODE_CREDENTIAL)).some((c) => c.usedAt === null);
    },
    async initiate() {
      return { ok: true };
    },
    verify: (ctx) => verifyCode(ctx, hasher, dummyHash),
    enrollment,
  };
}

async function verifyCode(ctx: VerifyContext, hasher: SecretHasher, dummyHash: string): Promise<VerifyOutcome> {
  const code = normalizeCode(ctx.fields.pass_code ?? '');
  if (code === null) return { ok: false, reason: 'malformed' };
  const all = await ctx.credentials.list(CODE_CREDENTIAL);
  if (all.length === 0) {
    // The same cost as a real check: no timing difference between enrolled and unknown users.
    await hasher.verify(dummyHash, code);
    return { ok: false, reason: 'not_enrolled' };
  }
  // Sets made before the lookup id moved to `data` kept it as the label.
  const candidates = all.filter((c) => (c.data.lookup ?? c.label) === lookupId(code) && c.secret);
  if (candidates.length === 0) {
    await hasher.verify(dummyHash, code);
    return { ok: false, reason: 'mismatch' };
  }
  for (const candidate of candidates) {
    if (!(await hasher.verify(candidate.secret!, code))) continue;
    if (candidate.usedAt) return { ok: false, reason: 'used' };
    // Spent only once the whole verification succeeded; markUsed is conditional, so of two
    // concurrent uses exactly one commits.
    return { ok: true, commit: () => ctx.credentials.markUsed(candidate.id) };
  }
  return { ok: false, reason: 'mismatch' };
}
