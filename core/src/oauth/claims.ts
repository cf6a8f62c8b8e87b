import type { JsonObject, JsonValue, OAuthClient, UserRecord } from '@gatehouse-auth/plugin-api';
import { PROFILE_CLAIMS, type UserProfiles } from '../users/profile.js';

/** OIDC Core §5.4: the claims each scope asks for. */
export const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  profile: [...PROFILE_CLAIMS.filter((c) => c !== 'address'), 'preferred_username', 'updated_at'],
  email: ['email', 'email_verified'],
  address: ['address'],
  phone: ['phone_number', 'phone_number_verified'],
};

/** The scope a user claim belongs to. */
const SCOPE_OF = new Map(Object.entries(SCOPE_CLAIMS).flatMap(([scope, claims]) => claims.map((c) => [c, scope])));

/** Every user claim Gatehouse can return (sub aside). */
export const USER_CLAIMS = [...SCOPE_OF.keys()];

/** One requested claim (OIDC Core §5.5.1): null, or how much it matters and what value is wanted. */
export type ClaimRequest = { essential?: boolean; value?: JsonValue; values?: JsonValue[] } | null;

/** The `claims` request parameter (OIDC Core §5.5), as validated. */
export interface ClaimsRequest {
  userinfo?: Record<string, ClaimRequest>;
  id_token?: Record<string, ClaimRequest>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseMember(value: unknown, member: string): Record<string, ClaimRequest> {
  if (!isObject(value)) throw new Error(`claims.${member} must be an object`);
  const out: Record<string, ClaimRequest> = {};
  for (const [name, request] of Object.entries(value)) {
    if (request === null) {
      out[name] = null;
      continue;
    }
    if (!isObject(request)) throw new Error(`claims.${member}.${name} must be null or an object`);
    const { essential, value: wanted, values } = request;
    if (essential !== undefined && typeof essential !== 'boolean') {
      throw new Error(`claims.${member}.${name}.essential must be a boolean`);
    }
    if (values !== undefined && !Array.isArray(values))
      throw new Error(`claims.${member}.${name}.values must be an array`);
    out[name] = {
      ...(essential !== undefined ? { essential } : {}),
      ...(wanted !== undefined ? { value: wanted as JsonValue } : {}),
      ...(values !== undefined ? { values: values as JsonValue[] } : {}),
    };
  }
  return out;
}

/** Parses the `claims` parameter: a JSON object with `userinfo` and/or `id_token`; throws with the reason. */
export function parseClaimsRequest(raw: string): ClaimsRequest {
  if (raw.length > 4096) throw new Error('claims is too long');
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('claims must be a JSON object');
  }
  if (!isObject(parsed)) throw new Error('claims must be a JSON object');
  const out: ClaimsRequest = {};
  // Other members are for extensions this server does not have: ignored (§5.5).
  if (parsed.userinfo !== undefined) out.userinfo = parseMember(parsed.userinfo, 'userinfo');
  if (parsed.id_token !== undefined) out.id_token = parseMember(parsed.id_token, 'id_token');
  return out;
}

/** What the claims need of the rest of the server. */
export interface ClaimsDeps {
  users: { findById(id: string): Promise<UserRecord | null> };
  profiles: UserProfiles;
  /** Whether the user proved the address on the user record (account verification). */
  verified(user: UserRecord, medium: 'email' | 'sms'): Promise<boolean>;
}

/** The claims the granted scopes stand for (OIDC §5.4). */
export const scopeClaims = (scope: string[]): string[] => [...new Set(scope.flatMap((s) => SCOPE_CLAIMS[s] ?? []))];

/**
 * The claims the `claims` parameter names that may be released: only if the app may have the
 * claim's scope at all, and where the app asks for consent, only within the consented scopes.
 */
export function namedClaims(
  client: OAuthClient,
  scope: string[],
  requested: Record<string, ClaimRequest> | undefined,
): string[] {
  const allowedScopes = client.consentRequired ? scope : client.scopes;
  return Object.keys(requested ?? {}).filter((c) => allowedScopes.includes(SCOPE_OF.get(c) ?? ''));
}

/** Looks up the values of user claims: the user record, the stored profile, the verified flags. */
export class UserClaims {
  constructor(private readonly deps: ClaimsDeps) {}

  /** The values of `names` the user has (a claim without a value is left out, OIDC §5.3.2); null if no user. */
  async of(userId: string, names: string[]): Promise<JsonObject | null> {
    const user = await this.deps.users.findById(userId);
    if (!user) return null;
    if (!names.length) return {};
    const wanted = new Set(names);
    const profile: Record<string, unknown> = names.some((n) => SCOPE_OF.get(n) === 'profile' || n === 'address')
      ? await this.deps.profiles.get(user.id)
      : {};
    const out: JsonObject = {};
    for (const name of PROFILE_CLAIMS) {
      if (wanted.has(name) && profile[name] !== undefined) out[name] = profile[name] as JsonValue;
    }
    if (wanted.has('preferred_username')) out.preferred_username = user.username;
    if (wanted.has('updated_at') && typeof profile.updated_at === 'number') out.updated_at = profile.updated_at;
    if (user.email && wanted.has('email')) out.email = user.email;
    if (user.email && wanted.has('email_verified')) out.email_verified = await this.deps.verified(user, 'email');
    if (user.phone && wanted.has('phone_number')) out.phone_number = user.phone;
    if (user.phone && wanted.has('phone_number_verified')) {
      out.phone_number_verified = await this.deps.verified(user, 'sms');
    }
    return out;
  }
}
