import type {
  Actor,
  AppListing,
  AppSettings,
  AppWithSecret,
  ClientAdmin,
  Clock,
  EventLog,
  JsonObject,
} from '@gatehouse-auth/plugin-api';
import type { Logger } from 'pino';
import type { AppConfig, GatehouseConfig } from '../config/schema.js';
import { ApiError } from '../errors.js';
import type { PeerBus } from '../peer-bus.js';
import { num, parseJson, type Sql } from '../storage/sql.js';
import { randomToken, sha256 } from '../util/crypto.js';
import type { ClientRegistry, StoredClient } from './clients.js';
import type { SessionStore } from './sessions.js';
import type { TokenService } from './tokens.js';

export const DEFAULT_SECRET_OVERLAP_SECONDS = 24 * 3600;
const MAX_SECRET_OVERLAP_SECONDS = 30 * 24 * 3600;
const SECRET_KEYS = ['client_secret', 'client_secret_sha256'];

/** Checks and parses an app entry as start-up does the config's (plugins/app-config.ts). */
export type AppCheck = (entry: unknown, label: string) => { app: AppConfig; settings: AppSettings };

interface ClientRow {
  client_id: string;
  settings: string;
  secret_sha256: string | null;
  previous_secret_sha256: string | null;
  previous_secret_expires_at: string | number | null;
  revision: number | string;
  created_at: string | number;
  updated_at: string | number;
}

const notFound = () => new ApiError(404, 'APP_NOT_FOUND', 'no such app');
const invalid = (message: string) => new ApiError(400, 'INVALID_APP', message);

/**
 * The apps in the database and the registry's snapshot of them (decision 0051): loaded at
 * start-up, loaded again at once on the node that changed them, on the others when the peer bus
 * brings `clients` news, and, for nodes the bus does not reach, when the change marker (row
 * count, newest `updated_at`, sum of revisions) polled every `oauth.clients_poll_seconds` moved.
 */
export class StoredClients implements ClientAdmin {
  private marker = '';
  private queued: Promise<void> | null = null;
  private chain: Promise<void> = Promise.resolve();
  private poll: NodeJS.Timeout | undefined;
  private readonly warned = new Set<string>();

  constructor(
    private readonly deps: {
      sql: Sql;
      clock: Clock;
      config: GatehouseConfig;
      clients: ClientRegistry;
      check: AppCheck;
      peers: PeerBus;
      tokens: TokenService;
      sessions: SessionStore;
      events: EventLog;
      logger: Logger;
    },
  ) {}

  /** Loads the snapshot, listens to the peer bus and starts polling. */
  async start(): Promise<void> {
    this.deps.peers.subscribe({
      // Acknowledged once reloaded: the writer answers after every live node applied the change.
      receive: (news) => (news.clients ? this.refresh().catch((err: unknown) => this.failed(err)) : undefined),
      // Back after an outage: news may have been missed.
      connected: (up) => {
        if (up && this.marker) void this.refresh().catch((err: unknown) => this.failed(err));
      },
    });
    // A database not reachable or not migrated yet at boot (a worker racing its primary, a test
    // that migrates after building): start without database apps; the poll loads them later.
    await this.refresh().catch((err: unknown) => this.failed(err));
    const seconds = this.deps.config.oauth.clients_poll_seconds;
    if (seconds > 0) {
      this.poll = setInterval(() => void this.check().catch((err: unknown) => this.failed(err)), seconds * 1000);
      this.poll.unref();
    }
  }

  stop(): void {
    clearInterval(this.poll);
  }

  /** Loads the snapshot again; a call while a load waits to start joins it. */
  refresh(): Promise<void> {
    if (!this.queued) {
      const next = this.chain.then(() => {
        this.queued = null;
        return this.load();
      });
      this.queued = next;
      this.chain = next.catch(() => undefined);
    }
    return this.queued;
  }

  /** The poll: loads again only when the marker moved. */
  private async check(): Promise<void> {
    const row = await this.deps.sql.one<{ n: unknown; latest: unknown; revs: unknown }>(
      'SELECT COUNT(*) AS n, MAX(updated_at) AS latest, SUM(revision) AS revs FROM clients',
    );
    if (markerOf(num(row?.n ?? 0), num(row?.latest ?? 0), num(row?.revs ?? 0)) !== this.marker) await this.refresh();
  }

  private async load(): Promise<void> {
    const rows = await this.deps.sql.select<ClientRow>('SELECT * FROM clients ORDER BY client_id');
    const apps: StoredClient[] = [];
    for (const row of rows) {
      try {
        apps.push(this.parsed(row));
      } catch (err) {
        this.warnOnce(
          `invalid:${row.client_id}:${num(row.revision)}`,
          { client_id: row.client_id, err },
          'a database app is invalid with the loaded plugins and left out',
        );
      }
    }
    for (const id of this.deps.clients.replaceStored(apps)) {
      this.warnOnce(
        `shadowed:${id}`,
        { client_id: id },
        'a database app has the id of a config app; the config app wins',
      );
    }
    this.marker = markerOf(
      rows.length,
      Math.max(0, ...rows.map((r) => num(r.updated_at))),
      rows.reduce((sum, r) => sum + num(r.revision), 0),
    );
  }

  private parsed(row: ClientRow): StoredClient {
    const entry = { ...parseJson<JsonObject>(row.settings), client_id: row.client_id };
    const { app, settings } = this.deps.check(
      row.secret_sha256 ? { ...entry, client_secret_sha256: row.secret_sha256 } : entry,
      'app',
    );
    const until = row.previous_secret_expires_at === null ? null : num(row.previous_secret_expires_at);
    return {
      app,
      settings,
      previousSecret:
        row.previous_secret_sha256 && until !== null ? { digest: row.previous_secret_sha256, until } : undefined,
    };
  }

  private warnOnce(key: string, obj: object, msg: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.deps.logger.warn(obj, msg);
  }

  private failed(err: unknown): void {
    this.deps.logger.warn({ err }, 'database apps could not be loaded; the previous snapshot stays');
  }

  /** After a write: this node at once, the others through the peer bus. */
  private async changed(): Promise<void> {
    await this.refresh();
    await this.deps.peers.publish({ clients: true });
  }

  // ─────────── the admin operations ───────────

  async list(): Promise<AppListing[]> {
    const rows = await this.deps.sql.select<ClientRow>('SELECT * FROM clients ORDER BY client_id');
    const stored = rows
      .filter((r) => !this.deps.clients.fromConfig(r.client_id))
      .map((r) => this.listing(r.client_id, r));
    return [...this.deps.config.apps.map((a) => this.listing(a.client_id, null)), ...stored];
  }

  async get(clientId: string): Promise<AppListing | null> {
    if (this.deps.clients.fromConfig(clientId)) return this.listing(clientId, null);
    const row = await this.row(clientId);
    return row ? this.listing(clientId, row) : null;
  }

  async create(actor: Actor, input: Record<string, unknown>): Promise<AppWithSecret> {
    const { client_secret_sha256: imported, ...entry } = input;
    if (entry.client_secret !== undefined)
      throw invalid('client_secret: Gatehouse makes the secret (or give client_secret_sha256 to import one)');
    if (entry.client_id === undefined) entry.client_id = randomToken(16);
    const clientId = entry.client_id;
    if (typeof clientId !== 'string' || clientId.length > 255)
      throw invalid('client_id: must be a string of at most 255 characters');
    if (this.deps.clients.fromConfig(clientId))
      throw new ApiError(409, 'APP_EXISTS', 'a config app has this client_id');
    const method = entry.token_endpoint_auth_method;
    const hasKeys = entry.jwks !== undefined || entry.jwks_uri !== undefined;
    const needsSecret =
      method === 'client_secret_basic' || method === 'client_secret_post' || (method === undefined && !hasKeys);
    if (!needsSecret && imported !== undefined) {
      throw invalid(
        `client_secret_sha256: an app authenticating with ${String(method ?? 'private_key_jwt')} has no secret`,
      );
    }
    if (imported !== undefined && typeof imported !== 'string') throw invalid('client_secret_sha256: must be a string');
    const secret = needsSecret && imported === undefined ? randomToken(32) : null;
    const digest = secret ? sha256(secret) : (imported ?? null);
    this.validate(entry, digest);
    const now = this.deps.clock.now().getTime();
    const inserted = await this.deps.sql.write<{ client_id: string }>(
      `INSERT INTO clients (client_id, settings, secret_sha256, revision, created_at, updated_at)
       VALUES (:clientId, :settings, :digest, 1, :now, :now)
       ON CONFLICT (client_id) DO NOTHING RETURNING client_id`,
      { clientId, settings: JSON.stringify(withoutId(entry)), digest, now },
    );
    if (!inserted.length) throw new ApiError(409, 'APP_EXISTS', 'an app with this client_id exists');
    await this.audit(actor, 'app_created', clientId);
    await this.changed();
    return { app: (await this.get(clientId))!, client_secret: secret };
  }

  async replace(actor: Actor, clientId: string, entry: Record<string, unknown>): Promise<AppListing> {
    return this.update(actor, clientId, () => entry);
  }

  async patch(actor: Actor, clientId: string, patch: Record<string, unknown>): Promise<AppListing> {
    return this.update(actor, clientId, (current) => {
      const next: Record<string, unknown> = { ...current };
      for (const [key, value] of Object.entries(patch)) {
        if (value === null) delete next[key];
        else next[key] = value;
      }
      return next;
    });
  }

  private async update(
    actor: Actor,
    clientId: string,
    change: (current: Record<string, unknown>) => Record<string, unknown>,
  ): Promise<AppListing> {
    const row = await this.writable(clientId);
    const entry = { ...change(parseJson<Record<string, unknown>>(row.settings)) };
    const secretKey = Object.keys(entry).find((k) => SECRET_KEYS.includes(k));
    if (secretKey) throw invalid(`${secretKey}: change the secret with a rotation, not an update`);
    if (entry.client_id !== undefined && entry.client_id !== clientId)
      throw invalid('client_id: cannot change (create a new app)');
    entry.client_id = clientId;
    if (entry.token_endpoint_auth_method === 'none' && row.secret_sha256)
      throw invalid('token_endpoint_auth_method: an app with a secret cannot become public (create a new app)');
    this.validate(entry, row.secret_sha256);
    const updated = await this.deps.sql.write<{ client_id: string }>(
      `UPDATE clients SET settings = :settings, revision = revision + 1, updated_at = :now
       WHERE client_id = :clientId RETURNING client_id`,
      { clientId, settings: JSON.stringify(withoutId(entry)), now: this.deps.clock.now().getTime() },
    );
    if (!updated.length) throw notFound();
    await this.audit(actor, 'app_updated', clientId);
    await this.changed();
    return (await this.get(clientId))!;
  }

  async rotateSecret(actor: Actor, clientId: string, opts: { overlapSeconds?: number } = {}): Promise<AppWithSecret> {
    const overlap = opts.overlapSeconds ?? DEFAULT_SECRET_OVERLAP_SECONDS;
    if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_SECRET_OVERLAP_SECONDS) {
      const message = `overlap_seconds must be an integer from 0 to ${MAX_SECRET_OVERLAP_SECONDS}`;
      throw new ApiError(400, 'INVALID_FIELD', message, { field: 'overlap_seconds' });
    }
    const row = await this.writable(clientId);
    if (!row.secret_sha256)
      throw new ApiError(
        409,
        'APP_HAS_NO_SECRET',
        'this app authenticates without a secret (public or private_key_jwt)',
      );
    const secret = randomToken(32);
    const now = this.deps.clock.now().getTime();
    const rotated = await this.deps.sql.write<{ client_id: string }>(
      `UPDATE clients SET previous_secret_sha256 = :previous, previous_secret_expires_at = :until,
         secret_sha256 = :digest, revision = revision + 1, updated_at = :now
       WHERE client_id = :clientId AND secret_sha256 = :previous RETURNING client_id`,
      {
        clientId,
        previous: row.secret_sha256,
        until: overlap > 0 ? now + overlap * 1000 : null,
        digest: sha256(secret),
        now,
      },
    );
    // Another rotation came first: this one would have dropped a secret just handed out.
    if (!rotated.length) throw new ApiError(409, 'APP_CHANGED', 'the secret was rotated meanwhile; try again');
    await this.audit(actor, 'app_secret_rotated', clientId, { overlap_seconds: overlap });
    await this.changed();
    return { app: (await this.get(clientId))!, client_secret: secret };
  }

  async delete(actor: Actor, clientId: string): Promise<{ revoked_grants: number; revoked_tokens: number }> {
    await this.writable(clientId);
    const deleted = await this.deps.sql.write<{ client_id: string }>(
      'DELETE FROM clients WHERE client_id = :clientId RETURNING client_id',
      { clientId },
    );
    if (!deleted.length) throw notFound();
    // No node accepts the app any more, then what it was given is revoked.
    await this.changed();
    const revoked = await this.deps.tokens.revokeClient(clientId, 'client_deleted');
    await this.deps.sessions.forgetClient(clientId);
    // Its users' consents go too: an app created again with this id asks afresh. Consent keys
    // are `<user id (a UUID)>:<client id>`.
    await this.deps.sql.exec(`DELETE FROM plugin_records WHERE plugin = :plugin AND key LIKE :pattern ESCAPE '\\'`, {
      plugin: 'gatehouse:consent',
      pattern: '_'.repeat(36) + ':' + clientId.replace(/[\\%_]/g, (c) => `\\${c}`),
    });
    const answer = { revoked_grants: revoked.grants, revoked_tokens: revoked.tokens };
    await this.audit(actor, 'app_deleted', clientId, answer);
    return answer;
  }

  /** A database app, or the refusal for a config app or none. */
  private async writable(clientId: string): Promise<ClientRow> {
    if (this.deps.clients.fromConfig(clientId))
      throw new ApiError(409, 'APP_READ_ONLY', 'this app is in the config file; change it there');
    const row = await this.row(clientId);
    if (!row) throw notFound();
    return row;
  }

  private row(clientId: string): Promise<ClientRow | null> {
    return this.deps.sql.one<ClientRow>('SELECT * FROM clients WHERE client_id = :clientId', { clientId });
  }

  /** The same checks as a config app's at start-up; client_secret_jwt needs a secret no database app keeps. */
  private validate(entry: Record<string, unknown>, digest: string | null): void {
    if (entry.token_endpoint_auth_method === 'client_secret_jwt')
      throw invalid(
        'token_endpoint_auth_method: client_secret_jwt needs the secret itself, which database apps do not keep; use private_key_jwt or client_secret_basic (or a config app)',
      );
    try {
      this.deps.check(digest ? { ...entry, client_secret_sha256: digest } : entry, 'app');
    } catch (err) {
      throw invalid(err instanceof Error ? err.message : String(err));
    }
  }

  /** An app as listed: a config one (no row; its entry without the secret) or a database one. */
  private listing(clientId: string, row: ClientRow | null): AppListing {
    const entry: Record<string, unknown> = row ? parseJson(row.settings) : { ...this.deps.clients.app(clientId) };
    const hasSecret = row ? row.secret_sha256 !== null : Boolean(entry.client_secret || entry.client_secret_sha256);
    for (const key of SECRET_KEYS) delete entry[key];
    const method = entry.token_endpoint_auth_method;
    const until = row?.previous_secret_expires_at ?? null;
    const time = (at: string | number | undefined) => (at === undefined ? null : new Date(num(at)).toISOString());
    return {
      client_id: clientId,
      source: row ? 'database' : 'config',
      name: typeof entry.name === 'string' ? entry.name : clientId,
      // A config app and a valid database one as the registry has it; else what the entry names.
      token_endpoint_auth_method:
        this.deps.clients.get(clientId)?.authMethod ?? (typeof method === 'string' ? method : 'client_secret_basic'),
      app: { client_id: clientId, ...entry },
      has_secret: hasSecret,
      previous_secret_expires_at:
        until !== null && num(until) > this.deps.clock.now().getTime() ? new Date(num(until)).toISOString() : null,
      created_at: time(row?.created_at),
      updated_at: time(row?.updated_at),
    };
  }

  private async audit(actor: Actor, action: string, clientId: string, data: JsonObject = {}): Promise<void> {
    await this.deps.events.record({
      type: `${actor.via}.${action}`,
      clientId,
      ip: actor.ip,
      data: { actor: actor.userId, ...data },
    });
  }
}

function markerOf(count: number, latest: number, revisions: number): string {
  return `${count}:${latest}:${revisions}`;
}

function withoutId(entry: Record<string, unknown>): Record<string, unknown> {
  const { client_id: _id, ...rest } = entry;
  return rest;
}
