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
