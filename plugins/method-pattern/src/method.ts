import type {
  Credential,
  CredentialStore,
  DeviceMethodDefinition,
  EnrollmentOutcome,
  JsonObject,
  SecretHasher,
  Services,
  VerifyOutcome,
} from '@gatehouse-auth/core';
import { FLOOR_DOTS, normalizePattern, patternRule } from './pattern.js';

/** Credential type of a pattern: one per device, tied to it (`deviceId`) so it goes with it. */
export const PATTERN_CREDENTIAL = 'pattern';

export interface PatternMethodDeps {
  services: Pick<Services, 'devices'>;
  hasher: SecretHasher;
  /** Fewest dots of a new pattern. */
  minDots: number;
  /** Consecutive wrong patterns that lock the pattern until it is set up again. */
  maxFailures: number;
}

/*
 * Counting failures. `counter` (raised only by the conditional `advanceCounter`) counts the
 * attempts on the pattern; each attempt takes its number before the hash is checked, so
 * concurrent guesses cannot share one and at most `maxFailures` of them run after the last
 * success. `data.last_success` is the number of the last right attempt (0 when set up): the
 * consecutive failures are `counter - last_success`. `data.locked` is set by the failure that
 * reaches the limit, and stays until the pattern is set up again.
 */

const lastSuccess = (c: Credential): number => (typeof c.data.last_success === 'number' ? c.data.last_success : 0);

function isLocked(c: Credential, maxFailures: number): boolean {
  return c.data.locked === true || c.counter - lastSuccess(c) >= maxFailures;
}

/** The device's pattern (the newest, should two setups have raced), or null. */
async function patternOf(credentials: CredentialStore, deviceId: string): Promise<Credential | null> {
  const mine = (await credentials.list(PATTERN_CREDENTIAL)).filter((c) => c.deviceId === deviceId && c.secret);
  return mine.reduce<Credential | null>((newest, c) => (newest && newest.createdAt > c.createdAt ? newest : c), null);
}

/** Takes the next attempt number, or says why there is none. */
async function takeAttempt(
  credentials: CredentialStore,
  id: string,
  maxFailures: number,
): Promise<number | 'locked' | 'no_pattern' | 'busy'> {
  for (let tries = 0; tries < 20; tries++) {
    const c = await credentials.get(id);
    if (!c) return 'no_pattern';
    if (isLocked(c, maxFailures)) return 'locked';
    if (await credentials.advanceCounter(id, c.counter + 1)) return c.counter + 1;
  }
  return 'busy';
}

function withoutLock(data: JsonObject): JsonObject {
  const { locked: _locked, ...rest } = data;
  return rest;
}

/** The PATTERN method's part of a device method: enrollment, isEnrolled, initiate and verify. */
export function patternDefinition(deps: PatternMethodDeps): Omit<DeviceMethodDefinition, 'id' | 'amr' | 'page'> {
  const { services, hasher, minDots, maxFailures } = deps;

  const refuse = (code: string, status: number, message: string): EnrollmentOutcome => ({
    ok: false,
    code,
    status,
    message,
  });

  return {
    extraFields: ['pass_code'],

    async isEnrolled(ctx) {
      return (await ctx.credentials.list(PATTERN_CREDENTIAL)).some((c) => c.secret && !isLocked(c, maxFailures));
    },

    enrollment: {
      async initiate(ctx) {
        const { device_id: deviceId, pattern: raw } = ctx.body;
        if (typeof deviceId !== 'string' || deviceId === '')
          return refuse('FIELD_MISSING', 400, 'The field "device_id" is required.');
        if (typeof raw !== 'string') return refuse('FIELD_MISSING', 400, 'The field "pattern" is required.');
        const pattern = normalizePattern(raw, minDots);
        if (!pattern) return refuse('INVALID_FIELD', 400, `pattern: ${patternRule(minDots)}`);
        const device = (await services.devices.ofUser(ctx.user.id)).find((d) => d.deviceId === deviceId);
        if (!device) return refuse('DEVICE_NOT_FOUND', 404, 'no such device for this user');
        const secret = await hasher.hash(pattern);
        // Add first, then remove what was there before: of two setups at once, the last stays.
        const previous = (await ctx.credentials.list(PATTERN_CREDENTIAL)).filter((c) => c.deviceId === deviceId);
        await ctx.credentials.add({
          type: PATTERN_CREDENTIAL,
          secret,
          deviceId,
          label: device.name,
          data: { last_success: 0 },
        });
        for (const old of previous) await ctx.credentials.remove(old.id);
        return { ok: true, done: true, response: { device_id: deviceId, enrolled: true } };
      },
    },

    // The core sends the push only to a device holding a usable pattern (the one named in
    // medium_id, else the one used last among them).
    async acceptsDevice(ctx, device) {
      const stored = await patternOf(ctx.credentials, device.deviceId);
      return stored !== null && !isLocked(stored, maxFailures);
    },

    async verify(ctx): Promise<VerifyOutcome> {
      if (!ctx.device) return { ok: false, reason: 'no_device' };
      const stored = await patternOf(ctx.credentials, ctx.device.deviceId);
      if (!stored) return { ok: false, reason: 'no_pattern' };
      if (isLocked(stored, maxFailures)) return { ok: false, reason: 'pattern_locked' };
      // A pattern set up under a lower min_dots still counts: min_dots applies to new ones.
      const pattern = normalizePattern(ctx.fields.pass_code ?? '', FLOOR_DOTS);
      if (!pattern) return { ok: false, reason: 'malformed_pattern' };

      const attempt = await takeAttempt(ctx.credentials, stored.id, maxFailures);
      if (attempt === 'locked') return { ok: false, reason: 'pattern_locked' };
      if (typeof attempt !== 'number') return { ok: false, reason: attempt };

      const right = await hasher.verify(stored.secret!, pattern);
      const now = await ctx.credentials.get(stored.id);
      if (!now) return { ok: false, reason: 'no_pattern' };
      if (right) {
        const data = { ...withoutLock(now.data), last_success: Math.max(attempt, lastSuccess(now)) };
        await ctx.credentials.update(stored.id, { data });
        return { ok: true };
      }
      if (attempt - lastSuccess(now) >= maxFailures && now.data.locked !== true) {
        await ctx.credentials.update(stored.id, { data: { ...now.data, locked: true } });
        ctx.logger.warn(
          { credentialId: stored.id, deviceId: ctx.device.deviceId, failures: maxFailures },
          'pattern locked after too many wrong attempts; it works again once set up anew',
        );
      }
      return { ok: false, reason: 'mismatch' };
    },
  };
}
