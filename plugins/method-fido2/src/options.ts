import { z } from '@gatehouse-auth/core';

/** COSE algorithms: Ed25519 (-8), ES256 (-7), RS256 (-257, Windows Hello). */
const ALGORITHMS = [-8, -7, -257] as const;

/** Options of `@gatehouse-auth/method-fido2`. */
export const fido2Options = z.strictObject({
  /** The relying party id: the issuer's host name or a parent domain of it (`id.example.com`, `example.com`). */
  rp_id: z.string().min(1),
  /** The name authenticators show next to the passkey. */
  rp_name: z.string().min(1).default('Gatehouse'),
  /** Origins a ceremony may come from (exact: scheme, host and port), e.g. the issuer's. */
  origins: z.array(z.url()).min(1),
  /** `none` (default: no attestation statement is asked for, so no device model is learnt) or `direct`. */
  attestation: z.enum(['none', 'direct']).default('none'),
  /** Accepted signature algorithms (COSE ids), from ES256, Ed25519 and RS256. */
  algorithms: z
    .array(z.literal(ALGORITHMS))
    .min(1)
    .default([...ALGORITHMS]),
  /** How long the browser waits for the user (ms). */
  timeout_ms: z.int().min(10_000).max(600_000).default(300_000),
});
export type Fido2Options = z.infer<typeof fido2Options>;

/** Per-app options (`apps[i].methods.FIDO2`). */
export const fido2AppOptions = z
  .strictObject({
    /**
     * `required`: only a passkey unlocked by a PIN or biometric counts. A first stage without a
     * username always requires it (the passkey is then the whole sign-in).
     */
    user_verification: z.enum(['required', 'preferred']).default('preferred'),
  })
  .prefault({});
export type Fido2AppOptions = z.infer<typeof fido2AppOptions>;
