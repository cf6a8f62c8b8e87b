import type {
  Clock,
  Credential,
  CredentialStore,
  EventLog,
  EventQuery,
  History,
  JsonObject,
  NewCredential,
  NewEvent,
  RecordStore,
  StoredEvent,
  StoredRecord,
} from '@gatehouse-auth/plugin-api';
import { randomUUID } from 'node:crypto';
import { sha256 } from '../util/crypto.js';
import { eventId } from './event-ids.js';
import { dateOrNull, num, parseJson, type Params, type Sql } from './sql.js';

interface CredentialRow {
  id: string;
  user_id: string;
  method: string;
  type: string;
  label: string | null;
  secret: string | null;
  data: string;
  counter: unknown;
  used_at: unknown;
  created_at: unknown;
  device_id: string | null;
}

function toCredential(r: CredentialRow): Credential {
  return {
    id: r.id,
    userId: r.user_id,
    method: r.method,
    type: r.type,
    label: r.label,
    secret: r.secret,
    data: parseJson<JsonObject>(r.data),
    counter: num(r.counter),
    usedAt: dateOrNull(r.used_at),
    createdAt: new Date(num(r.created_at)),
    deviceId: r.device_id ?? null,
  };
}

/** Credentials of one user for one method; every statement is scoped to both. */
export function credentialStore(sql: Sql, clock: Clock, userId: string, method: string): CredentialStore {
  const scope = { u: userId, m: method };
  const insert = async (c: NewCredential, db: Sql = sql): Promise<Credential> => {
    const row = {
      id: randomUUID(),
      type: c.type,
      label: c.label ?? null,
      secret: c.secret ?? null,
      data: JSON.stringify(c.data ?? {}),
      counter: c.counter ?? 0,
      device_id: c.deviceId ?? null,
      now: clock.now().getTime(),
    };
    await db.exec(
      `INSERT INTO credentials (id, user_id, method, type, label, secret, data, counter, used_at, created_at, device_id)
       VALUES (:id, :u, :m, :type, :label, :secret, :data, :counter, NULL, :now, :device_id)`,
      { ...scope, ...row },
    );
    return toCredential({ ...row, user_id: userId, method, used_at: null, created_at: row.now });
  };
  return {
    async list(type) {
      const rows = await sql.select<CredentialRow>(
        `SELECT * FROM credentials WHERE user_id = :u AND method = :m ${type === undefined ? '' : 'AND type = :type'}
         ORDER BY created_at, id`,
        { ...scope, type },
      );
      return rows.map(toCredential);
    },
    async get(id) {
      const row = await sql.one<CredentialRow>(
        'SELECT * FROM credentials WHERE id = :id AND user_id = :u AND method = :m',
        { ...scope, id },
      );
      return row ? toCredential(row) : null;
    },
    add: (c) => insert(c),
    async replaceAll(type, list) {
      return sql.tx(async (db) => {
        await db.exec('DELETE FROM credentials WHERE user_id = :u AND method = :m AND type = :type', {
          ...scope,
          type,
        });
        const out: Credential[] = [];
        for (const c of list) out.push(await insert({ ...c, type }, db));
        return out;
      });
    },
    remove: async (id) =>
      sql.changed('DELETE FROM credentials WHERE id = :id AND user_id = :u AND method = :m RETURNING id', {
        ...scope,
        id,
      }),
    markUsed: async (id) =>
      sql.changed(
        `UPDATE credentials SET used_at = :now WHERE id = :id AND user_id = :u AND method = :m AND used_at IS NULL
         RETURNING id`,
        { ...scope, id, now: clock.now().getTime() },
      ),
    advanceCounter: async (id, value) =>
      sql.changed(
        `UPDATE credentials SET counter = :value WHERE id = :id AND user_id = :u AND method = :m AND counter < :value
         RETURNING id`,
        { ...scope, id, value },
      ),
    async update(id, changes) {
      const values: Params = {
        secret: changes.secret,
        data: changes.data === undefined ? undefined : JSON.stringify(changes.data),
        label: changes.label,
      };
      const sets = Object.keys(values)
        .filter((column) => values[column] !== undefined)
        .map((column) => `${column} = :${column}`);
      if (sets.length === 0) return;
      const params: Params = { ...scope, id, ...values };
      await sql.exec(
        `UPDATE credentials SET ${sets.join(', ')} WHERE id = :id AND user_id = :u AND method = :m`,
        params,
      );
    },
  };
}

interface EventRow {
  id: string;
  at: unknown;
  type: string;
  key: string | null;
  user_id: string | null;
  method: string | null;
  client_id: string | null;
  ip: string | null;
  outcome: string | null;
  reason: string | null;
  data: string;
  count?: unknown;
}

/**
 * A new event's columns other than id, time, count and data, absent ones as null. Their order
 * is the one an aggregated event's id hashes.
 */
export function eventColumns(e: NewEvent) {
  return {
    type: e.type,
    key: e.key ?? null,
    userId: e.userId ?? null,
    method: e.method ?? null,
    clientId: e.clientId ?? null,
    ip: e.ip ?? null,
    outcome: e.outcome ?? null,
    reason: e.reason ?? null,
  };
}

/** The queries' fields that match a column exactly, and the column. */
const EQUAL_COLUMNS = { key: 'key', userId: 'user_id', method: 'method', ip: 'ip' } as const;

/** The append-only event log, and read access to it for FDS rules. */
export class EventStore implements EventLog, History {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async record(e: NewEvent): Promise<void> {
    const at = this.clock.now().getTime();
    const columns = eventColumns(e);
    // An aggregated event's id is its fields and time window: a repeat lands on the same row.
    const id = e.aggregateSeconds
      ? sha256(JSON.stringify([...Object.values(columns), Math.floor(at / (e.aggregateSeconds * 1000))])).slice(0, 36)
      : eventId(at);
    await this.sql.exec(
      `INSERT INTO events (id, at, type, key, user_id, method, client_id, ip, outcome, reason, data, count)
       VALUES (:id, :at, :type, :key, :userId, :method, :clientId, :ip, :outcome, :reason, :data, 1)
       ${e.aggregateSeconds ? 'ON CONFLICT (id) DO UPDATE SET count = events.count + 1, at = excluded.at' : ''}`,
      { id, at, ...columns, data: JSON.stringify(e.data ?? {}) },
    );
  }

  /** One multi-row INSERT (the FDS verdicts of a phase). Aggregated events go one by one. */
  async recordMany(events: NewEvent[]): Promise<void> {
    const plain = events.filter((e) => !e.aggregateSeconds);
    for (const e of events) if (e.aggregateSeconds) await this.record(e);
    if (plain.length === 0) return;
    const at = this.clock.now().getTime();
    const params: Params = { at };
    const values = plain.map((e, i) => {
      const row = { id: eventId(at), ...eventColumns(e), data: JSON.stringify(e.data ?? {}) };
      for (const [name, value] of Object.entries(row)) params[`${name}${i}`] = value;
      return `(:id${i}, :at, :type${i}, :key${i}, :userId${i}, :method${i}, :clientId${i}, :ip${i}, :outcome${i}, :reason${i}, :data${i}, 1)`;
    });
    await this.sql.exec(
      `INSERT INTO events (id, at, type, key, user_id, method, client_id, ip, outcome, reason, data, count)
       VALUES ${values.join(', ')}`,
      params,
    );
  }

  private where(q: EventQuery): { clause: string; params: Params } {
    const parts: string[] = [];
    const params: Params = {};
    if (q.types?.length) {
      parts.push(`type IN (:types)`);
      params.types = q.types;
    }
    for (const [field, column] of Object.entries(EQUAL_COLUMNS)) {
      const value = q[field as keyof typeof EQUAL_COLUMNS];
      if (value !== undefined) {
        parts.push(`${column} = :${field}`);
        params[field] = value;
      }
    }
    if (q.since) {
      parts.push('at >= :since');
      params.since = q.since.getTime();
    }
    return { clause: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
  }

  async count(q: EventQuery): Promise<number> {
    const { clause, params } = this.where(q);
    // With a limit the count stops there: a user with a million failures costs no more rows.
    const rows = q.limit ? `(SELECT count FROM events ${clause} LIMIT :limit) t` : `events ${clause}`;
    const row = await this.sql.one<{ n: unknown }>(`SELECT COALESCE(SUM(count), 0) AS n FROM ${rows}`, {
      ...params,
      limit: q.limit,
    });
    return num(row?.n ?? 0);
  }

  async recent(q: EventQuery): Promise<StoredEvent[]> {
    const { clause, params } = this.where(q);
    // Within a millisecond the id, time-ordered (event-ids.ts), keeps the order of writing.
    const rows = await this.sql.select<EventRow>(
      `SELECT * FROM events ${clause} ORDER BY at DESC, id DESC LIMIT :limit`,
      { ...params, limit: Math.min(q.limit ?? 100, 10_000) },
    );
    return rows.map((r) => ({
      id: r.id,
      at: new Date(num(r.at)),
      count: num(r.count ?? 1),
      type: r.type,
      key: r.key,
      userId: r.user_id,
      method: r.method,
      clientId: r.client_id,
      ip: r.ip,
      outcome: r.outcome,
      reason: r.reason,
      data: parseJson<JsonObject>(r.data),
    }));
  }
}

interface RecordRow {
  key: string;
  data: string;
  created_at: unknown;
  expires_at: unknown;
}

function toRecord(r: RecordRow): StoredRecord {
  return {
    key: r.key,
    data: parseJson<JsonObject>(r.data),
    createdAt: new Date(num(r.created_at)),
    expiresAt: dateOrNull(r.expires_at),
  };
}

/** A plugin's own key-value records; `plugin` namespaces every statement. */
export function recordStore(sql: Sql, clock: Clock, plugin: string): RecordStore {
  const live = '(expires_at IS NULL OR expires_at > :now)';
  const base = () => ({ plugin, now: clock.now().getTime() });
  let seq = 0;
  const row = (key: string, data: JsonObject, opts: { ttlSeconds?: number }) => {
    const now = clock.now().getTime();
    return {
      plugin,
      key,
      data: JSON.stringify(data),
      // Orders records written in the same millisecond.
      seq: now * 1000 + (seq++ % 1000),
      now,
      expires: opts.ttlSeconds ? now + opts.ttlSeconds * 1000 : null,
    };
  };
  const insert = `INSERT INTO plugin_records (plugin, key, data, seq, created_at, expires_at)
    VALUES (:plugin, :key, :data, :seq, :now, :expires)
    ON CONFLICT (plugin, key) DO UPDATE SET data = excluded.data, seq = excluded.seq,
      created_at = excluded.created_at, expires_at = excluded.expires_at`;
  return {
    async put(key, data, opts = {}) {
      await sql.exec(insert, row(key, data, opts));
    },
    // The conflict branch replaces only an expired record: a live one keeps the key.
    add: async (key, data, opts = {}) =>
      sql.changed(
        `${insert} WHERE plugin_records.expires_at IS NOT NULL AND plugin_records.expires_at <= :now RETURNING key`,
        row(key, data, opts),
      ),
    async get(key) {
      const row = await sql.one<RecordRow>(
        `SELECT * FROM plugin_records WHERE plugin = :plugin AND key = :key AND ${live}`,
        { ...base(), key },
      );
      return row ? toRecord(row) : null;
    },
    async consume(key) {
      const rows = await sql.write<RecordRow>(
        `DELETE FROM plugin_records WHERE plugin = :plugin AND key = :key AND ${live} RETURNING *`,
        { ...base(), key },
      );
      return rows[0] ? toRecord(rows[0]) : null;
    },
    delete: async (key) =>
      sql.changed(`DELETE FROM plugin_records WHERE plugin = :plugin AND key = :key AND ${live} RETURNING key`, {
        ...base(),
        key,
      }),
    async list(prefix, opts = {}) {
      const rows = await sql.select<RecordRow>(
        `SELECT * FROM plugin_records WHERE plugin = :plugin AND key LIKE :pattern ESCAPE '\\' AND ${live}
         ORDER BY seq DESC LIMIT :limit`,
        {
          ...base(),
          pattern: prefix.replace(/[\\%_]/g, (c) => `\\${c}`) + '%',
          limit: Math.min(opts.limit ?? 100, 1000),
        },
      );
      return rows.map(toRecord);
    },
  };
}
