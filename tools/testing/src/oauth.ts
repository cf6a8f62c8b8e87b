/**
 * In-memory OAuthServices and a GrantContext builder, so grant plugins can be unit-tested with no
 * server and no database. Same semantics as the core's TokenService: tokens and codes stored by
 * SHA-256, conditional single use, revocation of a grant revokes every token under it.
 */
import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import {
  ACCESS_TOKEN_TYPE,
  accessTokenLifetime,
  cryptoHelpers,
  isProtocolError,
  resolveScope,
  type AuthorizationCode,
  type Confirmation,
  type GrantContext,
  type GrantRecord,
  type IssueInput,
  type JsonObject,
  type OAuthClient,
  type OAuthError,
  type OAuthServices,
  type RequestFacts,
  type StoredToken,
  type TokenInfo,
  type TokenResponse,
  type UserRecord,
} from '@gatehouse-auth/core';
import { FakeClock, fakeRequest, silentLogger } from './basics.js';

const { randomToken, sha256 } = cryptoHelpers;

/** A registered client with test defaults: confidential, authorization_code + refresh_token, opaque tokens. */
export function fakeClient(overrides: Partial<OAuthClient> = {}): OAuthClient {
  const authMethod = overrides.authMethod ?? 'client_secret_basic';
  return {
    clientId: 'client-a',
    name: 'Client A',
    authMethod,
    isPublic: authMethod === 'none',
    redirectUris: ['https://app.example.test/callback'],
    postLogoutRedirectUris: [],
    loginPageUrl: null,
    allowedOrigins: [],
    idTokenAlg: 'RS256',
    idTokenClaims: 'requested',
    accessTokenAlg: 'ES256',
    grantTypes: ['authorization_code', 'refresh_token'],
    responseTypes: ['code'],
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    loginStages: [],
    acrValues: [],
    singleFactorMethods: [],
    consentRequired: false,
    tokenFormat: 'opaque',
    accessTokenTtl: 3600,
    refreshTokenTtl: 30 * 24 * 3600,
    idTokenTtl: 3600,
    codeTtl: 30,
    requireState: null,
    settings: {},
    ...overrides,
  };
}

export type AuthenticateUserInput = Parameters<OAuthServices['authenticateUser']>[0];
export type AuthenticateUserResult = Awaited<ReturnType<OAuthServices['authenticateUser']>>;

/** A user the default authenticateUser knows: `method` (default: any) with this password succeeds. */
export interface FakeOAuthUser {
  identifier: string;
  userId: string;
  password: string;
  /** The method id the password belongs to; another method is `method_not_registered`. */
  method?: string;
  amr?: string[];
  /** Default 'active'. */
  status?: UserRecord['status'];
}

const toUser = (u: FakeOAuthUser | undefined): UserRecord | null =>
  u ? { id: u.userId, username: u.identifier, email: null, phone: null, status: u.status ?? 'active' } : null;

export interface FakeOAuthOptions {
  /** What verifyOwnJwt answers (default: null for every token). */
  verifyOwnJwt?: (token: string) => Promise<JsonObject | null>;
  /** Share it with fakeServices() so plugins reading `services.clock` see the same time. */
  clock?: FakeClock;
  issuer?: string;
  users?: FakeOAuthUser[];
  /** Replaces the default user check entirely. */
  authenticate?: (input: AuthenticateUserInput) => AuthenticateUserResult | Promise<AuthenticateUserResult>;
}

export interface NewFakeCode {
  clientId: string;
  subject: string;
  redirectUri: string;
  /** Default true. */
  redirectUriSent?: boolean;
  scope: string[];
  codeChallenge?: string | null;
  codeChallengeMethod?: string | null;
  nonce?: string | null;
  authTime?: number;
  amr?: string[];
  /** The key thumbprint the code is bound to (RFC 9449 `dpop_jkt`); default none. */
  dpopJkt?: string | null;
  /** Default 60. */
  ttlSeconds?: number;
  /** Absolute lifetime of the grant the code opens; default 30 days. */
  grantTtlSeconds?: number;
}

/** OAuthServices in memory, with its rows and a record of every call worth asserting. */
export interface FakeOAuth extends OAuthServices {
  readonly clock: FakeClock;
  readonly grantRows: Map<string, GrantRecord>;
  /** By code hash. */
  readonly codeRows: Map<string, AuthorizationCode>;
  /** By token hash. */
  readonly tokenRows: Map<string, StoredToken>;
  /** Every issue() input, in order. */
  readonly issued: IssueInput[];
  /** Every grants.revoke() call, in order. */
  readonly revocations: { grantId: string; reason: string }[];
  /** Every authenticateUser() input, in order. */
  readonly authentications: AuthenticateUserInput[];
  createGrant(input: {
    clientId: string;
    subject: string | null;
    scope: string[];
    ttlSeconds: number;
    data?: JsonObject;
  }): GrantRecord;
  /** Stores a code as the authorization endpoint would (with a new grant) and returns its value. */
  createCode(input: NewFakeCode): { code: string; record: AuthorizationCode };
  /** The stored row of a token value. */
  tokenRow(token: string): StoredToken | undefined;
}

const copyToken = (t: StoredToken): StoredToken => ({ ...t, scope: [...t.scope], data: { ...t.data } });
const copyGrant = (g: GrantRecord): GrantRecord => ({ ...g, scope: [...g.scope], data: { ...g.data } });
const copyCode = (c: AuthorizationCode): AuthorizationCode => ({ ...c, scope: [...c.scope], amr: [...c.amr] });

/**
 * An in-memory OAuthServices. Opaque access tokens; an ID token (an opaque marker, not a JWT)
 * when `openid` is in scope and there is a subject; a refresh token when asked for and the client
 * has the refresh_token grant — the core's rules.
 */
export function fakeOAuth(opts: FakeOAuthOptions = {}): FakeOAuth {
  const clock = opts.clock ?? new FakeClock();
  const issuer = opts.issuer ?? 'https://issuer.example.test';
  const grantRows = new Map<string, GrantRecord>();
  const codeRows = new Map<string, AuthorizationCode>();
  const tokenRows = new Map<string, StoredToken>();
  const issued: IssueInput[] = [];
  const revocations: { grantId: string; reason: string }[] = [];
  const authentications: AuthenticateUserInput[] = [];
  const assertionIds = new Map<string, Date>();
  const users = opts.users ?? [];

  const createGrant: FakeOAuth['createGrant'] = (input) => {
    const grant: GrantRecord = {
      id: randomToken(18),
      clientId: input.clientId,
      subject: input.subject,
      scope: [...input.scope],
      data: input.data ?? {},
      expiresAt: new Date(clock.now().getTime() + input.ttlSeconds * 1000),
      revokedAt: null,
    };
    grantRows.set(grant.id, grant);
    return copyGrant(grant);
  };

  const withGrant = (row: AuthorizationCode): AuthorizationCode => {
    const grant = grantRows.get(row.grantId);
    return { ...copyCode(row), grant: grant ? copyGrant(grant) : null };
  };

  const storeToken = (token: string, row: Omit<StoredToken, 'key' | 'createdAt' | 'revokedAt' | 'rotatedAt'>) => {
    const key = sha256(token);
    tokenRows.set(key, { ...row, key, createdAt: clock.now(), revokedAt: null, rotatedAt: null });
  };

  const defaultAuthenticate = (input: AuthenticateUserInput): AuthenticateUserResult => {
    const user = users.find((u) => u.identifier === input.identifier);
    if (!user) return { ok: false, reason: 'unknown_user' };
    if (user.method && input.method !== user.method) return { ok: false, reason: 'method_not_registered' };
    if (input.fields.password !== user.password) return { ok: false, reason: 'mismatch' };
    return { ok: true, userId: user.userId, amr: user.amr ?? ['pwd'] };
  };

  let confirmation: Confirmation | null | undefined;
  const fake: FakeOAuth = {
    clock,
    issuer,
    tokenEndpoint: `${issuer}/oauth/token`,
    assertionAudiences: [issuer, `${issuer}/oauth/token`],
    // No proof of possession: the fake issues bearer tokens.
    proofKey: null,
    // What the request proves: a test's `proofKey` as DPoP's `jkt`, unless it sets this itself.
    get confirmation() {
      return confirmation !== undefined ? confirmation : this.proofKey ? { jkt: this.proofKey } : null;
    },
    set confirmation(value) {
      confirmation = value;
    },
    grantRows,
    codeRows,
    tokenRows,
    issued,
    revocations,
    authentications,
    createGrant,
    users: {
      findById: async (id) => toUser(users.find((x) => x.userId === id)),
      findByIdentifier: async (identifier) => toUser(users.find((x) => x.identifier === identifier)),
    },
    // The fake signs nothing; a test that needs real JWTs scripts this.
    verifyOwnJwt: opts.verifyOwnJwt ?? (async () => null),

    createCode(input) {
      const authTime = input.authTime ?? Math.floor(clock.now().getTime() / 1000);
      const amr = input.amr ?? ['pwd'];
      const grant = createGrant({
        clientId: input.clientId,
        subject: input.subject,
        scope: input.scope,
        ttlSeconds: input.grantTtlSeconds ?? 30 * 24 * 3600,
        data: { auth_time: authTime, amr },
      });
      const code = randomToken(32);
      const record: AuthorizationCode = {
        key: sha256(code),
        grantId: grant.id,
        clientId: input.clientId,
        redirectUri: input.redirectUri,
        redirectUriSent: input.redirectUriSent ?? true,
        scope: [...input.scope],
        subject: input.subject,
        codeChallenge: input.codeChallenge ?? null,
        codeChallengeMethod: input.codeChallengeMethod ?? null,
        nonce: input.nonce ?? null,
        authTime,
        amr: [...amr],
        dpopJkt: input.dpopJkt ?? null,
        expiresAt: new Date(clock.now().getTime() + (input.ttlSeconds ?? 60) * 1000),
        usedAt: null,
        grant: null, // read from grantRows by find(), as the core reads it with the code
      };
      codeRows.set(record.key, record);
      return { code, record: withGrant(record) };
    },

    tokenRow(token) {
      const row = tokenRows.get(sha256(token));
      return row ? copyToken(row) : undefined;
    },

    async issue(input: IssueInput): Promise<TokenResponse> {
      issued.push(input);
      const { client } = input;
      const grantId = input.grant?.id ?? input.grantId;
      const grant = grantId
        ? grantRows.get(grantId)
        : grantRows.get(
            createGrant({
              clientId: client.clientId,
              subject: input.subject,
              scope: input.scope,
              ttlSeconds: client.refreshTokenTtl,
              data: input.grantData ?? {},
            }).id,
          );
      if (!grant) throw new Error(`grant ${grantId} not found`);
      const now = clock.now().getTime();
      const accessTtl = accessTokenLifetime(input);
      const accessToken = randomToken(32);
      storeToken(accessToken, {
        kind: 'access',
        grantId: grant.id,
        clientId: client.clientId,
        subject: input.subject,
        scope: [...input.scope],
        data: { aud: input.audience ?? [client.clientId], ...(input.claims ?? {}) },
        expiresAt: new Date(now + accessTtl * 1000),
        parentKey: input.derivedFrom ?? null,
      });
      const response: TokenResponse = {
        access_token: accessToken,
        token_type: 'bearer',
        expires_in: accessTtl,
        issued_token_type: ACCESS_TOKEN_TYPE,
        scope: input.scope.join(' '),
      };
      if (input.refreshToken && client.grantTypes.includes('refresh_token')) {
        const refreshToken = randomToken(32);
        storeToken(refreshToken, {
          kind: 'refresh',
          grantId: grant.id,
          clientId: client.clientId,
          subject: input.subject,
          scope: [...(input.refreshScope ?? input.scope)],
          data: {},
          expiresAt: new Date(grant.expiresAt),
          parentKey: input.parentRefreshKey ?? null,
        });
        response.refresh_token = refreshToken;
      }
      if (input.subject && input.scope.includes('openid') && !input.withoutIdToken)
        response.id_token = `fake-id-token.${randomToken(16)}`;
      return response;
    },

    async inspect(token: string): Promise<TokenInfo> {
      const row = token ? tokenRows.get(sha256(token)) : undefined;
      if (!row) return { active: false };
      const grant = grantRows.get(row.grantId);
      const now = clock.now();
      const active =
        !row.revokedAt &&
        row.expiresAt > now &&
        !!grant &&
        !grant.revokedAt &&
        (row.kind === 'access' || (!row.rotatedAt && grant.expiresAt > now));
      return { active, token: copyToken(row), ...(grant ? { grant: copyGrant(grant) } : {}) };
    },

    codes: {
      async find(code) {
        const row = code ? codeRows.get(sha256(code)) : undefined;
        return row ? withGrant(row) : null;
      },
      async consume(code) {
        const row = codeRows.get(code.key);
        const now = clock.now();
        if (!row || row.usedAt || row.expiresAt <= now) return false;
        row.usedAt = now;
        return true;
      },
    },

    refreshTokens: {
      async rotate(token) {
        const row = tokenRows.get(token.key);
        if (!row || row.kind !== 'refresh' || row.rotatedAt || row.revokedAt) return false;
        row.rotatedAt = clock.now();
        return true;
      },
      // In memory the two steps cannot be parted by a failure; the order is the server's.
      async rotateAndIssue(token, input) {
        return (await this.rotate(token)) ? fake.issue(input) : null;
      },
    },

    grants: {
      async get(id) {
        const grant = grantRows.get(id);
        return grant ? copyGrant(grant) : null;
      },
      async revoke(grantId, reason) {
        revocations.push({ grantId, reason });
        const now = clock.now();
        const grant = grantRows.get(grantId);
        if (grant && !grant.revokedAt) grant.revokedAt = now;
        for (const row of tokenRows.values()) if (row.grantId === grantId && !row.revokedAt) row.revokedAt = now;
      },
    },

    resolveScope,

    async authenticateUser(input) {
      authentications.push(input);
      return opts.authenticate ? opts.authenticate(input) : defaultAuthenticate(input);
    },

    async useAssertionId(namespace, id, expiresAt) {
      const key = `${namespace}\u0000${id}`;
      const seen = assertionIds.get(key);
      if (seen && seen > clock.now()) return false;
      assertionIds.set(key, expiresAt);
      return true;
    },
  };
  return fake;
}

/**
 * A GrantContext as the token endpoint hands it to a grant handler: the client already
 * authenticated, empty parameters removed (as the core's form parser does).
 */
export function grantContext(input: {
  client: OAuthClient;
  oauth: OAuthServices;
  params?: Record<string, string | undefined>;
  request?: Partial<RequestFacts>;
  logger?: Logger;
}): GrantContext {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.params ?? {})) if (value) params[name] = value;
  return {
    client: input.client,
    params,
    request: fakeRequest(input.request),
    logger: input.logger ?? silentLogger,
    oauth: input.oauth,
  };
}

/**
 * Awaits `promise`, asserting it rejects with an OAuthError of this code and status (and
 * description, if given); returns the error. Uses node:assert, so any test runner reports it.
 */
export async function expectOAuthError(
  promise: Promise<unknown>,
  code: string,
  status = 400,
  description?: string,
): Promise<OAuthError> {
  const outcome = await promise.then(
    () => null,
    (err: unknown) => err,
  );
  assert.ok(isProtocolError(outcome), `expected ${code}, got ${outcome === null ? 'success' : String(outcome)}`);
  const err = outcome as OAuthError;
  assert.deepEqual({ code: err.code, status: err.status }, { code, status });
  if (description !== undefined) assert.equal(err.message, description);
  return err;
}
