import type { AuthMethod, EnrollmentHandlers, SecretHasher, VerifyOutcome } from '@gatehouse-auth/core';
import { isImported, parseImported, verifyImported } from './imported.js';
import { checkNewPassword, normalizePassword, type PasswordPolicy } from './policy.js';

/** Credential type under which the single argon2id hash is stored. */
export const PASSWORD_CREDENTIAL = 'password';

export interface PasswordMethodDeps {
  hasher: SecretHasher;
  policy: PasswordPolicy;
  /**
   * A hash of a random value made with the same cost parameters, checked when the user has no
   * password so that the response time does not reveal whether one is enrolled.
   */
  dummyHash: string;
}

/** The PASSWORD method: proof is the `password` field, checked against an argon2id hash. */
export function passwordMethod({ hasher, policy, dummyHash }: PasswordMethodDeps): AuthMethod {
  const enrollment: EnrollmentHandlers = {
    async initiate(ctx) {
      const raw = ctx.body.password;
      if (typeof raw !== 'string') {
        return { ok: false, code: 'FIELD_MISSING', status: 400, message: 'The field "password" is required.' };
      }
      const password = normalizePassword(raw);
      const refusal = checkNewPassword(password, policy);
      if (refusal) return refusal;
      const secret = await hasher.hash(password);
      // A first password replaces nothing: no session to end, no one to tell.
      const replaced = (await ctx.credentials.list(PASSWORD_CREDENTIAL)).length > 0;
      await ctx.credentials.replaceAll(PASSWORD_CREDENTIAL, [{ type: PASSWORD_CREDENTIAL, secret }]);
      return { ok: true, done: true, replaced, response: { enrolled: true } };
    },
    // A hash from another system (docs/migration.md), stored as given: replaced by argon2id at
    // the first sign-in, the only time the password is at hand.
    async import(input) {
      const parsed = parseImported(input);
      if (!parsed.ok) return parsed;
      return {
        ok: true,
        credentials: [{ type: PASSWORD_CREDENTIAL, secret: parsed.secret, data: { imported: parsed.kind } }],
      };
    },
  };

  return {
    id: 'PASSWORD',
    amr: ['pwd'],
    verifyFields: ['password'],
    page: {
      label: 'Password',
      inputs: [{ field: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' }],
    },
    async isEnrolled(ctx) {
      return (await ctx.credentials.list(PASSWORD_CREDENTIAL)).length > 0;
    },
    async initiate() {
      return { ok: true };
    },
    async verify(ctx): Promise<VerifyOutcome> {
      const password = normalizePassword(ctx.fields.password ?? '');
      const [stored] = await ctx.credentials.list(PASSWORD_CREDENTIAL);
      if (!stored?.secret) {
        await hasher.verify(dummyHash, password);
        return { ok: false, reason: 'not_enrolled' };
      }
      // An imported hash (bcrypt, scrypt, PBKDF2) was made of the password as the other system
      // took it, not normalized; argon2 ones, Keycloak's too, go to the hasher.
      const imported = isImported(stored);
      const matched = imported
        ? ((await verifyImported(stored.secret, ctx.fields.password ?? '')) ??
          (await hasher.verify(stored.secret, ctx.fields.password ?? '')))
        : await hasher.verify(stored.secret, password);
      if (!matched) return { ok: false, reason: 'mismatch' };
      // Imported, or made with other parameters (the defaults or the config changed): stored
      // again as argon2id at today's cost, once the whole sign-in succeeded — the only time the
      // password is at hand.
      if (!imported && !hasher.needsRehash?.(stored.secret)) return { ok: true };
      return {
        ok: true,
        commit: async () => {
          await ctx.credentials.update(stored.id, { secret: await hasher.hash(password), data: {} });
          return true;
        },
      };
    },
    enrollment,
  };
}
