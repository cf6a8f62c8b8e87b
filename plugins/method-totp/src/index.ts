/**
 * @gatehouse-auth/method-totp — the TOTP verification method (RFC 6238, otplib v13): seeds
 * encrypted at rest, ±1 time step on the server clock, each time step accepted once.
 */
import { definePlugin, z } from '@gatehouse-auth/core';
import { totpMethod } from './method.js';

export const totpOptions = z
  .strictObject({
    /** Issuer shown in the authenticator app (otpauth URI). */
    issuer: z.string().min(1).default('Gatehouse'),
    /** Code length; most apps only support 6. */
    digits: z.int().min(6).max(8).default(6),
  })
  .prefault({});

export type TotpOptions = z.infer<typeof totpOptions>;

export { totpMethod } from './method.js';
export { SEED_CREDENTIAL, type TotpSettings } from './settings.js';

export default definePlugin({
  name: '@gatehouse-auth/method-totp',
  apiVersion: '^1',
  options: totpOptions,
  register(api, options) {
    api.methods.add(totpMethod(api.services, options));
  },
});
