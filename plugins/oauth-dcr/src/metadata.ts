import { OAuthError } from '@gatehouse-auth/core';

/** What the options allow a registered client (see `dcrOptions`). */
export interface Policy {
  allowedScopes: string[];
  allowedGrantTypes: string[];
  loginStages: string[][];
  clientIdPrefix: string;
  /** Whether a registered client may give a `jwks_uri` (which every node then fetches). */
  allowJwksUri: boolean;
}

/** RFC 7591 §2 metadata this plugin registers; anything else sent is ignored (and never echoed). */
export const INFO_FIELDS = ['contacts', 'logo_uri', 'client_uri', 'policy_uri', 'tos_uri'] as const;

/** Client authentication methods a registered client may use (RFC 7591 §2). */
export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'];

/** Fields the server sets: a client sending them in an update is refused (RFC 7592 §2.2). */
export const SERVER_FIELDS = [
  'registration_access_token',
  'registration_client_uri',
  'client_id_issued_at',
  'client_secret_expires_at',
];

const bad = (description: string) => new OAuthError('invalid_client_metadata', description, 400);

function strings(value: unknown, field: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === ''))
    throw bad(`${field} must be an array of strings`);
  return value as string[];
}

function text(value: unknown, field: string, max = 2000): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '' || value.length > max)
    throw bad(`${field} must be a string of at most ${max} characters`);
  return value;
}

/** An informational URL (logo, home page, policy, terms): https only, shown to nobody by Gatehouse. */
function webUrl(value: unknown, field: string): string | undefined {
  const url = text(value, field);
  if (url === undefined) return undefined;
  if (!URL.canParse(url) || new URL(url).protocol !== 'https:') throw bad(`${field} must be an https URL`);
  return url;
}

/** The registration's result: the app entry (as the config's apps[] has it) and the echoed metadata. */
export interface Mapped {
  entry: Record<string, unknown>;
  /** The informational metadata kept beside the app (contacts, logo_uri, …). */
  info: Record<string, unknown>;
}

/**
 * RFC 7591 §2 client metadata to an app entry, within the policy: grant types, response types
 * and scopes only among those allowed; the login stages, consent and the client id are the
 * server's, never the client's. The redirect URIs and the rest are checked afterwards by the
 * client store as a config app's are.
 */
export function toEntry(body: Record<string, unknown>, policy: Policy): Mapped {
  if (body.software_statement !== undefined)
    throw new OAuthError('unapproved_software_statement', 'software statements are not supported by this server', 400);
  const method = body.token_endpoint_auth_method ?? 'client_secret_basic';
  if (typeof method !== 'string' || !AUTH_METHODS.includes(method))
    throw bad(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`);
  const hasKeys = body.jwks !== undefined || body.jwks_uri !== undefined;
  if (body.jwks !== undefined && body.jwks_uri !== undefined) throw bad('jwks and jwks_uri are mutually exclusive');
  if (method === 'private_key_jwt' && !hasKeys) throw bad('private_key_jwt needs jwks or jwks_uri');

  const grantTypes = strings(body.grant_types, 'grant_types') ?? ['authorization_code'];
  for (const grant of grantTypes) {
    if (!policy.allowedGrantTypes.includes(grant))
      throw bad(`grant_types: ${grant} is not allowed for registered clients`);
  }
  if (method === 'none' && grantTypes.includes('client_credentials'))
    throw bad('client_credentials needs a confidential client');
  const wantsCode = grantTypes.includes('authorization_code');
  const responseTypes = strings(body.response_types, 'response_types') ?? (wantsCode ? ['code'] : []);
  for (const type of responseTypes) {
    if (type !== 'code') throw bad(`response_types: ${type} is not supported (only code)`);
  }
  if (responseTypes.length > 0 && !wantsCode) throw bad('response_types code needs the authorization_code grant');

  const redirectUris = strings(body.redirect_uris, 'redirect_uris') ?? [];
  if (wantsCode && redirectUris.length === 0)
    throw new OAuthError('invalid_redirect_uri', 'redirect_uris: at least one is needed', 400);

  let scopes = policy.allowedScopes;
  if (body.scope !== undefined) {
    if (typeof body.scope !== 'string') throw bad('scope must be a space-separated string');
    scopes = [...new Set(body.scope.split(' ').filter((s) => s !== ''))];
    const refused = scopes.filter((s) => !policy.allowedScopes.includes(s));
    if (refused.length) throw bad(`scope: ${refused.join(' ')} is not allowed for registered clients`);
    if (scopes.length === 0) throw bad('scope: empty');
  }

  const entry: Record<string, unknown> = {
    name: text(body.client_name, 'client_name', 200) ?? 'Registered client',
    token_endpoint_auth_method: method,
    redirect_uris: redirectUris,
    grant_types: grantTypes,
    response_types: wantsCode ? ['code'] : [],
    scopes,
    login_stages: policy.loginStages,
    // A registered client is a third party: the user is always asked before it gets anything.
    consent_required: true,
  };
  const postLogout = strings(body.post_logout_redirect_uris, 'post_logout_redirect_uris');
  if (postLogout) entry.post_logout_redirect_uris = postLogout;
  if (body.jwks !== undefined) entry.jwks = body.jwks;
  if (body.jwks_uri !== undefined) {
    // The server fetches it: a request any registrant could aim at the internal network (SSRF).
    if (!policy.allowJwksUri) throw bad('jwks_uri is not accepted here: give the keys as jwks');
    entry.jwks_uri = webUrl(body.jwks_uri, 'jwks_uri');
  }
  if (body.id_token_signed_response_alg !== undefined)
    entry.id_token_signed_response_alg = text(body.id_token_signed_response_alg, 'id_token_signed_response_alg', 20);

  const info: Record<string, unknown> = {};
  const contacts = strings(body.contacts, 'contacts');
  if (contacts) {
    if (contacts.length > 10 || contacts.some((c) => c.length > 320)) throw bad('contacts: at most 10, each short');
    info.contacts = contacts;
  }
  for (const field of ['logo_uri', 'client_uri', 'policy_uri', 'tos_uri'] as const) {
    const url = webUrl(body[field], field);
    if (url !== undefined) info[field] = url;
  }
  return { entry, info };
}

/** The registered metadata as RFC 7591 §3.2.1 answers it, from the app entry and the kept info. */
export function toMetadata(app: Record<string, unknown>, info: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    client_name: app.name,
    token_endpoint_auth_method: app.token_endpoint_auth_method,
    redirect_uris: app.redirect_uris ?? [],
    grant_types: app.grant_types,
    response_types: app.response_types,
    scope: Array.isArray(app.scopes) ? app.scopes.join(' ') : undefined,
  };
  for (const key of ['post_logout_redirect_uris', 'jwks', 'jwks_uri', 'id_token_signed_response_alg']) {
    if (app[key] !== undefined) out[key] = app[key];
  }
  return { ...out, ...info };
}

/** A client store refusal (400 INVALID_APP) as RFC 7591 §3.2.2 names it. */
export function storeRefusal(message: string): OAuthError {
  // The check's messages start with the field: "redirect_uris.0: …" (not post_logout_redirect_uris).
  if (/(^|[\s.:])redirect_uris\b/.test(message)) return new OAuthError('invalid_redirect_uri', message, 400);
  return bad(message);
}
