import type { Clock, JsonObject, RecordStore, UserProfile } from '@gatehouse-auth/plugin-api';
import { z } from 'zod';
import { ApiError } from '../errors.js';

const text = (max: number) => z.string().trim().min(1).max(max);
const url = z
  .string()
  .max(2048)
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'must be an http(s) URL');

/**
 * The standard claims of OIDC Core §5.1 kept per user, besides those the user record holds
 * (sub, preferred_username = username, email, phone_number).
 */
const profileSchema = z.strictObject({
  name: text(255),
  given_name: text(255),
  family_name: text(255),
  middle_name: text(255),
  nickname: text(255),
  profile: url,
  picture: url,
  website: url,
  gender: text(64),
  birthdate: z.string().regex(/^\d{4}(-\d{2}-\d{2})?$/, 'must be YYYY-MM-DD (or YYYY)'),
  zoneinfo: z.string().refine((v) => Intl.supportedValuesOf('timeZone').includes(v) || v === 'UTC', {
    message: 'must be an IANA time zone such as Europe/Paris',
  }),
  locale: z.string().regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/, 'must be a BCP 47 language tag such as de-DE'),
  address: z.strictObject({
    formatted: text(1024).optional(),
    street_address: text(512).optional(),
    locality: text(255).optional(),
    region: text(255).optional(),
    postal_code: text(64).optional(),
    country: text(255).optional(),
  }),
});

/** A JSON merge patch of the profile (RFC 7396): a claim's value sets it, `null` removes it. */
export const profilePatchSchema = z.strictObject(
  Object.fromEntries(Object.entries(profileSchema.shape).map(([k, v]) => [k, v.nullable().optional()])) as {
    [K in keyof typeof profileSchema.shape]: z.ZodOptional<z.ZodNullable<(typeof profileSchema.shape)[K]>>;
  },
);

// The contract writes the claims out (`UserProfile`); `parseProfile` checks the schema matches it.
export type { UserProfile } from '@gatehouse-auth/plugin-api';

/** The profile claims a user may have, in OIDC's order. */
export const PROFILE_CLAIMS = Object.keys(profileSchema.shape) as (keyof z.output<typeof profileSchema>)[];

/**
 * Users' profile claims. An update is a JSON merge patch (RFC 7396): a member sets a claim,
 * `null` removes it, the rest stay; a bad value refuses the whole patch and changes nothing.
 */
export class UserProfiles {
  constructor(
    private readonly records: RecordStore,
    private readonly clock: Clock,
  ) {}

  async get(userId: string): Promise<UserProfile> {
    return ((await this.records.get(userId))?.data ?? {}) as UserProfile;
  }

  async update(userId: string, patch: unknown): Promise<UserProfile> {
    if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
      throw new ApiError(400, 'INVALID_FIELD', 'the profile must be a JSON object', { field: 'profile' });
    }
    const current = await this.get(userId);
    const next: Record<string, unknown> = { ...current };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete next[key];
      else next[key] = value;
    }
    delete next.updated_at;
    const parsed = parseProfile(next);
    if (!parsed.ok)
      throw new ApiError(400, 'INVALID_FIELD', `${parsed.field} ${parsed.message}`, { field: parsed.field });
    const stored = { ...parsed.profile, updated_at: Math.floor(this.clock.now().getTime() / 1000) };
    await this.records.put(userId, stored as JsonObject);
    return stored;
  }
}

/** A whole profile checked (the claims given, no `updated_at`), or the first claim refused and why. */
export function parseProfile(
  value: Record<string, unknown>,
): { ok: true; profile: UserProfile } | { ok: false; field: string; message: string } {
  const parsed = profileSchema.partial().safeParse(value);
  if (parsed.success) return { ok: true, profile: parsed.data };
  const issue = parsed.error.issues[0]!;
  const field = issue.path.join('.') || (issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : 'profile');
  return { ok: false, field, message: issue.code === 'unrecognized_keys' ? 'is not a profile claim' : issue.message };
}
