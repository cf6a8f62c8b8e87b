import type { Clock, MethodCompletion, Session } from '@gatehouse-auth/plugin-api';
import { num, parseJson, type Sql } from '../storage/sql.js';
import { randomToken, sha256 } from '../util/crypto.js';

interface SessionData {
  auth_time: number;
  amr: string[];
  methods?: MethodCompletion[];
}

interface SessionRow {
  id: string;
  sid: string | null;
  user_id: string;
  data: string;
  created_at: unknown;
  expires_at: unknown;
  revoked_at: unknown;
}

function toSession(row: SessionRow): Session {
  const data = parseJson<SessionData>(row.data);
  return {
    key: row.id,
    sid: row.sid ?? row.id,
    userId: row.user_id,
    authTime: data.auth_time,
    amr: data.amr,
    methods: data.methods ?? [],
    createdAt: new Date(num(row.created_at)),
    expiresAt: new Date(num(row.expires_at)),
  };
}

export interface NewSession {
  /** The cookie value (only its hash is stored). */
  cookie: string;
  sid: string;
  /** The session this browser had for another user: still live, for the caller to end (and tell its apps). */
  ended: Session | null;
}

/** Browser sessions, stored by the SHA-256 of the cookie value. */
export class SessionStore {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  /**
   * A new session cookie after every login (ASVS 7.2.4); the one it replaces is revoked. For
   * the same user the `sid` carries over (a step-up is the same session to the apps); for
   * another user the old session ends. A session lasts at most `ttlSeconds` from its earliest
   * method, however often steps renew its cookie.
   */
  async create(input: {
    userId: string;
    authTime: number;
    methods: MethodCompletion[];
    ttlSeconds: number;
    replaces?: string | null;
  }): Promise<NewSession> {
    const cookie = randomToken(32);
    const now = this.clock.now().getTime();
    const previous = input.replaces ? await this.get(input.replaces) : null;
    const same = previous?.userId === input.userId;
    // The same user: only the cookie is renewed. Another user: the caller ends the old session.
    if (input.replaces && (same || !previous)) await this.revokeRow(sha256(input.replaces));
    const sid = same ? previous!.sid : randomToken(24);
    const earliest = Math.min(input.authTime, ...input.methods.map((m) => m.at));
    const expires = Math.min(now, earliest * 1000) + input.ttlSeconds * 1000;
    await this.sql.exec(
      `INSERT INTO sessions (id, sid, user_id, data, created_at, expires_at, revoked_at)
       VALUES (:key, :sid, :userId, :data, :now, :expires, NULL)`,
      {
        key: sha256(cookie),
        sid,
        userId: input.userId,
        data: JSON.stringify({
          auth_time: input.authTime,
          amr: [...new Set(input.methods.flatMap((m) => m.amr))],
          methods: input.methods,
        } satisfies SessionData),
        now,
        expires,
      },
    );
    if (same)
      await this.sql.exec('UPDATE session_clients SET expires_at = :expires WHERE sid = :sid', { sid, expires });
    return { cookie, sid, ended: previous && !same ? previous : null };
  }

  /** The live session of a cookie value, or null. */
  async get(cookie: string | undefined): Promise<Session | null> {
    if (!cookie || cookie.length > 200) return null;
    const row = await this.sql.one<SessionRow>('SELECT * FROM sessions WHERE id = :key', { key: sha256(cookie) });
    if (!row || row.revoked_at !== null || num(row.expires_at) <= this.clock.now().getTime()) return null;
    return toSession(row);
  }

  /** A user's live sessions, newest first. */
  async ofUser(userId: string): Promise<Session[]> {
    const rows = await this.sql.select<SessionRow>(
      `SELECT * FROM sessions WHERE user_id = :userId AND revoked_at IS NULL AND expires_at > :now
       ORDER BY created_at DESC`,
      { userId, now: this.clock.now().getTime() },
    );
    return rows.map(toSession);
  }

  /** Whether a session (by its `sid`) is live: a sign-in that rests on it ends with it. */
  async isLive(sid: string): Promise<boolean> {
    const row = await this.sql.one<{ sid: string }>(
      'SELECT sid FROM sessions WHERE sid = :sid AND revoked_at IS NULL AND expires_at > :now LIMIT 1',
      { sid, now: this.clock.now().getTime() },
    );
    return row !== null;
  }

  /** Records that an app received a code or tokens in this session. */
  async addClient(session: Session, clientId: string): Promise<void> {
    await this.sql.exec(
      `INSERT INTO session_clients (sid, client_id, expires_at) VALUES (:sid, :clientId, :expires)
       ON CONFLICT (sid, client_id) DO NOTHING`,
      { sid: session.sid, clientId, expires: session.expiresAt.getTime() },
    );
  }

  /** Forgets a deleted app in every session: no logout notice goes to it any more. */
  async forgetClient(clientId: string): Promise<void> {
    await this.sql.exec('DELETE FROM session_clients WHERE client_id = :clientId', { clientId });
  }

  /** The apps of a session. */
  async clientsOf(sid: string): Promise<string[]> {
    const rows = await this.sql.select<{ client_id: string }>(
      'SELECT client_id FROM session_clients WHERE sid = :sid ORDER BY client_id',
      { sid },
    );
    return rows.map((r) => r.client_id);
  }

  /**
   * Ends a session (every cookie it had): the user it belonged to, or null when it had ended
   * already or never existed. Exactly one of concurrent callers gets the user.
   */
  async end(sid: string): Promise<string | null> {
    const rows = await this.sql.write<{ user_id: string }>(
      `UPDATE sessions SET revoked_at = :now WHERE sid = :sid AND revoked_at IS NULL AND expires_at > :now
       RETURNING user_id`,
      { sid, now: this.clock.now().getTime() },
    );
    return rows[0]?.user_id ?? null;
  }

  private async revokeRow(key: string): Promise<void> {
    await this.sql.exec('UPDATE sessions SET revoked_at = :now WHERE id = :key AND revoked_at IS NULL', {
      key,
      now: this.clock.now().getTime(),
    });
  }
}
