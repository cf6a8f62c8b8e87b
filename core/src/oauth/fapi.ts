/**
 * The FAPI 2.0 Security Profile (OpenID FAPI 2.0, final 2025) for the apps that name it with
 * `security_profile: fapi2` (decision 0053): what the core refuses for them, kept in one place.
 * The core enforces it where it already decides (config check, start-up, /authorize, the token
 * endpoint, client authentication); docs/oauth.md has each requirement and its test.
 */
import type { SecurityProfile } from '@gatehouse-auth/plugin-api';

/** §5.3.2.1 (6), §5.3.3.4: client authentication by private_key_jwt or mutual TLS (RFC 8705). */
export const FAPI2_AUTH_METHODS: readonly string[] = ['private_key_jwt', 'tls_client_auth'];

/** §5.4.1: the JWS algorithms, of client assertions and of what the server signs (RSA keys: 2048 bits at least). */
export const FAPI2_SIGNING_ALGS = ['PS256', 'ES256', 'EdDSA'];

/** §5.3.2.1 (11): authorization codes live 60 seconds at most. */
export const FAPI2_MAX_CODE_TTL = 60;

/** §5.4.1 (2): RSA keys of at least 2048 bits. */
const FAPI2_MIN_RSA_BITS = 2048;

/** §5.3.2.1 (2) and §5.3.2.2 (1): no password grant, no implicit (or hybrid) flow. */
const FAPI2_FORBIDDEN_GRANTS = ['password', 'implicit'];

/** Whether the app is held to FAPI 2.0. */
export function isFapi2(client: { securityProfile?: SecurityProfile | null }): boolean {
  return client.securityProfile === 'fapi2';
}

/**
 * Whether a token request binds the tokens it gets to a key the client proved (§5.3.2.1 (4):
 * sender-constrained access tokens): a DPoP proof (`cnf.jkt`, RFC 9449) or a client
 * certificate (`cnf.x5t#S256`, RFC 8705), whichever binding plugins are loaded.
 */
export function senderConstrained(confirmation: { jkt?: string; 'x5t#S256'?: string } | null): boolean {
  return confirmation?.jkt !== undefined || confirmation?.['x5t#S256'] !== undefined;
}

/** What the FAPI 2.0 checks of an app entry read (the config schema's output has all of it). */
interface FapiAppFields {
  token_endpoint_auth_method?: string | undefined;
  client_secret?: string | undefined;
  client_secret_sha256?: string | undefined;
  jwks?: { keys: { kty: string; n?: unknown }[] } | undefined;
  jwks_uri?: string | undefined;
  grant_types?: string[] | undefined;
  response_types: string[];
  redirect_uris: string[];
  code_ttl: number;
  id_token_signed_response_alg: string;
  access_token_signed_response_alg: string;
}

/** An app entry's breaches of FAPI 2.0, each with the key it is about: the config check refuses each. */
export function fapi2AppIssues(app: FapiAppFields): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  const refuse = (path: (string | number)[], message: string) => issues.push({ path, message });
  const hasKeys = Boolean(app.jwks || app.jwks_uri);
  const hasSecret = Boolean(app.client_secret || app.client_secret_sha256);
  // The method the app would authenticate with (clients.ts decides it the same way).
  const method =
    app.token_endpoint_auth_method ?? (hasKeys ? 'private_key_jwt' : hasSecret ? 'client_secret_basic' : 'none');
  if (!FAPI2_AUTH_METHODS.includes(method)) {
    refuse(
      ['token_endpoint_auth_method'],
      `is ${method}; a FAPI 2.0 app (security_profile fapi2) is a confidential client that authenticates with private_key_jwt or tls_client_auth`,
    );
  }
  app.response_types.forEach((type, i) => {
    if (type !== 'code') refuse(['response_types', i], `${type}: a FAPI 2.0 app uses response_type code only`);
  });
  app.grant_types?.forEach((grant, i) => {
    if (FAPI2_FORBIDDEN_GRANTS.includes(grant)) refuse(['grant_types', i], `${grant}: FAPI 2.0 forbids this grant`);
  });
  for (const key of ['id_token_signed_response_alg', 'access_token_signed_response_alg'] as const) {
    if (!FAPI2_SIGNING_ALGS.includes(app[key])) {
      refuse([key], `is ${app[key]}; a FAPI 2.0 app's tokens are signed PS256, ES256 or EdDSA`);
    }
  }
  if (app.code_ttl > FAPI2_MAX_CODE_TTL)
    refuse(['code_ttl'], `must be at most ${FAPI2_MAX_CODE_TTL} seconds for a FAPI 2.0 app`);
  app.redirect_uris.forEach((uri, i) => {
    if (!uri.startsWith('https://')) refuse(['redirect_uris', i], 'must be https for a FAPI 2.0 app');
  });
  app.jwks?.keys.forEach((key, i) => {
    const bits = key.kty === 'RSA' && typeof key.n === 'string' ? Buffer.from(key.n, 'base64url').length * 8 : null;
    if (bits !== null && bits < FAPI2_MIN_RSA_BITS) {
      refuse(['jwks', 'keys', i], `an RSA key of a FAPI 2.0 app has at least ${FAPI2_MIN_RSA_BITS} bits`);
    }
  });
  return issues;
}
