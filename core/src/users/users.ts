import type { UserRecord } from '@gatehouse-auth/plugin-api';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../errors.js';
import { uniqueViolation } from '../storage/drivers.js';
import type { Sql } from '../storage/sql.js';

export interface NewUser {
  username: string;
  email?: string | null;
  phone?: string | null;
}

export const USERNAME = /^[A-Za-z0-9._@+-]{1,255}$/;
// Deliberately loose: one @, something on each side, a dot in the domain, no spaces.
export const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;
export const E164 = /^\+[1-9][0-9]{6,14}$/;

const invalid = (field: string, what: string) => new ApiError(400, 'INVALID_FIELD', `${field} ${what}`, { field });
const exists = (field: string) =>
  new ApiError(409, 'USER_EXISTS', `a user with this ${field} already exists`, { field });

/** A user's row is its record: these columns, nothing else. */
const COLUMNS = 'id, username, email, phone, status';

/** What `erase` deletes, rows that reference a user before the user (`:id`, or `:pattern` for `%id%`). */
const ERASED = [
  'DELETE FROM session_clients WHERE sid IN (SELECT sid FROM sessions WHERE user_id = :id AND sid IS NOT NULL)',
  'DELETE FROM sessions WHERE user_id = :id',
  'DELETE FROM oauth_tokens WHERE subject = :id',
  'DELETE FROM oauth_codes WHERE grant_id IN (SELECT id FROM oauth_grants WHERE subject = :id)',
  'DELETE FROM oauth_grants WHERE subject = :id',
  'DELETE FROM exchanges WHERE user_id = :id',
  'DELETE FROM verification_statuses WHERE user_id = :id',
  'DELETE FROM login_flows WHERE user_id = :id',
  'DELETE FROM devices WHERE user_id = :id',
  'DELETE FROM credentials WHERE user_id = :id',
  'DELETE FROM events WHERE user_id = :id',
  'DELETE FROM plugin_records WHERE key LIKE :pattern OR data LIKE :pattern',
  'DELETE FROM user_identifiers WHERE user_id = :id',
];

/**
 * The users table keeps the DATE columns its first migration made: PostgreSQL takes a Date, the
 * SQLite file the text form Sequelize wrote ("YYYY-MM-DD HH:mm:ss.SSS +00:00").
 */
export function timestamp(sql: Sql, date: Date): Date | string {
  return sql.dialect === 'postgres' ? date : date.toISOString().replace('T', ' ').replace('Z', ' +00:00');
}

/** The user directory. Users are what verification methods enrol against. */
export class UserService {
  constructor(private readonly sql: Sql) {}

  async create(input: NewUser): Promise<UserRecord> {
    const username = typeof input.username === 'string' ? input.username.trim() : '';
    if (!USERNAME.test(username)) throw invalid('username', 'must be 1-255 letters, digits or ._@+-');
    const email = input.email ? String(input.email).trim().toLowerCase() : null;
    if (email !== null && !EMAIL.test(email)) throw invalid('email', 'must be an email address');
    const phone = input.phone ? String(input.phone).trim() : null;
    if (phone !== null && !E164.test(phone)) throw invalid('phone', 'must be an E.164 number such as +15551234567');
    const user: UserRecord = { id: randomUUID(), username, email, phone, status: 'active' };
    // One namespace for all three: a username may not be another user's email or phone, or a
    // sign-in with that identifier could reach either account.
    const identifiers = new Map<string, string>();
    for (const [field, value] of Object.entries({ phone, email, username })) {
      if (value !== null) identifiers.set(value.toLowerCase(), field);
    }
    const taken = await this.sql.one<{ value: string }>(
      'SELECT value FROM user_identifiers WHERE value IN (:values) LIMIT 1',
      { values: [...identifiers.keys()] },
    );
    if (taken) throw exists(identifiers.get(taken.value) ?? 'username');
    const now = timestamp(this.sql, new Date());
    try {
      await this.sql.tx(async (db) => {
        await db.exec(
          `INSERT INTO users (id, username, email, phone, status, created_at, updated_at)
           VALUES (:id, :username, :email, :phone, :status, :now, :now)`,
          { ...user, now },
        );
        for (const value of identifiers.keys()) {
          await db.exec('INSERT INTO user_identifiers (value, user_id) VALUES (:value, :id)', { value, id: user.id });
        }
      });
      return user;
    } catch (err) {
      // A creation that raced this one took an identifier between the check and the insert.
      const unique = uniqueViolation(err);
      if (unique) throw exists(unique.column && unique.column !== 'value' ? unique.column : 'username, email or phone');
      throw err;
    }
  }

  async findById(id: string): Promise<UserRecord | null> {
    return this.sql.one<UserRecord>(`SELECT ${COLUMNS} FROM users WHERE id = :id`, { id });
  }

  /**
   * Finds a user by username, email or phone (the `identifier` of a first login stage). New
   * users cannot collide across the three; for rows an earlier release let collide, the
   * precedence is fixed: a username match, then an email, then a phone.
   */
  async findByIdentifier(identifier: string): Promise<UserRecord | null> {
    const value = identifier.trim();
    if (!value) return null;
    return this.sql.one<UserRecord>(
      `SELECT ${COLUMNS} FROM users WHERE username = :value OR email = :lower OR phone = :value
       ORDER BY CASE WHEN username = :value THEN 0 WHEN email = :lower THEN 1 ELSE 2 END LIMIT 1`,
      { value, lower: value.toLowerCase() },
    );
  }

  /**
   * Users whose username, email or phone contains `query` (case-insensitive), by username; an
   * empty query lists all users in the order they were created. `offset` skips that many.
   */
  async search(query: string, limit = 50, offset = 0): Promise<UserRecord[]> {
    const text = query.trim().toLowerCase().slice(0, 255);
    if (!text) return this.list({ limit, offset });
    // LIKE's own wildcards in the query are matched literally.
    const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return this.sql.select<UserRecord>(
      `SELECT ${COLUMNS} FROM users
       WHERE LOWER(username) LIKE :pattern ESCAPE '\\' OR LOWER(COALESCE(email, '')) LIKE :pattern ESCAPE '\\'
          OR COALESCE(phone, '') LIKE :pattern ESCAPE '\\'
       ORDER BY username, id LIMIT :limit OFFSET :offset`,
      { pattern, limit: Math.min(Math.max(limit, 1), 1000), offset: Math.max(offset, 0) },
    );
  }

  /** Sets a user's status; false when there is no such user. A disabled or locked user cannot sign in. */
  async setStatus(id: string, status: UserRecord['status']): Promise<boolean> {
    return this.sql.changed('UPDATE users SET status = :status, updated_at = :now WHERE id = :id RETURNING id', {
      id,
      status,
      now: timestamp(this.sql, new Date()),
    });
  }

  /**
   * Since plugin API 1.3 (behind `UserAccounts.changeAddress`): sets the user's email or phone
   * (validated as at creation; null removes it) and moves its identifier. ApiError 400
   * INVALID_FIELD for a malformed value, 409 USER_EXISTS when another user has it as any
   * identifier; false when there is no such user.
   */
  async setAddress(id: string, field: 'email' | 'phone', raw: string | null): Promise<boolean> {
    const value = raw === null ? null : field === 'email' ? raw.trim().toLowerCase() : raw.trim();
    if (value !== null && field === 'email' && !EMAIL.test(value)) throw invalid('email', 'must be an email address');
    if (value !== null && field === 'phone' && !E164.test(value)) {
      throw invalid('phone', 'must be an E.164 number such as +15551234567');
    }
    try {
      return await this.sql.tx(async (db) => {
        const row = await db.one<UserRecord>(`SELECT ${COLUMNS} FROM users WHERE id = :id`, { id });
        if (!row) return false;
        const old = row[field];
        if (value !== null) {
          const taken = await db.one<{ user_id: string }>('SELECT user_id FROM user_identifiers WHERE value = :value', {
            value: value.toLowerCase(),
          });
          if (taken && taken.user_id !== id) throw exists(field);
        }
        // Another field of the same user may hold the same identifier (a username that is the old email).
        const others = [row.username, field === 'email' ? row.phone : row.email]
          .filter((v): v is string => v !== null)
          .map((v) => v.toLowerCase());
        if (old !== null && !others.includes(old.toLowerCase())) {
          await db.exec('DELETE FROM user_identifiers WHERE value = :value AND user_id = :id', {
            value: old.toLowerCase(),
            id,
          });
        }
        await db.exec(`UPDATE users SET ${field} = :value, updated_at = :now WHERE id = :id`, {
          id,
          value,
          now: timestamp(this.sql, new Date()),
        });
        if (value !== null && !others.includes(value.toLowerCase())) {
          await db.exec('INSERT INTO user_identifiers (value, user_id) VALUES (:value, :id)', {
            value: value.toLowerCase(),
            id,
          });
        }
        return true;
      });
    } catch (err) {
      if (uniqueViolation(err)) throw exists(field);
      throw err;
    }
  }

  /**
   * Since plugin API 1.3 (behind `UserAccounts.deleteUser`): removes the user and every row that
   * references them, in one transaction: credentials, identifiers, devices, browser sessions and
   * the apps signed in on them, OAuth grants with their codes and tokens, login flows with their
   * statuses and exchanges, the user's events, and records (of the core and of plugins) whose
   * key or data names the user's id. False when there was no such user.
   */
  async erase(id: string): Promise<boolean> {
    return this.sql.tx(async (db) => {
      const like = { id, pattern: `%${id}%` };
      for (const statement of ERASED) await db.exec(statement, like);
      const rows = await db.write<{ id: string }>('DELETE FROM users WHERE id = :id RETURNING id', like);
      return rows.length > 0;
    });
  }

  async list(opts: { limit?: number; offset?: number } = {}): Promise<UserRecord[]> {
    return this.sql.select<UserRecord>(
      `SELECT ${COLUMNS} FROM users ORDER BY created_at, id LIMIT :limit OFFSET :offset`,
      {
        limit: Math.min(Math.max(opts.limit ?? 100, 1), 1000),
        offset: Math.max(opts.offset ?? 0, 0),
      },
    );
  }
}
