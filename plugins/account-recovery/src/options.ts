import { z } from '@gatehouse-auth/core';

const methodId = z.string().min(1);

/** Options of `@gatehouse-auth/account-recovery`. */
export const recoveryOptions = z
  .strictObject({
    /** The delivery channel that sends codes and notices by email. */
    email_channel: z.string().min(1).optional(),
    /** The delivery channel that sends codes and notices by SMS (users without an email address). */
    sms_channel: z.string().min(1).optional(),
    /** How long a code, and the reset it starts, lasts (minutes). */
    code_ttl_minutes: z.number().int().min(1).max(60).default(15),
    /** Wrong codes a reset allows before it is gone. */
    max_attempts: z.number().int().min(1).max(10).default(5),
    /** Codes sent for one identifier within an hour; further requests answer the same and send nothing. */
    max_codes_per_identifier: z.number().int().min(1).max(20).default(3),
    /** Resets one address may start within 15 minutes (429 after). */
    max_starts_per_address: z.number().int().min(1).default(20),
    /**
     * The methods a user with a second factor proves it with, on the hosted login page (one stage
     * of the plugin's app `gatehouse-recovery`). Each must be registered.
     */
    second_factors: z.array(methodId).min(1).default(['TOTP', 'BACKUPCODE']),
    /**
     * Methods that do not make a second factor: the password itself always, and these (an email
     * code proves the same mailbox the reset code went to).
     */
    not_second_factors: z.array(methodId).default(['EMAIL']),
    /**
     * A lost second factor removed by the user who proves their password and a backup code
     * (/recovery/factor, the app `gatehouse-recovery-factor`); needs the PASSWORD and BACKUPCODE
     * methods registered.
     */
    lost_factor: z.boolean().default(false),
  })
  .refine((o) => o.email_channel || o.sms_channel, {
    message: 'name email_channel or sms_channel: codes need a way to reach the user',
  });

export type RecoveryOptions = z.output<typeof recoveryOptions>;
