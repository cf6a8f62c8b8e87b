import type { Clock, ImportedUser, JsonObject, UserImportStore } from '@gatehouse-auth/plugin-api';
import { randomUUID } from 'node:crypto';
import { uniqueViolation } from '../storage/drivers.js';
import type { Params, Sql } from '../storage/sql.js';
import { parseProfile } from './profile.js';
import { E164, EMAIL, timestamp, USERNAME } from './users.js';

// The records the core keeps profiles and proven addresses in (UserProfiles, AccountVerification).
const PROFILE_RECORDS = 'gatehouse:profile';
const ACCOUNT_RECORDS = 'gatehouse:account';

/**
 * `CliServer.userImport` (decision 64): the writes of a user import (`@gatehouse-auth/user-import`,
 * decision 49). The importer checks the rows and asks the methods; the tables are the core's.
 */
export function userImportStore(sql: Sql, clock: Clock): UserImportStore {
  return {
    checkProfile: (value) => parseProfile(value) as ReturnType<UserImportStore['checkProfile']>,
    async taken(values) {
      const taken = new Set<string>();
      for (let i = 0; i < values.length; i += 500) {
        const rows = await sql.select<{ value: string }>(
          'SELECT value FROM user_identifiers WHERE value IN (:values)',
          {
            values: values.slice(i, i + 500),
          },
        );
        for (const row of rows) taken.add(row.value);
      }
      return taken;
    },
    async write(users) {
      // The importer checked every row; a user the directory would refuse is its bug, not stored.
      for (const user of users) {
        const problem = refused(user);
        if (problem) throw new Error(`user import: ${JSON.stringify(user.username)}: ${problem}`);
      }
      const rows = users.map((user) => ({ ...user, id: randomUUID() }));
      try {
        await sql.tx((db) => writeRows(db, clock, rows));
      } catch (err) {
        // A user made meanwhile took an identifier: the transaction rolled back, nothing is stored.
        if (uniqueViolation(err)) {
          throw new Error(
            'an identifier was taken while importing (by a user created meanwhile); nothing was imported',
          );
        }
        throw err;
      }
    },
  };
}

/** What the core's rules refuse of an imported user, or null. */
function refused(user: ImportedUser): string | null {
  if (!USERNAME.test(user.username)) return 'invalid username';
  if (user.email !== null && (!EMAIL.test(user.email) || user.email !== user.email.toLowerCase()))
    return 'invalid email';
  if (user.phone !== null && !E164.test(user.phone)) return 'invalid phone';
  if ((user.emailVerified && !user.email) || (user.phoneVerified && !user.phone)) return 'a proven address it lacks';
  if (user.profile && !parseProfile(user.profile).ok) return 'invalid profile';
  return null;
}

/** The user's identifiers, lower-cased, each once (a username may be the user's own email). */
function identifiers(user: ImportedUser): string[] {
  const values = [user.username, user.email, user.phone].filter((v): v is string => v !== null);
  return [...new Set(values.map((v) => v.toLowerCase()))];
}

async function writeRows(db: Sql, clock: Clock, rows: (ImportedUser & { id: string })[]): Promise<void> {
  const now = clock.now();
  const ms = now.getTime();
  const at = timestamp(db, now);
  await insertMany(
    db,
    'users',
    ['id', 'username', 'email', 'phone', 'status', 'created_at', 'updated_at'],
    rows.map((r) => [r.id, r.username, r.email, r.phone, r.disabled ? 'disabled' : 'active', at, at]),
  );
  await insertMany(
    db,
    'user_identifiers',
    ['value', 'user_id'],
    rows.flatMap((r) => identifiers(r).map((value) => [value, r.id])),
  );
  await insertMany(
    db,
    'credentials',
    ['id', 'user_id', 'method', 'type', 'label', 'secret', 'data', 'counter', 'created_at', 'device_id'],
    rows.flatMap((r) =>
      r.credentials.map(({ method, credential: c }) => [
        randomUUID(),
        r.id,
        method,
        c.type,
        c.label ?? null,
        c.secret ?? null,
        JSON.stringify(c.data ?? {}),
        c.counter ?? 0,
        ms,
        null,
      ]),
    ),
  );
  let seq = 0;
  const record = (plugin: string, key: string, data: JsonObject) => [
    plugin,
    key,
    JSON.stringify(data),
    ms * 1000 + (seq++ % 1000),
    ms,
    null,
  ];
  await insertMany(
    db,
    'plugin_records',
    ['plugin', 'key', 'data', 'seq', 'created_at', 'expires_at'],
    rows.flatMap((r) => [
      ...(r.profile ? [record(PROFILE_RECORDS, r.id, { ...r.profile, updated_at: Math.floor(ms / 1000) })] : []),
      ...(r.emailVerified && r.email ? [record(ACCOUNT_RECORDS, `verified:${r.id}:email`, { address: r.email })] : []),
      ...(r.phoneVerified && r.phone ? [record(ACCOUNT_RECORDS, `verified:${r.id}:sms`, { address: r.phone })] : []),
    ]),
  );
}

/** Multi-row INSERTs, a few hundred parameters each (SQLite's and PostgreSQL's limits are far). */
async function insertMany(db: Sql, table: string, columns: string[], rows: unknown[][]): Promise<void> {
  const perStatement = Math.max(1, Math.floor(900 / columns.length));
  for (let start = 0; start < rows.length; start += perStatement) {
    const params: Params = {};
    const tuples = rows.slice(start, start + perStatement).map((row, i) => {
      const names = row.map((value, j) => {
        const name = `p${i}_${j}`;
        params[name] = value;
        return `:${name}`;
      });
      return `(${names.join(', ')})`;
    });
    await db.exec(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`, params);
  }
}
