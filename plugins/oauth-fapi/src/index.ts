import {
  definePlugin,
  z,
  type ClientPolicy,
  type Clock,
  type Confirmation,
  type OAuthClient,
  type PolicyIssue,
  type ServerFeatures,
} from '@gatehouse-auth/core';

/**
 * The FAPI 2.0 Security Profile (OpenID FAPI 2.0, final 2025) for the apps that name it with
 * `security_profile: fapi2` (decisions 0053 and 0080): what is refused for them, kept in one
 * place, as a client policy the core consults where it decides (the app's config, start-up,
 * /authorize, client assertions, the token endpoint); docs/oauth.md has each requirement and its test.
 */

/** The `security_profile` values an app may name. */
export const SECURITY_PROFILES = ['fapi2'] as const;

/** The client policy's name: `client.policies` lists it for the apps it holds. */
export const FAPI2_POLICY = 'fapi2';

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

/** §5.3.2.1 (13): how far ahead a client assertion's `iat` may be (the `nbf` tolerance, 30 s). */
const CLOCK_SKEW_MS = 30_000;

/** The app key: the profile the app is held to. */
export const fapiAppConfig = {
  /**
   * A security profile the app is held to: `fapi2`, the FAPI 2.0 Security Profile (PAR, PKCE
   * S256, sender-constrained tokens, private_key_jwt; decision 0053, docs/oauth.md).
   */
  security_profile: z.enum(SECURITY_PROFILES).optional(),
};

/** Whether the app is held to FAPI 2.0. */
export const isFapi2 = (client: OAuthClient): boolean => client.settings.security_profile === 'fapi2';

/**
 * Whether a token request binds the tokens it gets to a key the client proved (§5.3.2.1 (4):
 * sender-constrained access tokens): a DPoP proof (`cnf.jkt`, RFC 9449) or a client
 * certificate (`cnf.x5t#S256`, RFC 8705), whichever binding plugins are loaded.
 */
export function senderConstrained(confirmation: Confirmation | null): boolean {
  return confirmation?.jkt !== undefined || confirmation?.['x5t#S256'] !== undefined;
}

/** What the FAPI 2.0 checks read of an app entry beyond its client: its public keys. */
interface FapiAppFields {
  jwks?: { keys: { kty: string; n?: unknown }[] } | undefined;
}

/**
 * An app's breaches of FAPI 2.0, each with the key it is about, and the plugins the profile
 * builds on that are not loaded: pushed authorization requests (§5.3.2.2 (2)) and
 * sender-constrained tokens (§5.3.2.1 (4)). Start-up, `config check` and the admin API refuse each.
 */
export function fapi2AppIssues(
  client: OAuthClient,
  entry: Readonly<Record<string, unknown>>,
  features: ServerFeatures,
): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  const refuse = (path: (string | number)[], message: string) => issues.push({ path, message });
  // The method the app authenticates with, as the core decided it (named, or from its keys or secret).
  const method = client.authMethod;
  if (!FAPI2_AUTH_METHODS.includes(method)) {
    refuse(
      ['token_endpoint_auth_method'],
      `is ${method}; a FAPI 2.0 app (security_profile fapi2) is a confidential client that authenticates with private_key_jwt or tls_client_auth`,
    );
  }
  client.responseTypes.forEach((type, i) => {
    if (type !== 'code') refuse(['response_types', i], `${type}: a FAPI 2.0 app uses response_type code only`);
  });
  client.grantTypes.forEach((grant, i) => {
    if (FAPI2_FORBIDDEN_GRANTS.includes(grant)) refuse(['grant_types', i], `${grant}: FAPI 2.0 forbids this grant`);
  });
  const algs = {
    id_token_signed_response_alg: client.idTokenAlg,
    access_token_signed_response_alg: client.accessTokenAlg,
  };
  for (const [key, alg] of Object.entries(algs)) {
    if (!FAPI2_SIGNING_ALGS.includes(alg)) {
      refuse([key], `is ${alg}; a FAPI 2.0 app's tokens are signed PS256, ES256 or EdDSA`);
    }
  }
  if (client.codeTtl > FAPI2_MAX_CODE_TTL)
    refuse(['code_ttl'], `must be at most ${FAPI2_MAX_CODE_TTL} seconds for a FAPI 2.0 app`);
  client.redirectUris.forEach((uri, i) => {
    if (!uri.startsWith('https://')) refuse(['redirect_uris', i], 'must be https for a FAPI 2.0 app');
  });
  (entry as FapiAppFields).jwks?.keys.forEach((key, i) => {
    const bits = key.kty === 'RSA' && typeof key.n === 'string' ? Buffer.from(key.n, 'base64url').length * 8 : null;
    if (bits !== null && bits < FAPI2_MIN_RSA_BITS) {
      refuse(['jwks', 'keys', i], `an RSA key of a FAPI 2.0 app has at least ${FAPI2_MIN_RSA_BITS} bits`);
    }
  });
  const who = `the FAPI 2.0 app "${client.clientId}"`;
  if (!features.authorizationRequests) {
    refuse(
      ['security_profile'],
      `${who} needs pushed authorization requests; add @gatehouse-auth/oauth-par to plugins`,
    );
  } else if (features.tokenBindings.length === 0) {
    refuse(
      ['security_profile'],
      `${who} needs sender-constrained tokens; add @gatehouse-auth/oauth-dpop or @gatehouse-auth/oauth-mtls to plugins`,
    );
  }
  return issues;
}

/** The profile as a client policy: the core asks it at each of its points for the apps it holds. */
export function fapi2Policy(clock: Clock): ClientPolicy {
  return {
    name: FAPI2_POLICY,
    appliesTo: isFapi2,
    appIssues: fapi2AppIssues,
    // §5.4.1: private_key_jwt assertions signed PS256, ES256 or EdDSA only.
    assertionAlgorithms: FAPI2_SIGNING_ALGS,
    // §5.3.2.2 (3): a FAPI app's requests come pushed (PAR), and only so.
    authorizationRequest: (_client, { pushed }) =>
      pushed ? undefined : 'This app (FAPI 2.0) must push its authorization requests (PAR) and send the request_uri.',
    authorizationParameters(_client, request) {
      // §5.3.2.2 (6): the redirect URI is always named, even with one registered.
      if (request.redirect_uri_sent === false) return 'The redirect_uri is required for this app (FAPI 2.0).';
      // §5.3.2.2 (4): PKCE with S256 (the core refuses any other method).
      if (request.response_type === 'code' && !request.code_challenge)
        return 'PKCE (code_challenge with S256) is required for this app (FAPI 2.0)';
      return undefined;
    },
    clientAssertion(_client, { aud, iat }, issuer) {
      // §5.3.2.1 (8): the issuer, as a string, is the only audience (no audience injection): the
      // issuer as published, which may end in a slash (`web.issuer` never does).
      if (aud !== issuer) return `client_assertion aud must be the issuer ${issuer}, as a string`;
      // §5.3.2.1 (13): iat, like nbf (jose checks that), at most the clock tolerance in the future.
      if ((iat ?? 0) * 1000 - clock.now().getTime() > CLOCK_SKEW_MS) return 'client_assertion iat is in the future';
      return undefined;
    },
    // §5.3.2.1 (4): only sender-constrained tokens; refused before the grant spends a code.
    tokenRequest: (_client, { confirmation }) =>
      senderConstrained(confirmation)
        ? undefined
        : 'this app (FAPI 2.0) gets sender-constrained tokens only: send a DPoP proof or a client certificate',
  };
}

/**
 * @gatehouse-auth/oauth-fapi: the FAPI 2.0 Security Profile for the apps that name it with
 * `security_profile: fapi2`. Such an app is a confidential client (private_key_jwt or
 * tls_client_auth) that pushes its authorization requests, uses PKCE S256, names its
 * redirect_uri and gets sender-constrained tokens only; its config is checked at start-up (and
 * by the admin API for stored apps), which also needs oauth-par and oauth-dpop or oauth-mtls.
 * Left out of `plugins:`, an app with `security_profile` stops start-up naming this plugin.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/oauth-par'
 *   - name: '@gatehouse-auth/oauth-dpop'
 *   - name: '@gatehouse-auth/oauth-fapi'
 * apps:
 *   - client_id: bank
 *     security_profile: fapi2
 *     token_endpoint_auth_method: private_key_jwt
 *     jwks_uri: https://bank.example/jwks.json
 */
export default definePlugin({
  name: '@gatehouse-auth/oauth-fapi',
  apiVersion: '^1.3',
  appConfig: fapiAppConfig,
  register(api) {
    api.clientPolicy(fapi2Policy(api.services.clock));
  },
});
