import {
  ApiError,
  type Actor,
  type AppListing,
  type AppStore,
  type AppWithSecret,
  type ClientAdmin,
  type EventLog,
  type JsonObject,
  type Services,
  type StoredAppRow,
} from '@gatehouse-auth/core';

export const DEFAULT_SECRET_OVERLAP_SECONDS = 24 * 3600;
const MAX_SECRET_OVERLAP_SECONDS = 30 * 24 * 3600;
const SECRET_KEYS = ['client_secret', 'client_secret_sha256'];

const notFound = () => new ApiError(404, 'APP_NOT_FOUND', 'no such app');
const invalid = (message: string) => new ApiError(400, 'INVALID_APP', message);

/**
 * `ClientAdmin` (decision 0051, moved out of the core by decision 0063): what may be written to
 * the apps table and how (a config app is read-only, the server makes secrets and keeps only
 * their digests, an entry passes the start-up checks), each change an event naming who made it.
 * The core's `AppStore` does the writes and makes every node see them.
 */
export class AppAdmin implements ClientAdmin {
  constructor(private readonly services: Pick<Services, 'appStore' | 'clock' | 'crypto' | 'events'>) {}

  /** Read at each call: the store checks apps with every plugin's keys, known once all registered. */
  private get store(): AppStore {
    return this.services.appStore;
  }

  private get events(): EventLog {
    return this.services.events;
  }

  async list(): Promise<AppListing[]> {
    const stored = (await this.store.rows()).filter((r) => !this.store.fromConfig(r.client_id));
    return [
      ...this.store.configApps().map(({ entry, hasSecret }) => this.configListing(entry, hasSecret)),
      ...stored.map((r) => this.listing(r)),
    ];
  }

  async get(clientId: string): Promise<AppListing | null> {
    if (this.store.fromConfig(clientId)) {
      const config = this.store.configApps().find((a) => a.entry.client_id === clientId);
      return config ? this.configListing(config.entry, config.hasSecret) : null;
    }
    const row = await this.store.row(clientId);
    return row ? this.listing(row) : null;
  }

  async create(actor: Actor, input: Record<string, unknown>): Promise<AppWithSecret> {
    const { client_secret_sha256: imported, ...entry } = input;
    if (entry.client_secret !== undefined)
      throw invalid('client_secret: Gatehouse makes the secret (or give client_secret_sha256 to import one)');
    if (entry.client_id === undefined) entry.client_id = this.services.crypto.randomToken(16);
    const clientId = entry.client_id;
    if (typeof clientId !== 'string' || clientId.length > 255)
      throw invalid('client_id: must be a string of at most 255 characters');
    if (this.store.fromConfig(clientId)) throw new ApiError(409, 'APP_EXISTS', 'a config app has this client_id');
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
    const secret = needsSecret && imported === undefined ? this.services.crypto.randomToken(32) : null;
    const digest = secret ? this.services.crypto.sha256(secret) : (imported ?? null);
    this.validate(entry, digest);
    if (!(await this.store.insert(clientId, withoutId(entry), digest)))
      throw new ApiError(409, 'APP_EXISTS', 'an app with this client_id exists');
    await this.audit(actor, 'app_created', clientId);
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
    const entry = { ...change(row.settings) };
    const secretKey = Object.keys(entry).find((k) => SECRET_KEYS.includes(k));
    if (secretKey) throw invalid(`${secretKey}: change the secret with a rotation, not an update`);
    if (entry.client_id !== undefined && entry.client_id !== clientId)
      throw invalid('client_id: cannot change (create a new app)');
    entry.client_id = clientId;
    if (entry.token_endpoint_auth_method === 'none' && row.secret_sha256)
      throw invalid('token_endpoint_auth_method: an app with a secret cannot become public (create a new app)');
    this.validate(entry, row.secret_sha256);
    if (!(await this.store.update(clientId, withoutId(entry)))) throw notFound();
    await this.audit(actor, 'app_updated', clientId);
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
    const secret = this.services.crypto.randomToken(32);
    const until = overlap > 0 ? this.services.clock.now().getTime() + overlap * 1000 : null;
    // Another rotation came first: this one would have dropped a secret just handed out.
    if (!(await this.store.rotate(clientId, row.secret_sha256, this.services.crypto.sha256(secret), until)))
      throw new ApiError(409, 'APP_CHANGED', 'the secret was rotated meanwhile; try again');
    await this.audit(actor, 'app_secret_rotated', clientId, { overlap_seconds: overlap });
    return { app: (await this.get(clientId))!, client_secret: secret };
  }

  async delete(actor: Actor, clientId: string): Promise<{ revoked_grants: number; revoked_tokens: number }> {
    await this.writable(clientId);
    // The store revokes what the app was given once no node accepts it any more.
    const revoked = await this.store.delete(clientId);
    if (!revoked) throw notFound();
    const answer = { revoked_grants: revoked.grants, revoked_tokens: revoked.tokens };
    await this.audit(actor, 'app_deleted', clientId, answer);
    return answer;
  }

  /** A database app, or the refusal for a config app or none. */
  private async writable(clientId: string): Promise<StoredAppRow> {
    if (this.store.fromConfig(clientId))
      throw new ApiError(409, 'APP_READ_ONLY', 'this app is in the config file; change it there');
    const row = await this.store.row(clientId);
    if (!row) throw notFound();
    return row;
  }

  /** The same checks as a config app's at start-up; client_secret_jwt needs a secret no database app keeps. */
  private validate(entry: Record<string, unknown>, digest: string | null): void {
    if (entry.token_endpoint_auth_method === 'client_secret_jwt')
      throw invalid(
        'token_endpoint_auth_method: client_secret_jwt needs the secret itself, which database apps do not keep; use private_key_jwt or client_secret_basic (or a config app)',
      );
    try {
      this.store.check(digest ? { ...entry, client_secret_sha256: digest } : entry);
    } catch (err) {
      throw invalid(err instanceof Error ? err.message : String(err));
    }
  }

  /** A config app as listed: its entry without the secret, no row. */
  private configListing(entry: Record<string, unknown>, hasSecret: boolean): AppListing {
    return {
      ...this.listed(String(entry.client_id), entry, 'config', hasSecret),
      previous_secret_expires_at: null,
      created_at: null,
      updated_at: null,
    };
  }

  /** A database app as listed. */
  private listing(row: StoredAppRow): AppListing {
    const entry = { ...row.settings };
    for (const key of SECRET_KEYS) delete entry[key];
    const until = row.previous_secret_expires_at;
    return {
      ...this.listed(row.client_id, entry, 'database', row.secret_sha256 !== null),
      previous_secret_expires_at:
        until !== null && until > this.services.clock.now().getTime() ? new Date(until).toISOString() : null,
      created_at: new Date(row.created_at).toISOString(),
      updated_at: new Date(row.updated_at).toISOString(),
    };
  }

  /** What both kinds of app list alike: the name, the auth method the registry has (else the entry's), the entry. */
  private listed(clientId: string, entry: Record<string, unknown>, source: AppListing['source'], hasSecret: boolean) {
    const method = entry.token_endpoint_auth_method;
    return {
      client_id: clientId,
      source,
      name: typeof entry.name === 'string' ? entry.name : clientId,
      token_endpoint_auth_method:
        this.store.authMethod(clientId) ?? (typeof method === 'string' ? method : 'client_secret_basic'),
      app: { client_id: clientId, ...entry },
      has_secret: hasSecret,
    };
  }

  private async audit(actor: Actor, action: string, clientId: string, data: JsonObject = {}): Promise<void> {
    await this.events.record({
      type: `${actor.via}.${action}`,
      clientId,
      ip: actor.ip,
      data: { actor: actor.userId, ...data },
    });
  }
}

function withoutId(entry: Record<string, unknown>): Record<string, unknown> {
  const { client_id: _id, ...rest } = entry;
  return rest;
}
