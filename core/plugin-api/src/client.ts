/** A registered client as plugins see it, and the enumerations its members take. */

/** The JWS algorithms Gatehouse signs with (RFC 7518 §3, RFC 8037). */
export const SIGNING_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

export type ClientAuthMethod =
  | 'client_secret_basic'
  | 'client_secret_post'
  | 'client_secret_jwt'
  | 'private_key_jwt'
  | 'none'
  // Since 1.3: mutual TLS (RFC 8705 §2), authenticated by a plugin (`api.clientAuthentication`).
  | 'tls_client_auth'
  | 'self_signed_tls_client_auth';

/** A registered client (an `apps[]` entry), as the OAuth code and grant plugins see it. */
export interface OAuthClient {
  clientId: string;
  name: string;
  authMethod: ClientAuthMethod;
  /** Public clients authenticate with nothing but their id and must use PKCE. */
  isPublic: boolean;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  /** The app's own login UI, if it has one (instead of the hosted page). */
  loginPageUrl: string | null;
  /** Web origins whose pages may call the browser APIs (CORS) and post its login forms. */
  allowedOrigins: string[];
  grantTypes: string[];
  responseTypes: string[];
  scopes: string[];
  loginStages: string[][];
  /** The acr values it offers, weakest first, each with the stages it takes (its login_stages and more). */
  acrValues: { acr: string; stages: string[][] }[];
  /** Methods that may complete the whole login alone (`single_factor_auth`, FACE). */
  singleFactorMethods: string[];
  consentRequired: boolean;
  tokenFormat: 'jwt' | 'opaque';
  /** JWS algorithms of its ID tokens and of its JWT access tokens. */
  idTokenAlg: SigningAlg;
  /** `scope`: ID tokens carry the granted scopes' claims too, not only those the `claims` parameter names. */
  idTokenClaims: 'requested' | 'scope';
  accessTokenAlg: SigningAlg;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  idTokenTtl: number;
  codeTtl: number;
  /** `state` required on /authorize: true, false, or null for "unless the request uses PKCE". */
  requireState: boolean | null;
  /**
   * Since 1.3: the names of the client policies that hold the app (`api.clientPolicy`, decision
   * 80): `fapi2` with `@gatehouse-auth/oauth-fapi`. Absent or empty: none.
   */
  policies?: readonly string[];
  /**
   * What plugins added to this app's config (`appConfig` keys), parsed, by key: a grant reads
   * its own, e.g. `client.settings.assertion_issuers`.
   */
  settings: Readonly<Record<string, unknown>>;
  /**
   * `prompt` values beyond the core's that a plugin answers for this app (`create`, plugin API
   * 1.3's `api.prompt`); absent or empty: none.
   */
  prompts?: readonly string[];
}
