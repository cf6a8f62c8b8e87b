import type { Clock } from '../services.js';
import { num, parseJson, type Sql } from '../storage/sql.js';
import { randomToken, sha256 } from '../util/crypto.js';
import type { MethodCompletion } from '../verification/flows.js';

/** A browser's login (SSO): who, when and with which methods. */
export interface Session {
  key: string;
  userId: string;
  authTime: number;
  amr: string[];
  /**
   * The methods completed, each with its time: what decides whether the session satisfies
   * another app's login stages. Empty for sessions made before they were kept (they satisfy none).
   */
  methods: MethodCompletion[];
  expiresAt: Date;
}

interface SessionData {
  auth_time: number;
  amr: string[];
  methods?: MethodCompletion[];
}

interface SessionRow {
  id: string;
  user_id: string;
  data: string;
  expires_at: unknown;
  revoked_at: unknown;
}

/** Browser sessions, stored by the SHA-256 of the cookie value. */
export class SessionStore {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  /** A new session id after every login (ASVS 7.2.4); the previous one is revoked. */
  async create(input: {
    userId: string;
    authTime: number;
    methods: MethodCompletion[];
    ttlSeconds: number;
    replaces?: string | null;
  }) {
    const id = randomToken(32);
    const now = this.clock.now().getTime();
    if (input.replaces) await this.revoke(input.replaces);
    await this.sql.exec(
      `INSERT INTO sessions (id, user_id, data, created_at, expires_at, revoked_at)
       VALUES (:key, :userId, :data, :now, :expires, NULL)`,
      {
        key: sha256(id),
        userId: input.userId,
        data: JSON.stringify({
          auth_time: input.authTime,
          amr: [...new Set(input.methods.flatMap((m) => m.amr))],
          methods: input.methods,
        } satisfies SessionData),
        now,
        // Absolute: a session lasts at most ttl from the login itself, however often it is used.
        expires: Math.min(now, input.authTime * 1000) + input.ttlSeconds * 1000,
      },
    );
    return id;
  }

  async get(id: string | undefined): Promise<Session | null> {
    if (!id || id.length > 200) return null;
    const row = await this.sql.one<SessionRow>('SELECT * FROM sessions WHERE id = :key', { key: sha256(id) });
    if (!row || row.revoked_at !== null || num(row.expires_at) <= this.clock.now().getTime()) return null;
    const data = parseJson<SessionData>(row.data);
    return {
      key: row.id,
      userId: row.user_id,
      authTime: data.auth_time,
      amr: data.amr,
      methods: data.methods ?? [],
      expiresAt: new Date(num(row.expires_at)),
    };
  }

  /** Ends every browser session of a user (a new password, a removed method). */
  async revokeUser(userId: string): Promise<void> {
    await this.sql.exec('UPDATE sessions SET revoked_at = :now WHERE user_id = :userId AND revoked_at IS NULL', {
      userId,
      now: this.clock.now().getTime(),
    });
  }

  async revoke(id: string): Promise<void> {
    await this.sql.exec('UPDATE sessions SET revoked_at = :now WHERE id = :key AND revoked_at IS NULL', {
      key: sha256(id),
      now: this.clock.now().getTime(),
    });
  }
}
