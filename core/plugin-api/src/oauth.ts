import type { IncomingMessage } from 'node:http';
import type { JsonObject, UserRecord } from './values.js';
import type { OAuthClient } from './client.js';

export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
export const REFRESH_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:refresh_token';
export const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';

/** One authorization: what a client may do for a subject. Refresh-token families hang off it. */
export interface GrantRecord {
  id: string;
  clientId: string;
  subject: string | null;
  scope: string[];
  data: JsonObject;
  expiresAt: Date;
  revokedAt: Date | null;
}

/** An authorization code as stored (the code itself only as a hash). */
export interface AuthorizationCode {
  key: string;
  grantId: string;
  clientId: string;
  redirectUri: string;
  /** False when the authorization request left redirect_uri out (one registered; list B). */
  redirectUriSent: boolean;
  scope: string[];
  subject: string;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  nonce: string | null;
  authTime: number;
  amr: string[];
  /** Since plugin API 1.3: the key thumbprint the code is bound to (RFC 9449 §10 `dpop_jkt`), or null. */
  dpopJkt: string | null;
  expiresAt: Date;
  usedAt: Date | null;
  /** The grant the code belongs to, read with it; null if that row is gone. */
  grant: GrantRecord | null;
}

export interface StoredToken {
  key: string;
  kind: 'access' | 'refresh';
  grantId: string;
  clientId: string;
  subject: string | null;
  scope: string[];
  data: JsonObject;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  rotatedAt: Date | null;
  parentKey: string | null;
}

export interface IssueInput {
  client: OAuthClient;
  /** The user, or null when the client acts on its own behalf. */
  subject: string | null;
  scope: string[];
  grantType: string;
  /** An existing grant (refresh); otherwise a new one is created. */
  grantId?: string;
  /** The existing grant itself, when the caller has already read it (saves a read of `grantId`). */
  grant?: GrantRecord;
  /** Issue a refresh token (only if the client may use the refresh_token grant). */
  refreshToken?: boolean;
  /**
   * Scope of the new refresh token when it differs from the access token's: a narrowed
   * refresh keeps the original scope on the refresh token (RFC 6749 §6).
   */
  refreshScope?: string[];
  /** The refresh token being rotated (its successor records it as parent). */
  parentRefreshKey?: string;
  /**
   * The key of the token this access token was exchanged from (token exchange): revoking that
   * token revokes this one, and whatever was exchanged from it in turn.
   */
  derivedFrom?: string;
  /** ID token inputs; issued when `openid` is in scope and there is a subject. */
  idToken?: { nonce?: string | null; authTime?: number; amr?: string[]; code?: string };
  /** Access-token lifetime in seconds when shorter than the client's (token exchange). */
  accessTokenTtl?: number;
  /** No ID token even with `openid` (token exchange issues access tokens only). */
  withoutIdToken?: boolean;
  /** Extra access-token claims (act, service_subject_type, ...). */
  claims?: JsonObject;
  /** `aud` of the access token; default: the client id. */
  audience?: string[];
  /** What the grant keeps (auth_time, amr) so refreshes can repeat it. */
  grantData?: JsonObject;
}

export interface TokenResponse {
  access_token: string;
  /** `DPoP` when the tokens are bound to the key of the request's proof (RFC 9449 §5). */
  token_type: 'bearer' | 'DPoP';
  expires_in: number;
  issued_token_type: string;
  scope: string;
  refresh_token?: string;
  id_token?: string;
  /** Token exchange narrowed to resource objects: each object with one scope it permits (spec `restricted_to`). */
  restricted_to?: { object: JsonObject; scope: string }[];
}

/** Result of looking a token up: active or not, and what it is. */
export interface TokenInfo {
  active: boolean;
  token?: StoredToken;
  grant?: GrantRecord;
}

/**
 * The OAuth core's services lent to grant plugins (GrantContext.oauth). Every single-use check
 * is a conditional update in the database.
 */
export interface OAuthServices {
  issuer: string;
  issue(input: IssueInput): Promise<TokenResponse>;
  /** Looks a token (access or refresh) up by its value. */
  inspect(token: string): Promise<TokenInfo>;
  codes: {
    find(code: string): Promise<AuthorizationCode | null>;
    /** Single use: true for exactly one caller. */
    consume(code: AuthorizationCode): Promise<boolean>;
  };
  refreshTokens: {
    /** Marks a refresh token rotated; false if it already was (reuse) or is gone. */
    rotate(token: StoredToken): Promise<boolean>;
    /**
     * Since plugin API 1.3: marks `token` rotated and stores what `input` issues in one
     * transaction, so a failure between the two spends nothing; null (nothing stored) when
     * another request rotated it first, or it is gone.
     */
    rotateAndIssue(token: StoredToken, input: IssueInput): Promise<TokenResponse | null>;
  };
  grants: {
    get(id: string): Promise<GrantRecord | null>;
    /** Revokes the grant and every token issued under it. */
    revoke(id: string, reason: string): Promise<void>;
  };
  /** Parses and checks a requested scope against what the client may have; throws invalid_scope. */
  resolveScope(requested: string | undefined, allowed: string[], fallback: string[]): string[];
  /** Checks a user's proof with a method plugin and the FDS rules, counted like a login. */
  authenticateUser(input: {
    identifier: string;
    method: string;
    fields: Record<string, string>;
    clientId: string;
  }): Promise<{ ok: true; userId: string; amr: string[] } | { ok: false; reason: string }>;
  /** The user directory, to check that a subject exists and is active. */
  users: {
    findById(id: string): Promise<UserRecord | null>;
    /** By username, email or phone. */
    findByIdentifier(identifier: string): Promise<UserRecord | null>;
  };
  /**
   * Verifies a JWT this server signed (an ID token or a JWT access token): signature by a
   * published key, `iss` = this issuer, not expired. Returns its claims, or null.
   */
  verifyOwnJwt(token: string, opts?: { typ?: 'JWT' | 'at+jwt' }): Promise<JsonObject | null>;
  /** Single use of assertion ids (jti, SAML ID): true the first time. */
  useAssertionId(namespace: string, id: string, expiresAt: Date): Promise<boolean>;
  /** The URL that assertions must name as audience (the token endpoint). */
  tokenEndpoint: string;
  /** Every URL an assertion audience may name (issuer and token endpoint aliases). */
  assertionAudiences: string[];
  /** Since 1.3: the JWK thumbprint the request proved (DPoP), which `issue` binds the tokens to; else null. */
  proofKey: string | null;
  /**
   * Since 1.3: what the token request is sender-constrained by, which `issue` binds the tokens to
   * (their `cnf`): a DPoP key's `jkt`, a client certificate's `x5t#S256` (RFC 8705), or both;
   * null for bearer tokens. Non-null exactly when the request is sender-constrained.
   */
  confirmation: Confirmation | null;
}

/**
 * Since 1.3: what a token is bound to (RFC 7800 `cnf`): a DPoP key's JWK SHA-256 thumbprint
 * (`jkt`, RFC 9449) and/or a client certificate's SHA-256 thumbprint (`x5t#S256`, RFC 8705 §3.1).
 */
export interface Confirmation {
  jkt?: string;
  'x5t#S256'?: string;
}

/** The `cnf` members a token binding may fill (`TokenBinding.confirmation`). */
export const CONFIRMATION_MEMBERS = ['jkt', 'x5t#S256'] as const;

/** What a token is bound to (`cnf`), or null for a bearer token. */
export const confirmationOf = (token: StoredToken): Confirmation | null =>
  (token.data.cnf as Confirmation | undefined) ?? null;

/**
 * Since 1.3: the first `cnf` member of `token` that `proven` (what the request proves, the grant
 * context's `oauth.confirmation`) does not match, or null when it matches them all or the token
 * is a bearer token.
 */
export function unprovenBinding(token: StoredToken, proven: Confirmation | null): keyof Confirmation | null {
  for (const [member, value] of Object.entries(confirmationOf(token) ?? {})) {
    if (proven?.[member as keyof Confirmation] !== value) return member as keyof Confirmation;
  }
  return null;
}

/** Why a bound refresh token is refused: what it is bound to. */
export const boundToAnother = (member: keyof Confirmation): string =>
  `the refresh token is bound to another ${member === 'jkt' ? 'key (DPoP)' : 'client certificate (mutual TLS)'}`;

/** The JWK SHA-256 thumbprint (RFC 7638) a token is bound to (`cnf.jkt`), or null for a bearer token. */
export const boundKey = (token: StoredToken): string | null => confirmationOf(token)?.jkt ?? null;

/** An HTTP request as the token binding sees it: `url` is the issuer's URL of the path, without query. */
export interface BindingRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** Since 1.3: the request itself, e.g. for `web.fromTrustedProxy` before a header a proxy sets is believed. */
  request: IncomingMessage;
}

/**
 * Since plugin API 1.3 (`api.tokenBinding`, one plugin per `cnf` member): proof of possession
 * for tokens. For `jkt` (DPoP, RFC 9449) the core stores the key's thumbprint with the tokens
 * (`cnf.jkt`), answers `token_type: DPoP`, and at a protected resource (`web.protectedResource`:
 * userinfo) refuses a bound token without a proof of its key; for `x5t#S256` (mutual TLS, RFC
 * 8705) it stores the certificate's thumbprint and refuses the token at a protected resource
 * unless the request presents that certificate.
 */
export interface TokenBinding {
  /** Since 1.3: the `cnf` member it fills, `jkt` when left out. One binding per member. */
  confirmation?: (typeof CONFIRMATION_MEMBERS)[number];
  /** The `alg`s proofs may use: a protected resource's `WWW-Authenticate: DPoP algs="..."` (`jkt` only). */
  algorithms: readonly string[];
  /**
   * At the token endpoint, before the grant runs: the value the request proves for the member
   * (the key's `jkt`, the certificate's `x5t#S256`; the tokens are bound to it, and may answer
   * `headers`, e.g. a fresh `DPoP-Nonce`), or null for no binding. Refuse by throwing an
   * OAuthError (`invalid_dpop_proof`, `use_dpop_nonce`, …).
   */
  tokenRequest(
    req: BindingRequest & { client: OAuthClient },
  ): Promise<{ value: string; headers?: Record<string, string> } | null>;
  /**
   * At a protected resource (`web.protectedResource`: userinfo), for a token sent with `Authorization: DPoP` (`jkt`), or any token whose `cnf`
   * has the member (others): the value the request proves (checking the proof, its `ath` the
   * hash of `accessToken`), or null if it proves none; the core compares it with the token's.
   * Refuse by throwing an OAuthError with status 401 and its `WWW-Authenticate`.
   */
  resourceRequest(req: BindingRequest & { accessToken: string }): Promise<string | null>;
}

/** The client authentication methods plugins may provide (`api.clientAuthentication`): RFC 8705 §2's. */
export const PLUGGABLE_AUTH_METHODS = ['tls_client_auth', 'self_signed_tls_client_auth'] as const;

/**
 * Since plugin API 1.3 (`api.clientAuthentication`, one plugin per method): a client
 * authentication method the core does not know itself, for apps whose `token_endpoint_auth_method`
 * names it (mutual TLS, RFC 8705 §2). Used wherever the core and plugins authenticate clients:
 * token, introspection, revocation, PAR, device authorization (`web.authenticateClient`).
 */
export interface ClientAuthentication {
  /** The `token_endpoint_auth_method` it serves. */
  method: (typeof PLUGGABLE_AUTH_METHODS)[number];
  /**
   * Whether the request proves it is `client` (an app of this method, whose `client_id` the
   * request names, and which sent no secret or assertion): true, or why not. A "why not" is a
   * failed authentication, answered 401 `invalid_client` and counted like a wrong secret.
   */
  authenticate(req: IncomingMessage, client: OAuthClient): Promise<true | string>;
}
