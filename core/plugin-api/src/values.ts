/** The plain values both the plugin contract and the OAuth types speak of. */

/** JSON-safe data: what is stored as JSON (exchange state, token data, records). */
export type JsonObject = { [key: string]: JsonValue };
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;

export interface UserRecord {
  id: string;
  username: string;
  email: string | null;
  phone: string | null;
  status: 'active' | 'disabled' | 'locked';
}

/** Apps' `AppSettings` by client id: the config's and those stored in the database. */
export interface AppSettingsLookup {
  get(clientId: string): AppSettings | undefined;
}

/** What plugins contributed to one app's config, parsed (defaults filled in). */
export interface AppSettings {
  /** Keys plugins add to apps (`appConfig`), by key. */
  settings: Record<string, unknown>;
  /** Per-app method options (`apps[i].methods.<ID>`, checked with the method's `appOptions`), by method id. */
  methods: Record<string, unknown>;
}
