import { verify } from 'otplib';

/** RFC 6238 time step length; authenticator apps assume 30 s. */
export const PERIOD_SECONDS = 30;

export interface CodeCheck {
  /** Base32 seed (decrypted). */
  secret: string;
  token: string;
  /** Server time. */
  now: Date;
  digits: number;
  /** Time step length in seconds (an imported seed's own; default 30). */
  period?: number;
  /** HMAC hash (an imported seed's own; default sha1). */
  algorithm?: 'sha1' | 'sha256' | 'sha512';
  /** Only steps strictly after this one are accepted (replay protection); omit to accept any. */
  afterTimeStep?: number;
}

/** Whether `token` is exactly `digits` decimal digits; anything else is never checked. */
export function isWellFormed(token: string, digits: number): boolean {
  return token.length === digits && /^[0-9]+$/.test(token);
}

/**
 * The time step `token` belongs to, within ±1 step of the server clock, or null. otplib
 * compares in constant time and skips steps at or before `afterTimeStep`.
 */
export async function matchTimeStep(check: CodeCheck): Promise<number | null> {
  const epoch = Math.floor(check.now.getTime() / 1000);
  const period = check.period ?? PERIOD_SECONDS;
  const latestStep = Math.floor((epoch + period) / period);
  const result = await verify({
    secret: check.secret,
    token: check.token,
    digits: check.digits,
    period,
    algorithm: check.algorithm ?? 'sha1',
    epoch,
    epochTolerance: period,
    // otplib throws when afterTimeStep lies beyond the window; every step is spent then anyway.
    ...(check.afterTimeStep === undefined ? {} : { afterTimeStep: Math.min(check.afterTimeStep, latestStep) }),
  });
  // The union type also covers HOTP results, which carry no time step.
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}
