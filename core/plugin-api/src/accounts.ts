/**
 * Account actions: the `userAccounts` service (@gatehouse-auth/management provides it) and the
 * core's account store it is built on (`services.accountStore`, decision 0063).
 */
import type { IncomingMessage } from 'node:http';
import type { OAuthClient } from './client.js';
import type { Actor, MethodInfo, Session } from './login.js';
import type { JsonObject, UserRecord } from './values.js';

/**
 * Since plugin API 1.3: what an admin asks a user to do at their next sign-in, before the app gets
 * its answer (Keycloak's required actions): a new password, a second factor.
 */
export const REQUIRED_ACTIONS = ['change_password', 'second_factor'] as const;
export type RequiredAction = (typeof REQUIRED_ACTIONS)[number];

/** A postal address claim (OIDC Core §5.1.1). */
// Types, not interfaces: a profile is stored as a JSON object.
export type AddressClaim = {
  formatted?: string;
  street_address?: string;
  locality?: string;
  region?: string;
  postal_code?: string;
  country?: string;
};

/**
 * The standard claims of OIDC Core §5.1 kept per user, besides those the user record holds
 * (sub, preferred_username = username, email, phone_number), and when they last changed.
 */
export type UserProfile = {
  name?: string;
  given_name?: string;
  family_name?: string;
  middle_name?: string;
  nickname?: string;
  profile?: string;
  picture?: string;
  website?: string;
  gender?: string;
  /** YYYY-MM-DD or YYYY. */
  birthdate?: string;
  zoneinfo?: string;
  locale?: string;
  address?: AddressClaim;
  updated_at?: number;
};

/** A loaded plugin, as `gatehouse plugins` and the console list it. */
export interface LoadedPluginInfo {
  name: string;
  version: string;
  apiVersion: string;
  source: string;
  contributes: Record<string, string[]>;
}

/** A bound device as the pages list it (no key, no push token). */
export interface DeviceListing {
  deviceId: string;
  name: string;
  biometric: boolean;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** Since 1.3: one dependency's state at its last check. */
export interface DependencyState {
  name: string;
  /** `core`, or the plugin that registered it. */
  owner: string;
  up: boolean;
  /** Why it is down: the check's error message. */
  reason?: string;
  /** How long the check took. */
  ms: number;
  checkedAt: string;
}

/** What the server runs, for an admin: apps, plugins, dependencies, whether it is draining. */
export interface ServerOverview {
  apps: OAuthClient[];
  plugins: LoadedPluginInfo[];
  methods: string[];
  dependencies: DependencyState[];
  draining: boolean;
}

/**
 * Since plugin API 1.3 (`services.resolve<UserAccounts>('userAccounts')`, provided by
 * @gatehouse-auth/management): what the console and the account page do to an account, each an
 * event naming who did it (`<actor.via>.<action>`), and the views they read.
 */
export interface UserAccounts {
  createUser(actor: Actor, input: { username: string; email?: string; phone?: string }): Promise<UserRecord>;
  /** A disabled user cannot sign in, and loses every session and token now. */
  disable(actor: Actor, user: UserRecord): Promise<void>;
  /**
   * Deletes the user for good. Their browser sessions end first (apps are told by back-channel
   * logout), then the user and every row that references them go in one transaction
   * (credentials, devices, sessions, tokens, grants, flows, events, records). What stays is one
   * event `<via>.user_deleted` without personal data: no user id, username, email, phone or
   * address, only `data.user`, a SHA-256 of the id (the same user deleted twice is the same hash;
   * nothing leads back from it). False when there was no such user.
   */
  deleteUser(actor: Actor, user: UserRecord): Promise<boolean>;
  /**
   * Sets the user's email address or phone number (`null` removes it), once the caller has
   * proven the new one reaches the user (a code sent there). ApiError 400 INVALID_FIELD for a
   * malformed value, 409 USER_EXISTS when another user has it. Event `<via>.address_changed`
   * with the field only (no address). The user is told at the old address by the caller, which
   * knows the channel.
   */
  changeAddress(actor: Actor, user: UserRecord, field: 'email' | 'phone', value: string | null): Promise<void>;
  /** Lets a disabled or locked user sign in again. */
  enable(actor: Actor, user: UserRecord): Promise<void>;
  /**
   * Lifts a factor's lockout (FDS rules read `factor.unlocked` as a reset of the failures
   * before it), as the admin API's unlock does.
   */
  unlockFactor(actor: Actor, user: UserRecord, method: string): Promise<void>;
  /** Removes every credential of a method (the user sets it up again); sessions and tokens end. */
  resetFactor(actor: Actor, user: UserRecord, method: string): Promise<number>;
  /** Removes one credential (a passkey); sessions and tokens end. An ApiError 404 when there is none. */
  removeCredential(actor: Actor, user: UserRecord, method: string, credentialId: string): Promise<void>;
  /** Runs a method's setup again with no input (a new set of backup codes): what it answers. */
  renew(actor: Actor, user: UserRecord, method: string, req: IncomingMessage): Promise<JsonObject>;
  /** Removes a bound device and what was set up on it; false when the user has no such device. */
  removeDevice(actor: Actor, user: UserRecord, deviceId: string): Promise<boolean>;
  /** Ends one session of the user; false when it is not a live session of theirs. */
  endSession(actor: Actor, user: UserRecord, sid: string, live: string[]): Promise<boolean>;
  /** Ends every session of the user but `keep` (the account page's own): how many ended. */
  endSessions(actor: Actor, user: UserRecord, live: string[], keep?: string | null): Promise<number>;
  /** Users whose username, email or phone contains `query` (all when empty), by creation. */
  search(query: string, limit: number, offset?: number): Promise<UserRecord[]>;
  findById(id: string): Promise<UserRecord | null>;
  /** Every method for the user, as enrollment lists them (`method`, `enrolled`, `credentials`…). */
  methods(user: UserRecord, req: IncomingMessage): Promise<JsonObject[]>;
  /** A registered method, named in the request's language; null when there is none. */
  method(id: string, req: IncomingMessage): MethodInfo | null;
  /** The user's OIDC profile claims (name, address, …) and `updated_at`. */
  profile(userId: string): Promise<UserProfile>;
  /**
   * Changes the user's profile claims by a JSON merge patch (`null` removes a claim); a bad
   * value refuses the whole patch (ApiError 400 INVALID_FIELD). Event `user.profile_updated`.
   */
  updateProfile(user: UserRecord, patch: Record<string, unknown>): Promise<UserProfile>;
  /** What the user must do at their next sign-in (`change_password`, `second_factor`). */
  requiredActions(userId: string): Promise<RequiredAction[]>;
  /**
   * Sets what the user must do at their next sign-in (the hosted page walks them through it
   * before the app gets its answer); an empty list clears it. Event `<via>.required_actions_set`
   * with the list; the actions kept (unknown ones dropped).
   */
  setRequiredActions(actor: Actor, user: UserRecord, actions: readonly RequiredAction[]): Promise<RequiredAction[]>;
  /** The user's live browser sessions. */
  sessions(userId: string): Promise<Session[]>;
  /** The apps a session signed in to. */
  clientsOf(sid: string): Promise<string[]>;
  /** The user's bound devices, as a page lists them (no key, no push token). */
  devices(userId: string): Promise<DeviceListing[]>;
  overview(): Promise<ServerOverview>;
}

/**
 * Since plugin API 1.3 (`services.accountStore`): the core's account operations that
 * `UserAccounts` is built on, for the plugin that provides it. They record no event and check
 * nothing of who asks: every other plugin uses `userAccounts`, whose calls are audited.
 */
export interface AccountStore {
  /** A new active user; ApiError 409 USER_EXISTS, 400 INVALID_FIELD. */
  createUser(input: { username: string; email?: string; phone?: string }): Promise<UserRecord>;
  setStatus(userId: string, status: UserRecord['status']): Promise<void>;
  /** Ends every browser session of the user (apps told by back-channel logout) and revokes their tokens. */
  signOut(userId: string, reason: string): Promise<void>;
  /** Ends one browser session; false when it was not live. */
  endSession(sid: string, reason: string): Promise<boolean>;
  /** Deletes the user and every row that references them, in one transaction; false when there was none. */
  erase(userId: string): Promise<boolean>;
  /** Sets or (null) removes the email or phone; false when there is no such user. */
  setAddress(userId: string, field: 'email' | 'phone', value: string | null): Promise<boolean>;
  search(query: string, limit: number, offset: number): Promise<UserRecord[]>;
  findById(id: string): Promise<UserRecord | null>;
  /**
   * A registered method, named in the request's language; null when there is none. (Listing,
   * removing and renewing a user's methods left this store in decision 81: the provider of
   * `userAccounts` sets methods up itself, on `web.setup`.)
   */
  method(id: string, req: IncomingMessage): MethodInfo | null;
  devices(userId: string): Promise<DeviceListing[]>;
  /** Removes a bound device, its pending pushes and what was set up on it; false when none. */
  removeDevice(userId: string, deviceId: string): Promise<boolean>;
  sessions(userId: string): Promise<Session[]>;
  clientsOf(sid: string): Promise<string[]>;
  profile(userId: string): Promise<UserProfile>;
  /** A JSON merge patch of the profile claims; ApiError 400 INVALID_FIELD refuses all of it. */
  updateProfile(userId: string, patch: Record<string, unknown>): Promise<UserProfile>;
  requiredActions(userId: string): Promise<RequiredAction[]>;
  /** Sets them (unknown ones dropped): those kept. */
  setRequiredActions(userId: string, actions: readonly RequiredAction[]): Promise<RequiredAction[]>;
  overview(): Promise<ServerOverview>;
}
