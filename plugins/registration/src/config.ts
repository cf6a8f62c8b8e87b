import { z } from '@gatehouse-auth/core';

/** The fields a registration form may ask for: the user record's, then OIDC profile claims. */
export const FIELD_NAMES = [
  'username',
  'email',
  'phone',
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'birthdate',
  'gender',
  'locale',
  'zoneinfo',
  'website',
  'picture',
] as const;
export type FieldName = (typeof FIELD_NAMES)[number];

/** The fields that name the account (the rest are profile claims). */
export const ACCOUNT_FIELDS: readonly FieldName[] = ['username', 'email', 'phone'];

export const pluginOptions = z
  .strictObject({
    /** The delivery channel of email codes and of notices to an address's owner. */
    email_channel: z.string().min(1).optional(),
    /** The delivery channel of SMS codes and notices. */
    sms_channel: z.string().min(1).optional(),
    /** The method whose enrollment sets the password (its policy applies). */
    password_method: z.string().min(1).default('PASSWORD'),
    /**
     * The methods a proven address counts as completed in the login (decision 46): the email
     * code as `EMAIL`, the SMS code as `SMS`, when those methods are registered.
     */
    proven_methods: z
      .strictObject({ email: z.string().min(1).default('EMAIL'), sms: z.string().min(1).default('SMS') })
      .prefault({}),
    /** Minutes a code (and the registration waiting for it) lasts. */
    code_ttl_minutes: z.number().int().min(1).max(60).default(10),
    code_length: z.number().int().min(6).max(10).default(6),
    /** Wrong codes before the registration is dropped. */
    max_attempts: z.number().int().min(1).max(10).default(5),
    /** Registrations one address may start per hour (every node). */
    per_ip_per_hour: z.number().int().min(1).default(10),
    /** Codes or notices one email address or phone number may get per hour (every node). */
    per_address_per_hour: z.number().int().min(1).default(3),
  })
  .prefault({});
export type RegistrationOptions = z.output<typeof pluginOptions>;

const field = z.strictObject({ name: z.enum(FIELD_NAMES), required: z.boolean().default(false) });

/** An app's `registration` key (off by default). */
export const appRegistration = z
  .strictObject({
    enabled: z.boolean().default(false),
    fields: z
      .array(field)
      .min(1)
      .default([{ name: 'email', required: true }]),
    /** The version of the terms a registrant must accept; none: no terms to accept. */
    terms_version: z.string().min(1).max(64).optional(),
    /** Where the terms are read (shown as a link beside the checkbox). */
    terms_url: z.url({ protocol: /^https?$/ }).optional(),
    /** `code`: the address is proven by a code before the account exists; `none`: made at once, unverified. */
    verify: z.enum(['code', 'none']).default('code'),
    /**
     * The cidaas user-existence call (`/useractions-srv/userexistence`): `hidden` answers the same
     * for every identifier; `answer` tells the truth (an enumeration oracle the app accepts).
     */
    user_existence: z.enum(['hidden', 'answer']).default('hidden'),
  })
  .prefault({})
  .superRefine((app, ctx) => {
    const names = app.fields.map((f) => f.name);
    if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', message: 'a field is listed twice' });
    const requiredAddress = app.fields.some((f) => (f.name === 'email' || f.name === 'phone') && f.required);
    if (app.verify === 'code' && !requiredAddress) {
      ctx.addIssue({ code: 'custom', message: 'verify: code needs a required email or phone field' });
    }
    if (!app.fields.some((f) => ACCOUNT_FIELDS.includes(f.name) && f.required)) {
      ctx.addIssue({ code: 'custom', message: 'needs a required username, email or phone field' });
    }
  });
export type AppRegistration = z.output<typeof appRegistration>;

/** The address a code proves: the email when the app requires one, else the phone. */
export function provenMedium(app: AppRegistration): 'email' | 'sms' {
  return app.fields.some((f) => f.name === 'email' && f.required) ? 'email' : 'sms';
}
