import type { EnrollmentContext, EnrollmentHandlers, EnrollmentOutcome, Services } from '@gatehouse-auth/core';
import { generateSecret, generateURI } from 'otplib';
import QRCode from 'qrcode';
import { isWellFormed, matchTimeStep, PERIOD_SECONDS } from './codes.js';
import { SEED_CREDENTIAL, type TotpSettings } from './settings.js';

/**
 * Setup in up to three steps: initiation (new seed, QR code), an optional scan report, and
 * verification of a first code, which stores the seed. Between steps `pending` is kept (by
 * management's `methodSetup`), which holds the seed encrypted only.
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

    // A seed from another system (docs/migration.md), sealed like an enrolled one.
    async import(input) {
      const seed = importedSeed(input);
      if (typeof seed === 'string') return { ok: false, message: seed };
      const { secret, ...data } = seed;
      return {
        ok: true,
        credentials: [{ type: SEED_CREDENTIAL, secret: services.secrets.encrypt(secret), counter: 0, data }],
      };
    },
  };
}

const ALGORITHMS: Record<string, 'sha1' | 'sha256' | 'sha512'> = {
  SHA1: 'sha1',
  SHA256: 'sha256',
  SHA512: 'sha512',
  HMACSHA1: 'sha1',
  HMACSHA256: 'sha256',
  HMACSHA512: 'sha512',
};

/**
 * `{ secret, digits?, period?, algorithm?, encoding? }`: a base32 seed (spaces and padding
 * ignored), or with `encoding: "raw"` the seed's text as Keycloak exports it (its `secretData`
 * value), which authenticator apps got base32-encoded. The seed, or why it is refused.
 */
export function importedSeed(
  input: unknown,
): { secret: string; digits?: number; period?: number; algorithm?: string; imported: true } | string {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return 'must be an object';
  const o = input as Record<string, unknown>;
  if (typeof o.secret !== 'string') return 'needs "secret" (the base32 seed)';
  const encoding = o.encoding ?? 'base32';
  if (encoding !== 'base32' && encoding !== 'raw') return 'encoding must be "base32" or "raw"';
  const secret =
    encoding === 'raw' ? base32(Buffer.from(o.secret, 'utf8')) : o.secret.replace(/[\s=]/g, '').toUpperCase();
  if (!/^[A-Z2-7]+$/.test(secret)) return 'secret is not base32 (A-Z, 2-7)';
  // RFC 4226 asks for 128 bits; 80 (16 characters) is what many older systems made.
  if (secret.length < 16) return 'secret is shorter than 80 bits (16 base32 characters)';
  const out: { secret: string; digits?: number; period?: number; algorithm?: string; imported: true } = {
    secret,
    imported: true,
  };
  if (o.digits !== undefined) {
    if (!Number.isInteger(o.digits) || (o.digits as number) < 6 || (o.digits as number) > 8)
      return 'digits must be 6, 7 or 8';
    out.digits = o.digits as number;
  }
  if (o.period !== undefined) {
    if (!Number.isInteger(o.period) || (o.period as number) < 10 || (o.period as number) > 300) {
      return 'period must be 10-300 seconds';
    }
    if (o.period !== PERIOD_SECONDS) out.period = o.period as number;
  }
  if (o.algorithm !== undefined) {
    const algorithm = ALGORITHMS[String(o.algorithm).toUpperCase().replace(/-/g, '')];
    if (!algorithm) return 'algorithm must be SHA1, SHA256 or SHA512';
    if (algorithm !== 'sha1') out.algorithm = algorithm;
  }
  return out;
}

/** RFC 4648 base32, no padding. */
function base32(bytes: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const byte of bytes) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += alphabet[(acc >>> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return bits > 0 ? out + alphabet[(acc << (5 - bits)) & 31] : out;
}

function sealedSeed(ctx: EnrollmentContext): string | null {
  const sealed = ctx.pending?.sealed;
  return typeof sealed === 'string' ? sealed : null;
}

function notStarted(): EnrollmentOutcome {
  return { ok: false, code: 'ENROLLMENT_NOT_STARTED', status: 400, message: 'Start the TOTP setup first.' };
}
