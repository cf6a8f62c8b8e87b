import type { EnrollmentContext, EnrollmentHandlers, EnrollmentOutcome, Services } from '@gatehouse-auth/core';
import { generateSecret, generateURI } from 'otplib';
import QRCode from 'qrcode';
import { isWellFormed, matchTimeStep, PERIOD_SECONDS } from './codes.js';
import { SEED_CREDENTIAL, type TotpSettings } from './settings.js';

/**
 * Setup in up to three steps: initiation (new seed, QR code), an optional scan report, and
 * verification of a first code, which stores the seed. Between steps the core keeps `pending`,
 * which holds the seed encrypted only.
 */
export function totpEnrollment(services: Services, settings: TotpSettings): EnrollmentHandlers {
  return {
    async initiate(ctx) {
      const secret = generateSecret(); // 20 bytes = 160 bits
      const otpauthUri = generateURI({
        issuer: settings.issuer,
        label: ctx.user.email ?? ctx.user.username,
        secret,
        digits: settings.digits,
        period: PERIOD_SECONDS,
      });
      return {
        ok: true,
        response: { otpauth_uri: otpauthUri, qr_code: await QRCode.toDataURL(otpauthUri), secret },
        pending: { sealed: services.secrets.encrypt(secret) },
      };
    },

    async scan(ctx) {
      if (!sealedSeed(ctx)) return notStarted();
      return { ok: true, response: { scanned: true }, pending: ctx.pending };
    },

    async verify(ctx) {
      const sealed = sealedSeed(ctx);
      if (!sealed) return notStarted();
      const token = ctx.body.pass_code;
      if (typeof token !== 'string') {
        return { ok: false, code: 'FIELD_MISSING', status: 400, message: 'The field "pass_code" is required.' };
      }
      const timeStep = isWellFormed(token, settings.digits)
        ? await matchTimeStep({
            secret: services.secrets.decrypt(sealed),
            token,
            now: services.clock.now(),
            digits: settings.digits,
          })
        : null;
      if (timeStep === null) {
        return { ok: false, code: 'VERIFICATION_FAILED', status: 401, message: 'The code is not valid.' };
      }
      // The confirming code's step counts as used, so it cannot also complete a login; kept in
      // data too, so that the user typing it again right away is not taken for a replay.
      await ctx.credentials.add({
        type: SEED_CREDENTIAL,
        secret: sealed,
        counter: timeStep,
        data: { setup_step: timeStep },
      });
      return { ok: true, done: true, pending: null, response: { enrolled: true } };
    },
  };
}

function sealedSeed(ctx: EnrollmentContext): string | null {
  const sealed = ctx.pending?.sealed;
  return typeof sealed === 'string' ? sealed : null;
}

function notStarted(): EnrollmentOutcome {
  return { ok: false, code: 'ENROLLMENT_NOT_STARTED', status: 400, message: 'Start the TOTP setup first.' };
}
