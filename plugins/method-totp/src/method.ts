import type { AuthMethod, Credential, Services, VerifyContext, VerifyOutcome } from '@gatehouse-auth/core';
import { isWellFormed, matchTimeStep, type CodeCheck } from './codes.js';
import { totpEnrollment } from './enrollment.js';
import { SEED_CREDENTIAL, type TotpSettings } from './settings.js';

/** The TOTP method (RFC 6238): proof is `pass_code` from an authenticator app. */
export function totpMethod(services: Services, settings: TotpSettings): AuthMethod {
  return {
    id: 'TOTP',
    amr: ['otp'],
    verifyFields: ['pass_code'],
    errors: { ENROLLMENT_NOT_STARTED: [400, 'the setup was not started, or it expired'] },
    page: {
      label: 'Authenticator app',
      help: 'Just set it up? Wait for the next code: each code works once.',
      inputs: [
        {
          field: 'pass_code',
          label: 'Code from your authenticator app',
          autocomplete: 'one-time-code',
          inputmode: 'numeric',
        },
      ],
    },
    async isEnrolled(ctx) {
      return (await ctx.credentials.list(SEED_CREDENTIAL)).length > 0;
    },
    async initiate() {
      return { ok: true };
    },
    verify: (ctx) => verifyCode(ctx, services, settings),
    enrollment: totpEnrollment(services, settings),
  };
}

async function verifyCode(ctx: VerifyContext, services: Services, settings: TotpSettings): Promise<VerifyOutcome> {
  const token = ctx.fields.pass_code ?? '';
  if (!/^[0-9]{6,8}$/.test(token)) return { ok: false, reason: 'malformed' };
  const enrolled = await ctx.credentials.list(SEED_CREDENTIAL);
  if (enrolled.length === 0) {
    return { ok: false, reason: isWellFormed(token, settings.digits) ? 'not_enrolled' : 'malformed' };
  }
  // An imported seed may have its own digits, period and hash (docs/migration.md).
  const seeds = enrolled.filter((seed) => isWellFormed(token, seedOptions(seed, settings).digits));
  if (seeds.length === 0) return { ok: false, reason: 'malformed' };
  const now = services.clock.now();

  for (const seed of seeds) {
    const secret = openSeed(services, seed);
    const options = seedOptions(seed, settings);
    const timeStep = await matchTimeStep({ secret, token, now, ...options, afterTimeStep: seed.counter });
    if (timeStep !== null) {
      // The conditional update is what makes the step single use across concurrent requests.
      return { ok: true, commit: () => ctx.credentials.advanceCounter(seed.id, timeStep) };
    }
  }

  // Tell a replay (a right code of a spent step) apart for the event log, which must record reuse.
  for (const seed of seeds) {
    const spent = await matchTimeStep({ secret: openSeed(services, seed), token, now, ...seedOptions(seed, settings) });
    // The code that confirmed the setup, typed again for the first sign-in: the user's own, not
    // a copy someone else replays. Refused (the step is spent) without a sign-in alert.
    if (spent !== null && spent === seed.data.setup_step) return { ok: false, reason: 'setup_code' };
    if (spent !== null) {
      ctx.logger.warn(
        { userId: ctx.user.id, credentialId: seed.id, timeStep: spent },
        'TOTP code of a spent time step refused',
      );
      return { ok: false, reason: 'replay' };
    }
  }
  return { ok: false, reason: 'mismatch' };
}

/** The code options of a seed: an imported one's own, else the method's. */
function seedOptions(seed: Credential, settings: TotpSettings): Pick<CodeCheck, 'digits' | 'period' | 'algorithm'> {
  const { digits, period, algorithm } = seed.data;
  return {
    digits: typeof digits === 'number' ? digits : settings.digits,
    ...(typeof period === 'number' ? { period } : {}),
    ...(algorithm === 'sha256' || algorithm === 'sha512' ? { algorithm } : {}),
  };
}

function openSeed(services: Services, seed: Credential): string {
  if (!seed.secret) throw new Error(`TOTP credential ${seed.id} has no secret`);
  return services.secrets.decrypt(seed.secret);
}
