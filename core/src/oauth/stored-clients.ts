import type { AppSettings, AppStore, Clock, JsonObject, StoredAppRow } from '@gatehouse-auth/plugin-api';
import type { Logger } from 'pino';
import type { AppConfig, GatehouseConfig } from '../config/schema.js';
import type { PeerBus } from '../peer-bus.js';
import { num, parseJson, type Sql } from '../storage/sql.js';
import type { ClientRegistry, StoredClient } from './clients.js';
import type { SessionStore } from './sessions.js';
import type { TokenService } from './tokens.js';

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

/**
 * The apps in the database and the registry's snapshot of them (decision 0051): loaded at
 * start-up, loaded again at once on the node that changed them, on the others when the peer bus
 * brings `clients` news, and, for nodes the bus does not reach, when the change marker (row
 * count, newest `updated_at`, sum of revisions) polled every `oauth.clients_poll_seconds` moved.
 * It is also the `AppStore` the plugin providing `clientAdmin` writes through (decision 0063).
 */
export class StoredClients implements AppStore {
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
      this.poll = setInterval(() => void this.pollMarker().catch((err: unknown) => this.failed(err)), seconds * 1000);
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
  private async pollMarker(): Promise<void> {
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

  // ─────────── the apps table, for the plugin that manages apps (`AppStore`) ───────────

  configApps(): { entry: Record<string, unknown>; hasSecret: boolean }[] {
    return this.deps.config.apps.map(({ client_id: id }) => {
      const { client_secret: secret, client_secret_sha256: digest, ...entry } = { ...this.deps.clients.app(id)! };
      return { entry, hasSecret: Boolean(secret || digest) };
    });
  }

  fromConfig(clientId: string): boolean {
    return this.deps.clients.fromConfig(clientId);
  }

  authMethod(clientId: string): string | undefined {
    return this.deps.clients.get(clientId)?.authMethod;
  }

  check(entry: Record<string, unknown>): void {
    this.deps.check(entry, 'app');
  }

  async rows(): Promise<StoredAppRow[]> {
    return (await this.deps.sql.select<ClientRow>('SELECT * FROM clients ORDER BY client_id')).map(appRow);
  }

  async row(clientId: string): Promise<StoredAppRow | null> {
    const row = await this.deps.sql.one<ClientRow>('SELECT * FROM clients WHERE client_id = :clientId', { clientId });
    return row && appRow(row);
  }

  async insert(clientId: string, settings: Record<string, unknown>, digest: string | null): Promise<boolean> {
    const now = this.deps.clock.now().getTime();
    const inserted = await this.deps.sql.write<{ client_id: string }>(
      `INSERT INTO clients (client_id, settings, secret_sha256, revision, created_at, updated_at)
       VALUES (:clientId, :settings, :digest, 1, :now, :now)
       ON CONFLICT (client_id) DO NOTHING RETURNING client_id`,
      { clientId, settings: JSON.stringify(settings), digest, now },
    );
    return this.wrote(inserted.length > 0);
  }

  async update(clientId: string, settings: Record<string, unknown>): Promise<boolean> {
    const updated = await this.deps.sql.write<{ client_id: string }>(
      `UPDATE clients SET settings = :settings, revision = revision + 1, updated_at = :now
       WHERE client_id = :clientId RETURNING client_id`,
      { clientId, settings: JSON.stringify(settings), now: this.deps.clock.now().getTime() },
    );
    return this.wrote(updated.length > 0);
  }

  async rotate(clientId: string, previous: string, digest: string, until: number | null): Promise<boolean> {
    // Conditional on the digest it replaces: two racing rotations cannot both hand out a secret.
    const rotated = await this.deps.sql.write<{ client_id: string }>(
      `UPDATE clients SET previous_secret_sha256 = :previous, previous_secret_expires_at = :until,
         secret_sha256 = :digest, revision = revision + 1, updated_at = :now
       WHERE client_id = :clientId AND secret_sha256 = :previous RETURNING client_id`,
      { clientId, previous, until, digest, now: this.deps.clock.now().getTime() },
    );
    return this.wrote(rotated.length > 0);
  }

  async delete(clientId: string): Promise<{ grants: number; tokens: number } | null> {
    const deleted = await this.deps.sql.write<{ client_id: string }>(
      'DELETE FROM clients WHERE client_id = :clientId RETURNING client_id',
      { clientId },
    );
    // No node accepts the app any more, then what it was given is revoked.
    if (!(await this.wrote(deleted.length > 0))) return null;
    const revoked = await this.deps.tokens.revokeClient(clientId, 'client_deleted');
    await this.deps.sessions.forgetClient(clientId);
    // Its users' consents go too: an app created again with this id asks afresh. Consent keys
    // are `<user id (a UUID)>:<client id>`.
    await this.deps.sql.exec(`DELETE FROM plugin_records WHERE plugin = :plugin AND key LIKE :pattern ESCAPE '\\'`, {
      plugin: 'gatehouse:consent',
      pattern: '_'.repeat(36) + ':' + clientId.replace(/[\\%_]/g, (c) => `\\${c}`),
    });
    return revoked;
  }

  /** After a write that changed a row: this node at once, the others through the peer bus. */
  private async wrote(changed: boolean): Promise<boolean> {
    if (changed) {
      await this.refresh();
      await this.deps.peers.publish({ clients: true });
    }
    return changed;
  }
}

function markerOf(count: number, latest: number, revisions: number): string {
  return `${count}:${latest}:${revisions}`;
}

/** A row as `AppStore` hands it out: parsed, numbers as numbers. */
function appRow(row: ClientRow): StoredAppRow {
  const until = row.previous_secret_expires_at;
  return {
    client_id: row.client_id,
    settings: parseJson<Record<string, unknown>>(row.settings),
    secret_sha256: row.secret_sha256,
    previous_secret_expires_at: until === null ? null : num(until),
    revision: num(row.revision),
    created_at: num(row.created_at),
    updated_at: num(row.updated_at),
  };
}
