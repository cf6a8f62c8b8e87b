import {
  ACCESS_TOKEN_TYPE,
  type AuthorizationCode,
  type Clock,
  type Confirmation,
  type GrantRecord,
  type IssueInput,
  type JsonObject,
  type JwtSigning,
  type StoredToken,
  type TokenInfo,
  type TokenResponse,
} from '@gatehouse-auth/plugin-api';
import { hash } from 'node:crypto';
import { NO_METRICS, type Metrics } from '../observability/metrics.js';
import { dateOrNull, num, parseJson, type Sql } from '../storage/sql.js';
import { randomToken, sha256 } from '../util/crypto.js';
import { namedClaims, scopeClaims, type ClaimsRequest, type UserClaims } from './claims.js';
import { inProcessSigning, signJwtWith } from './jws.js';
import type { KeyStore } from './keys.js';
import type { PeerBus } from '../peer-bus.js';
import type { InvalidationLog } from './invalidation-log.js';
import type { ActiveTokenCache, Invalidation } from './token-cache.js';

/** A grant's columns, prefixed: `getGrant` reads them alone, `findCode` and `inspect` with a code or token. */
const GRANT_COLUMNS = `g.id AS g_id, g.client_id AS g_client_id, g.subject AS g_subject, g.scope AS g_scope,
  g.data AS g_data, g.expires_at AS g_expires_at, g.revoked_at AS g_revoked_at`;

/** The grant's columns of a row (null when a joined grant row is gone). */
interface GrantColumns {
  g_id: string | null;
  g_client_id: string | null;
  g_subject: string | null;
  g_scope: string | null;
  g_data: string | null;
  g_expires_at: unknown;
  g_revoked_at: unknown;
}

interface TokenRow extends GrantColumns {
  id: string;
  kind: 'access' | 'refresh';
  grant_id: string;
  client_id: string;
  subject: string | null;
  scope: string;
  data: string;
  created_at: unknown;
  expires_at: unknown;
  revoked_at: unknown;
  rotated_at: unknown;
  parent_id: string | null;
}

interface CodeRow extends GrantColumns {
  id: string;
  grant_id: string;
  client_id: string;
  data: string;
  expires_at: unknown;
  used_at: unknown;
}

/** A token row to store, its values as the INSERT takes them (the token itself only as its hash). */
interface NewTokenRow {
  key: string;
  kind: 'access' | 'refresh';
  grantId: string;
  clientId: string;
  subject: string | null;
  scope: string;
  data: string;
  expiresAt: number;
  parentKey: string | null;
}
const TOKEN_FIELDS = [
  'key',
  'kind',
  'grantId',
  'clientId',
  'subject',
  'scope',
  'data',
  'expiresAt',
  'parentKey',
] as const;
/** Parameter names of the rows of one INSERT (an issue stores one or two tokens): `key0`, `key1`, ... */
const TOKEN_PARAMS = [0, 1].map((i) => TOKEN_FIELDS.map((field) => `${field}${i}`));
/** The INSERT of one and of two token rows, built once: the driver keys its prepared statements by text. */
const INSERT_TOKENS = [1, 2].map(
  (n) =>
    `INSERT INTO oauth_tokens (id, kind, grant_id, client_id, subject, scope, data, expires_at, parent_id, created_at,
       revoked_at, rotated_at) VALUES ` +
    TOKEN_PARAMS.slice(0, n)
      .map((names) => `(${names.map((p) => `:${p}`).join(', ')}, :now, NULL, NULL)`)
      .join(', '),
);

/** RFC 9068 §2.1: a JWT access token says what it is. */
const AT_JWT_HEADER = Object.freeze({ typ: 'at+jwt' });

const splitScope = (s: string) => s.split(' ').filter(Boolean);

const toGrant = (r: GrantColumns): GrantRecord | null =>
  r.g_id === null
    ? null
    : {
        id: r.g_id,
        clientId: r.g_client_id!,
        subject: r.g_subject,
        scope: splitScope(r.g_scope!),
        data: parseJson<JsonObject>(r.g_data),
        expiresAt: new Date(num(r.g_expires_at)),
        revokedAt: dateOrNull(r.g_revoked_at),
      };

const toToken = (r: TokenRow): StoredToken => ({
  key: r.id,
  kind: r.kind,
  grantId: r.grant_id,
  clientId: r.client_id,
  subject: r.subject,
  scope: splitScope(r.scope),
  data: parseJson<JsonObject>(r.data),
  createdAt: new Date(num(r.created_at)),
  expiresAt: new Date(num(r.expires_at)),
  revokedAt: dateOrNull(r.revoked_at),
  rotatedAt: dateOrNull(r.rotated_at),
  parentKey: r.parent_id,
});

/**
 * OIDC Core §3.1.3.6: the left half of the hash of the value, base64url, with the hash of the ID
 * token's algorithm (SHA-256 for RS256, PS256, ES256; SHA-512 for EdDSA over Ed25519).
 */
export function halfHash(value: string, alg = 'RS256'): string {
  const digest = hash(alg === 'EdDSA' ? 'sha512' : 'sha256', value, 'buffer');
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/** The client's access-token lifetime, or the shorter one the grant asks for (at least 1 s). */
export function accessTokenLifetime(input: Pick<IssueInput, 'client' | 'accessTokenTtl'>): number {
  return Math.max(1, Math.min(input.client.accessTokenTtl, input.accessTokenTtl ?? Infinity));
}

/** A code to store: what its exchange reads back, and the grant it opens. */
export interface NewCode extends Omit<
  AuthorizationCode,
  'key' | 'grantId' | 'dpopJkt' | 'expiresAt' | 'usedAt' | 'grant'
> {
  /** The browser session the sign-in belongs to: in the ID token, and what logout revokes. */
  sid: string | null;
  ttlSeconds: number;
  /** Absolute lifetime of the grant the code opens (the client's refresh token lifetime). */
  grantTtlSeconds: number;
  /** The `claims` request parameter: kept on the grant, so refreshed ID tokens repeat it. */
  claims?: ClaimsRequest | null;
  /** The acr the login met, for the ID tokens of the grant. */
  acr?: string | null;
  /** RFC 9449 §10: the key thumbprint the code is bound to (`dpop_jkt`). */
  dpopJkt?: string | null;
}

/** What the grant of a sign-in keeps for the ID tokens issued under it (refreshed ones too). */
export function signInGrantData(signIn: Pick<NewCode, 'authTime' | 'amr' | 'sid' | 'claims' | 'acr'>): JsonObject {
  return {
    auth_time: signIn.authTime,
    amr: signIn.amr,
    ...(signIn.sid ? { sid: signIn.sid } : {}),
    ...(signIn.claims ? { claims: signIn.claims as JsonObject } : {}),
    ...(signIn.acr ? { acr: signIn.acr } : {}),
  };
}

/**
 * Token storage and issuance. Every token and code is stored by its SHA-256 with its grant,
 * client, subject, scope and expiry; JWT access tokens too, so revocation is immediate.
 */
export class TokenService {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly keys: KeyStore,
    private readonly issuer: string,
    /** User claims for ID tokens that the `claims` parameter asked for. */
    private readonly userClaims?: UserClaims,
    /**
     * Active access tokens kept in memory, and how revocations reach the other nodes' caches: the
     * peer bus, and on SQLite the database for the processes it does not connect (decision 0089).
     */
    private readonly cache?: { tokens: ActiveTokenCache; bus: PeerBus; log?: Pick<InvalidationLog, 'record'> },
    private readonly metrics: Pick<Metrics, 'tokenIssued'> = NO_METRICS,
    /** What signs the JWTs: the `jwtSigning` service current at each token (decision 77). */
    private readonly signing: () => JwtSigning = () => inProcessSigning,
    /** Whether an app is registered now: a token of one deleted (or gone from the config) is inactive. */
    private readonly registered: (clientId: string) => boolean = () => true,
  ) {}

  /** Tells this node's cache and every other node's (after the revocation is in the database). */
  private async revoked(what: Invalidation): Promise<void> {
    if (!this.cache) return;
    await this.cache.log?.record(what);
    await this.cache.bus.publish({ revoked: what });
  }

  // ─────────── grants ───────────

  async createGrant(input: {
    clientId: string;
    subject: string | null;
    scope: string[];
    ttlSeconds: number;
    data?: JsonObject;
  }): Promise<GrantRecord> {
    const now = this.clock.now().getTime();
    const grant: GrantRecord = {
      id: randomToken(18),
      clientId: input.clientId,
      subject: input.subject,
      scope: input.scope,
      data: input.data ?? {},
      expiresAt: new Date(now + input.ttlSeconds * 1000),
      revokedAt: null,
    };
    await this.sql.exec(
      `INSERT INTO oauth_grants (id, client_id, subject, scope, data, created_at, expires_at, revoked_at, revoked_reason)
       VALUES (:id, :clientId, :subject, :scope, :data, :now, :expires, NULL, NULL)`,
      {
        id: grant.id,
        clientId: grant.clientId,
        subject: grant.subject,
        scope: grant.scope.join(' '),
        data: JSON.stringify(grant.data),
        now,
        expires: grant.expiresAt.getTime(),
      },
    );
    return grant;
  }

  async getGrant(id: string): Promise<GrantRecord | null> {
    const row = await this.sql.one<GrantColumns>(`SELECT ${GRANT_COLUMNS} FROM oauth_grants g WHERE g.id = :id`, {
      id,
    });
    return row && toGrant(row);
  }

  /** Revokes a grant and everything issued under it, at once. */
  async revokeGrant(id: string, reason: string): Promise<void> {
    const now = this.clock.now().getTime();
    // The grant first: once it is revoked, none of its tokens introspects active.
    await this.sql.exec(
      `UPDATE oauth_grants SET revoked_at = :now, revoked_reason = :reason WHERE id = :id AND revoked_at IS NULL`,
      { id, now, reason: reason.slice(0, 64) },
    );
    // `grant_id <> id`: the condition of the partial index (migration 013); a standalone token,
    // its own grant, is never in a grant row's family.
    await this.sql.exec(
      `UPDATE oauth_tokens SET revoked_at = :now WHERE grant_id = :id AND grant_id <> id AND revoked_at IS NULL`,
      { id, now },
    );
    await this.revoked({ grants: [id] });
  }

  /** Revokes every grant of a subject (password change, logout everywhere). */
  async revokeSubject(subject: string, reason: string): Promise<number> {
    const grants = await this.revokeSession(subject, null, reason);
    // Tokens that stand alone (no grant row) go too.
    await this.sql.exec(`UPDATE oauth_tokens SET revoked_at = :now WHERE subject = :subject AND revoked_at IS NULL`, {
      subject,
      now: this.clock.now().getTime(),
    });
    await this.revoked({ subjects: [subject] });
    return grants;
  }

  /** Revokes every grant of a client and every token issued to it (the app was deleted). */
  async revokeClient(clientId: string, reason: string): Promise<{ grants: number; tokens: number }> {
    const now = this.clock.now().getTime();
    const grants = await this.sql.write<{ id: string }>(
      `UPDATE oauth_grants SET revoked_at = :now, revoked_reason = :reason
       WHERE client_id = :clientId AND revoked_at IS NULL RETURNING id`,
      { clientId, now, reason: reason.slice(0, 64) },
    );
    const tokens = await this.sql.write<{ id: string }>(
      `UPDATE oauth_tokens SET revoked_at = :now WHERE client_id = :clientId AND revoked_at IS NULL RETURNING id`,
      { clientId, now },
    );
    await this.revoked({ grants: grants.map((g) => g.id), keys: tokens.map((t) => t.id) });
    return { grants: grants.length, tokens: tokens.length };
  }

  /** Revokes the grants a session's sign-in led to (logout): those whose data names its sid (null: every grant). */
  async revokeSession(subject: string, sid: string | null, reason: string): Promise<number> {
    const grants = await this.sql.select<{ id: string; data: string }>(
      'SELECT id, data FROM oauth_grants WHERE subject = :subject AND revoked_at IS NULL',
      { subject },
    );
    const mine = sid === null ? grants : grants.filter((g) => parseJson<JsonObject>(g.data).sid === sid);
    for (const g of mine) await this.revokeGrant(g.id, reason);
    return mine.length;
  }

  // ─────────── codes ───────────

  async createCode(input: NewCode): Promise<string> {
    const grant = await this.createGrant({
      clientId: input.clientId,
      subject: input.subject,
      scope: input.scope,
      ttlSeconds: input.grantTtlSeconds,
      data: signInGrantData(input),
    });
    const code = randomToken(32); // 256 bits (CS EnsureMinimumAuthorizationCodeLength: ≥ 128)
    const now = this.clock.now().getTime();
    await this.sql.exec(
      `INSERT INTO oauth_codes (id, grant_id, client_id, data, created_at, expires_at, used_at)
       VALUES (:key, :grantId, :clientId, :data, :now, :expires, NULL)`,
      {
        key: sha256(code),
        grantId: grant.id,
        clientId: input.clientId,
        data: JSON.stringify({
          redirect_uri: input.redirectUri,
          redirect_uri_sent: input.redirectUriSent,
          scope: input.scope,
          subject: input.subject,
          code_challenge: input.codeChallenge,
          code_challenge_method: input.codeChallengeMethod,
          nonce: input.nonce,
          auth_time: input.authTime,
          amr: input.amr,
          ...(input.dpopJkt ? { dpop_jkt: input.dpopJkt } : {}),
        }),
        now,
        expires: now + input.ttlSeconds * 1000,
      },
    );
    return code;
  }

  /** A code by value, with its grant: one read, so the exchange need not fetch the grant again. */
  async findCode(code: string): Promise<AuthorizationCode | null> {
    const row = await this.sql.one<CodeRow>(
      `SELECT c.*, ${GRANT_COLUMNS} FROM oauth_codes c LEFT JOIN oauth_grants g ON g.id = c.grant_id WHERE c.id = :key`,
      { key: sha256(code) },
    );
    if (!row) return null;
    const d = parseJson<Record<string, unknown>>(row.data);
    return {
      key: row.id,
      grantId: row.grant_id,
      clientId: row.client_id,
      redirectUri: String(d.redirect_uri),
      redirectUriSent: d.redirect_uri_sent !== false,
      scope: d.scope as string[],
      subject: String(d.subject),
      codeChallenge: (d.code_challenge as string | null) ?? null,
      codeChallengeMethod: (d.code_challenge_method as string | null) ?? null,
      nonce: (d.nonce as string | null) ?? null,
      authTime: Number(d.auth_time),
      amr: (d.amr as string[]) ?? [],
      dpopJkt: (d.dpop_jkt as string | undefined) ?? null,
      expiresAt: new Date(num(row.expires_at)),
      usedAt: dateOrNull(row.used_at),
      grant: toGrant(row),
    };
  }

  async consumeCode(code: AuthorizationCode): Promise<boolean> {
    const now = this.clock.now().getTime();
    return this.sql.changed(
      `UPDATE oauth_codes SET used_at = :now WHERE id = :key AND used_at IS NULL AND expires_at > :now RETURNING id`,
      { key: code.key, now },
    );
  }

  // ─────────── tokens ───────────

  /**
   * Issues the tokens; with `confirmation`, bound to it (`cnf`: a DPoP key's `jkt`, RFC 9449; a
   * certificate's `x5t#S256`, RFC 8705; refresh tokens of public clients too). With `rotates`,
   * that refresh token is marked rotated in the same transaction as the new tokens are stored:
   * null, and nothing stored, when it already was.
   */
  async issue(input: IssueInput, confirmation?: Confirmation | null): Promise<TokenResponse>;
  async issue(
    input: IssueInput,
    confirmation: Confirmation | null,
    rotates: StoredToken,
  ): Promise<TokenResponse | null>;
  async issue(
    input: IssueInput,
    confirmation: Confirmation | null = null,
    rotates?: StoredToken,
  ): Promise<TokenResponse | null> {
    const { client } = input;
    const cnf: JsonObject = confirmation ? { cnf: { ...confirmation } } : {};
    const jkt = confirmation?.jkt;
    const now = this.clock.now();
    const iat = Math.floor(now.getTime() / 1000);
    // A grant row is needed only for a family of tokens (refresh tokens, codes). A token that
    // stands alone (client credentials, implicit) is its own grant: one insert, not two.
    const withRefresh = Boolean(input.refreshToken && client.grantTypes.includes('refresh_token'));
    const grant =
      input.grant ??
      (input.grantId
        ? await this.getGrant(input.grantId)
        : withRefresh
          ? await this.createGrant({
              clientId: client.clientId,
              subject: input.subject,
              scope: input.scope,
              ttlSeconds: client.refreshTokenTtl,
              data: input.grantData ?? {},
            })
          : null);
    if (input.grantId && !grant) throw new Error(`grant ${input.grantId} not found`);
    const scope = input.scope.join(' ');
    const accessTtl = accessTokenLifetime(input);
    const jti = randomToken(16);
    const sub = input.subject ?? client.clientId;
    const authTime = input.idToken?.authTime ?? (input.grantData?.auth_time as number | undefined);
    const amr = input.idToken?.amr ?? (input.grantData?.amr as string[] | undefined) ?? [];
    const sid = (grant?.data.sid ?? input.grantData?.sid) as string | undefined;
    const claimsRequest = (grant?.data.claims ?? input.grantData?.claims) as ClaimsRequest | undefined;
    const acr = (grant?.data.acr ?? input.grantData?.acr) as string | undefined;

    let accessToken: string;
    if (client.tokenFormat === 'jwt') {
      const signer = await this.keys.signer(client.accessTokenAlg);
      // The grant's claims first: the registered ones after them are the server's to set.
      const claims: JsonObject = { ...input.claims, client_id: client.clientId, scope };
      if (authTime) claims.auth_time = authTime;
      if (input.idToken?.amr?.length) claims.amr = input.idToken.amr;
      Object.assign(claims, cnf);
      claims.iss = this.issuer;
      claims.sub = sub;
      claims.aud = input.audience?.length ? input.audience : client.clientId;
      claims.jti = jti;
      claims.iat = iat;
      claims.exp = iat + accessTtl;
      accessToken = await signJwtWith(this.signing(), signer, AT_JWT_HEADER, claims);
    } else {
      accessToken = randomToken(32);
    }
    // Assigned, not spread: one object per token rather than one per optional member.
    const accessData: JsonObject = { jti, format: client.tokenFormat, aud: input.audience ?? [client.clientId] };
    if (authTime) accessData.auth_time = authTime;
    if (amr.length) accessData.amr = amr;
    if (input.claims) Object.assign(accessData, input.claims);
    // What userinfo adds to the scopes' claims for this token (OIDC Core §5.5).
    if (claimsRequest?.userinfo) accessData.userinfo_claims = claimsRequest.userinfo as JsonObject;
    Object.assign(accessData, cnf);
    // The access and refresh tokens go into the table together: one INSERT of one or two rows.
    const accessKey = sha256(accessToken);
    const rows: NewTokenRow[] = [];
    rows.push({
      key: accessKey,
      kind: 'access',
      grantId: grant?.id ?? accessKey,
      clientId: client.clientId,
      subject: input.subject,
      scope,
      expiresAt: now.getTime() + accessTtl * 1000,
      parentKey: input.derivedFrom ?? null,
      data: JSON.stringify(accessData),
    });

    const response: TokenResponse = {
      access_token: accessToken,
      token_type: jkt ? 'DPoP' : 'bearer',
      expires_in: accessTtl,
      issued_token_type: ACCESS_TOKEN_TYPE,
      scope,
    };

    if (grant && withRefresh) {
      const refreshToken = randomToken(32);
      rows.push({
        key: sha256(refreshToken),
        kind: 'refresh',
        grantId: grant.id,
        clientId: client.clientId,
        subject: input.subject,
        scope: (input.refreshScope ?? input.scope).join(' '),
        // Rotation never extends the family past the grant's absolute expiry.
        expiresAt: grant.expiresAt.getTime(),
        // A confidential client's refresh tokens are bound by its credentials (RFC 9449 §5).
        data: JSON.stringify(client.isPublic ? cnf : {}),
        parentKey: input.parentRefreshKey ?? null,
      });
      response.refresh_token = refreshToken;
    }
    // The ID token is signed while the tokens are stored: it needs only the access token's value.
    const idToken =
      input.subject && input.scope.includes('openid') && !input.withoutIdToken
        ? this.idToken(input, input.subject, { accessToken, iat, acr, sid, claims: claimsRequest?.id_token })
        : undefined;
    const store = rotates ? this.rotateAndStore(rotates, rows) : this.storeTokens(rows);
    if (idToken) {
      const [stored, signed] = await Promise.all([store, idToken]);
      if (stored === false) return null;
      response.id_token = signed;
    } else if ((await store) === false) return null;
    this.metrics.tokenIssued(input.grantType);
    return response;
  }

  /** The ID token of a token response (OIDC Core §3.1.3.6), with at_hash of its access token. */
  private async idToken(
    input: IssueInput,
    subject: string,
    issued: { accessToken: string; iat: number; acr?: string; sid?: string; claims?: ClaimsRequest['id_token'] },
  ): Promise<string> {
    const { client } = input;
    const signer = await this.keys.signer(client.idTokenAlg);
    const id = input.idToken ?? {};
    // With an access token, the scopes' claims are for userinfo (OIDC Core §5.4); the ID token
    // carries those the `claims` parameter asked for in it, and the scopes' where the app says so.
    const requested = namedClaims(client, input.scope, issued.claims);
    const named =
      client.idTokenClaims === 'scope' ? [...new Set([...scopeClaims(input.scope), ...requested])] : requested;
    const userClaims = named.length && this.userClaims ? await this.userClaims.of(subject, named) : null;
    return signJwtWith(
      this.signing(),
      signer,
      { typ: 'JWT' },
      {
        ...(userClaims ?? {}),
        ...(id.nonce ? { nonce: id.nonce } : {}),
        ...(id.authTime ? { auth_time: id.authTime } : {}),
        ...(id.amr?.length ? { amr: id.amr } : {}),
        ...(issued.acr ? { acr: issued.acr } : {}),
        ...(issued.sid ? { sid: issued.sid } : {}),
        azp: client.clientId,
        at_hash: halfHash(issued.accessToken, client.idTokenAlg),
        ...(id.code ? { c_hash: halfHash(id.code, client.idTokenAlg) } : {}),
        iss: this.issuer,
        sub: subject,
        aud: client.clientId,
        iat: issued.iat,
        exp: issued.iat + client.idTokenTtl,
      },
    );
  }

  /** Marks `token` rotated and stores `rows`, in one transaction; false (nothing stored) when it already was rotated. */
  private rotateAndStore(token: StoredToken, rows: NewTokenRow[]): Promise<boolean> {
    return this.sql.tx(async (tx) => {
      if (!(await this.rotateRefresh(token, tx))) return false;
      await this.storeTokens(rows, tx);
      return true;
    });
  }

  private async storeTokens(rows: NewTokenRow[], sql: Sql = this.sql): Promise<void> {
    const params: Record<string, unknown> = { now: this.clock.now().getTime() };
    for (let i = 0; i < rows.length; i++) {
      for (let j = 0; j < TOKEN_FIELDS.length; j++) params[TOKEN_PARAMS[i]![j]!] = rows[i]![TOKEN_FIELDS[j]!];
    }
    await sql.exec(INSERT_TOKENS[rows.length - 1]!, params);
  }

  /** A token by value, with whether it is active: known, unexpired, unrevoked, grant alive, its app registered. */
  async inspect(token: string): Promise<TokenInfo> {
    const info = await this.lookup(token);
    // An app deleted by another process (a command on a SQLite file) is still known here until
    // this node reloads its apps: a token issued in that window missed the deletion's revocation.
    return info.active && !this.registered(info.token!.clientId) ? { ...info, active: false } : info;
  }

  private async lookup(token: string): Promise<TokenInfo> {
    if (!token || token.length > 4096) return { active: false };
    const key = sha256(token);
    const cached = this.cache?.tokens.get(key);
    if (cached) return cached;
    const generation = this.cache?.tokens.generation ?? 0;
    // One round trip: the token with its grant's state.
    const row = await this.sql.one<TokenRow>(
      `SELECT t.*, ${GRANT_COLUMNS} FROM oauth_tokens t LEFT JOIN oauth_grants g ON g.id = t.grant_id WHERE t.id = :key`,
      { key },
    );
    if (!row) return { active: false };
    const stored = toToken(row);
    const grant = toGrant(row);
    // A token that is its own grant (client credentials, implicit) has no grant row.
    const standalone = !grant && stored.grantId === stored.key;
    const now = this.clock.now();
    const active =
      !stored.revokedAt &&
      stored.expiresAt > now &&
      (standalone || (!!grant && !grant.revokedAt)) &&
      (stored.kind === 'access' || (!!grant && !stored.rotatedAt && grant.expiresAt > now));
    const info: TokenInfo = { active, token: stored, ...(grant ? { grant } : {}) };
    this.cache?.tokens.set(key, info, generation);
    return info;
  }

  /** Marks a refresh token rotated; false if another request rotated it first. */
  async rotateRefresh(token: StoredToken, sql: Sql = this.sql): Promise<boolean> {
    return sql.changed(
      `UPDATE oauth_tokens SET rotated_at = :now WHERE id = :key AND kind = 'refresh' AND rotated_at IS NULL
         AND revoked_at IS NULL RETURNING id`,
      { key: token.key, now: this.clock.now().getTime() },
    );
  }

  /** Revokes one token, and the access tokens exchanged from it (RFC 8693), transitively. */
  async revokeToken(token: StoredToken): Promise<void> {
    const family = await this.sql.write<{ id: string }>(
      `WITH RECURSIVE family(id) AS (
         SELECT CAST(:key AS VARCHAR(64))
         UNION
         SELECT t.id FROM oauth_tokens t JOIN family f ON t.parent_id = f.id WHERE t.kind = 'access'
       )
       UPDATE oauth_tokens SET revoked_at = :now WHERE id IN (SELECT id FROM family) AND revoked_at IS NULL
       RETURNING id`,
      { key: token.key, now: this.clock.now().getTime() },
    );
    await this.revoked({ keys: [token.key, ...family.map((t) => t.id)] });
  }
}
