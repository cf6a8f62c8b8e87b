// @ts-check
/**
 * __METHOD_ID__: the user proves they know an answer they set up before (a knowledge factor, RFC 8176
 * "kba"). The answer is stored as an argon2id hash by the core's hashing service.
 */
import { randomUUID } from 'node:crypto';
import { definePlugin, z } from '@gatehouse-auth/core';

export const METHOD_ID = '__METHOD_ID__';
const CREDENTIAL = 'answer';

/** Case and surrounding spaces do not count. */
const normalize = (/** @type {unknown} */ answer) => (typeof answer === 'string' ? answer.trim().toLowerCase() : '');

export default definePlugin({
  name: '__NAME__',
  apiVersion: '^1',
  options: z
    .strictObject({
      /** Argon2id cost of the stored answers (memory in KiB). */
      memory_cost: z.number().int().min(1024).default(19456),
      time_cost: z.number().int().min(1).default(2),
      min_length: z.number().int().min(1).default(4),
    })
    .prefault({}),
  async register(api, options) {
    const hasher = api.services.passwordHashing.withCost({
      memoryCost: options.memory_cost,
      timeCost: options.time_cost,
      parallelism: 1,
    });
    // Checked when a user has no answer, so that an unknown user takes as long as a known one.
    const dummy = await hasher.hash(randomUUID());
    api.methods.add({
      id: METHOD_ID,
      amr: ['kba'],
      verifyFields: ['answer'],
      page: {
        label: 'Secret answer',
        inputs: [{ field: 'answer', label: 'Your secret answer', autocomplete: 'off' }],
      },
      async isEnrolled(ctx) {
        return (await ctx.credentials.list(CREDENTIAL)).length > 0;
      },
      async initiate() {
        return { ok: true };
      },
      async verify(ctx) {
        const [stored] = await ctx.credentials.list(CREDENTIAL);
        const right = await hasher.verify(stored?.secret ?? dummy, normalize(ctx.fields.answer));
        if (!stored) return { ok: false, reason: 'not_enrolled' };
        return right ? { ok: true } : { ok: false, reason: 'mismatch' };
      },
      enrollment: {
        async initiate(ctx) {
          const answer = normalize(ctx.body.answer);
          if (answer.length < options.min_length) {
            return {
              ok: false,
              code: 'INVALID_FIELD',
              status: 400,
              message: `The answer needs at least ${options.min_length} characters`,
            };
          }
          await ctx.credentials.replaceAll(CREDENTIAL, [{ type: CREDENTIAL, secret: await hasher.hash(answer) }]);
          return { ok: true, done: true, response: { enrolled: true } };
        },
      },
    });
  },
});
