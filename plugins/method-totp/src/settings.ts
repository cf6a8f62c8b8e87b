/** Credential type of an enrolled seed: secret = sealed base32 seed, counter = last accepted step. */
export const SEED_CREDENTIAL = 'seed';

/** What the method needs from the plugin options. */
export interface TotpSettings {
  /** Issuer label in the otpauth URI. */
  issuer: string;
  /** Code length. */
  digits: number;
}
