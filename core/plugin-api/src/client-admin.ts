/** The apps stored in the database: `ClientAdmin` (@gatehouse-auth/management) on the core's `AppStore`. */
import type { Actor } from './login.js';

/** An app as the admin API, the CLI and the console show it: never its secret. */
export interface AppListing {
  client_id: string;
  /** `config`: the config file's (or a plugin's), read-only at run time; `database`: editable. */
  source: 'config' | 'database';
  name: string;
  token_endpoint_auth_method: string;
  /** The app's entry as the config's `apps[]` has it, without `client_secret`/`client_secret_sha256`. */
  app: Record<string, unknown>;
  has_secret: boolean;
  /** After a rotation: until when the previous secret is still accepted (ISO time), else null. */
  previous_secret_expires_at: string | null;
  /** Database apps only (ISO times); null for config apps. */
  created_at: string | null;
  updated_at: string | null;
}

/** An app just created or its secret just rotated: the new secret, shown this once. */
export interface AppWithSecret {
  app: AppListing;
  client_secret: string | null;
}

/**
 * Since plugin API 1.3 (`services.resolve<ClientAdmin>('clientAdmin')`, provided by
 * @gatehouse-auth/management): the apps stored in the
 * database — list, create, change, rotate a secret, delete — for the admin API, the console and
 * the CLI. Every node sees a change at once (decision 0051). Refusals are `ApiError`s:
 * 404 `APP_NOT_FOUND`, 409 `APP_READ_ONLY` (a config app), 409 `APP_EXISTS`, 400 `INVALID_APP`,
 * 409 `APP_HAS_NO_SECRET` (rotating a public or private_key_jwt app), 400 `INVALID_FIELD`.
 */
export interface ClientAdmin {
  list(): Promise<AppListing[]>;
  get(clientId: string): Promise<AppListing | null>;
  /**
   * A new app from a config-style entry. Without `client_id` one is made; without
   * `token_endpoint_auth_method` an app with keys uses private_key_jwt, any other gets a
   * generated secret (`none` makes a public app). `client_secret_sha256` imports an existing
   * secret's digest; `client_secret` and `client_secret_jwt` are refused (no secret is kept).
   */
  create(actor: Actor, entry: Record<string, unknown>): Promise<AppWithSecret>;
  /** Replaces the app's entry (PUT); the secret and every token stay. */
  replace(actor: Actor, clientId: string, entry: Record<string, unknown>): Promise<AppListing>;
  /** Changes keys of the entry (a JSON merge patch: null removes a key); the secret and tokens stay. */
  patch(actor: Actor, clientId: string, patch: Record<string, unknown>): Promise<AppListing>;
  /**
   * A new secret; the previous one keeps working for `overlapSeconds` (default 24 h, 0 ends it
   * at once, at most 30 days). A secret rotated earlier and still in its overlap ends now.
   */
  rotateSecret(actor: Actor, clientId: string, opts?: { overlapSeconds?: number }): Promise<AppWithSecret>;
  /** Deletes the app: its grants and tokens are revoked, sessions forget it. */
  delete(actor: Actor, clientId: string): Promise<{ revoked_grants: number; revoked_tokens: number }>;
}

/** A row of the apps table (decision 0051): the entry as written, never a secret. */
export interface StoredAppRow {
  client_id: string;
  /** The entry without `client_id` and secrets, as the config's `apps[]` has it. */
  settings: Record<string, unknown>;
  /** The SHA-256 of its secret; null for a public or private_key_jwt app. */
  secret_sha256: string | null;
  /** Until when (epoch ms) the previous secret still works; null when there is none. */
  previous_secret_expires_at: number | null;
  /** Bumped by every write. */
  revision: number;
  created_at: number;
  updated_at: number;
}

/**
 * Since plugin API 1.3 (`services.appStore`): the core's apps table and the client registry's
 * view of it, which `ClientAdmin` is built on, for the plugin that provides it. A write is seen
 * by this node when it resolves and by the others through the peer bus; it records no event and
 * checks nothing of who asks: every other plugin uses `clientAdmin`.
 */
export interface AppStore {
  /** The config file's apps (and plugins' first-party ones), without their secrets. */
  configApps(): { entry: Record<string, unknown>; hasSecret: boolean }[];
  /** Whether the id is a config app's (read-only at run time). */
  fromConfig(clientId: string): boolean;
  /** How the registry authenticates the app, when it serves it. */
  authMethod(clientId: string): string | undefined;
  /**
   * Checks an entry as start-up checks the config's apps (schema, the plugins' keys, methods
   * and grants), `client_secret_sha256` included: throws an Error saying what is wrong.
   */
  check(entry: Record<string, unknown>): void;
  rows(): Promise<StoredAppRow[]>;
  row(clientId: string): Promise<StoredAppRow | null>;
  /** False when the id is taken. */
  insert(clientId: string, settings: Record<string, unknown>, secretSha256: string | null): Promise<boolean>;
  /** Replaces the entry; false when there is no such row. */
  update(clientId: string, settings: Record<string, unknown>): Promise<boolean>;
  /**
   * A new secret digest if the current one is still `previous` (false when another rotation came
   * first); `previous` keeps working until `previousUntil` (epoch ms; null: not at all).
   */
  rotate(clientId: string, previous: string, secretSha256: string, previousUntil: number | null): Promise<boolean>;
  /**
   * Deletes the app; then its grants and tokens are revoked, sessions forget it and its users'
   * consents go. Null when there was no such row.
   */
  delete(clientId: string): Promise<{ grants: number; tokens: number } | null>;
}
