import {
  ApiError,
  type AccountStore,
  type Actor,
  type DeviceListing,
  type JsonObject,
  type MethodInfo,
  type MethodSetup,
  type RequiredAction,
  type ServerOverview,
  type Services,
  type Session,
  type UserAccounts,
  type UserProfile,
  type UserRecord,
} from '@gatehouse-auth/core';
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * `UserAccounts` (moved out of the core by decision 0063): what the console, the account page
 * and the self-service plugins do to an account, each an event naming who did it, on the core's
 * `AccountStore`. The routes that use it only check who may.
 */
export class AccountActions implements UserAccounts {
  constructor(
    private readonly services: Pick<Services, 'accountStore' | 'events'>,
    /** Listing, removing and renewing methods (this plugin's `methodSetup`, decision 81). */
    private readonly setup: MethodSetup,
  ) {}

  /** Read at each call, as the core lends it. */
  private get store(): AccountStore {
    return this.services.accountStore;
  }

  private audit(actor: Actor, action: string, target: UserRecord, data: Record<string, string | number> = {}) {
    return this.services.events.record({
      type: `${actor.via}.${action}`,
      userId: target.id,
      ip: actor.ip,
      data: { actor: actor.userId, ...data },
    });
  }

  async createUser(actor: Actor, input: { username: string; email?: string; phone?: string }): Promise<UserRecord> {
    const user = await this.store.createUser(input);
    await this.audit(actor, 'user_created', user);
    return user;
  }

  /** A disabled user cannot sign in, and loses every session and token now. */
  async disable(actor: Actor, user: UserRecord): Promise<void> {
    await this.store.setStatus(user.id, 'disabled');
    await this.store.signOut(user.id, 'user_disabled');
    await this.audit(actor, 'user_disabled', user);
  }

  /**
   * Deletes the user for good: sessions end first (apps are told by back-channel logout), then
   * the user and every row that references them. The event carries no personal data: only
   * `data.user`, a SHA-256 of the id.
   */
  async deleteUser(actor: Actor, user: UserRecord): Promise<boolean> {
    await this.store.signOut(user.id, 'user_deleted');
    if (!(await this.store.erase(user.id))) return false;
    const opaque = createHash('sha256').update(`user:${user.id}`).digest('hex');
    // The actor is the user themself on the account page: their id is personal data too.
    const self = actor.userId === user.id;
    await this.services.events.record({
      type: `${actor.via}.user_deleted`,
      data: { user: opaque, ...(self ? {} : { actor: actor.userId }) },
    });
    return true;
  }

  /** Sets or removes the email or phone; the event names the field only (no address). */
  async changeAddress(actor: Actor, user: UserRecord, field: 'email' | 'phone', value: string | null): Promise<void> {
    if (!(await this.store.setAddress(user.id, field, value))) {
      throw new ApiError(404, 'USER_NOT_FOUND', 'no such user');
    }
    await this.audit(actor, 'address_changed', user, { field });
  }

  /** Lets a disabled or locked user sign in again. */
  async enable(actor: Actor, user: UserRecord): Promise<void> {
    await this.store.setStatus(user.id, 'active');
    await this.audit(actor, 'user_enabled', user, { was: user.status });
  }

  /**
   * Lifts a factor's lockout (FDS rules read `factor.unlocked` as a reset of the failures
   * before it), as the admin API's unlock does.
   */
  async unlockFactor(actor: Actor, user: UserRecord, method: string): Promise<void> {
    await this.services.events.record({ type: 'factor.unlocked', userId: user.id, method, ip: actor.ip });
    await this.audit(actor, 'factor_unlocked', user, { method });
  }

  /** Removes every credential of a method (the user sets it up again); sessions and tokens end. */
  async resetFactor(actor: Actor, user: UserRecord, method: string): Promise<number> {
    const removed = await this.setup.remove(user, method);
    await this.audit(actor, 'factor_reset', user, { method, removed });
    return removed;
  }

  /** Removes one credential (a passkey); sessions and tokens end. An ApiError 404 when there is none. */
  async removeCredential(actor: Actor, user: UserRecord, method: string, credentialId: string): Promise<void> {
    await this.setup.remove(user, method, credentialId);
    await this.audit(actor, 'credential_removed', user, { method, credential: credentialId });
  }

  /** Runs a method's setup again with no input (a new set of backup codes): what it answers. */
  async renew(actor: Actor, user: UserRecord, method: string, req: IncomingMessage): Promise<JsonObject> {
    const response = await this.setup.step('initiation', method, user, {}, req);
    await this.audit(actor, 'method_renewed', user, { method });
    return response;
  }

  /** Removes a bound device and what was set up on it; false when the user has no such device. */
  async removeDevice(actor: Actor, user: UserRecord, deviceId: string): Promise<boolean> {
    if (!(await this.store.removeDevice(user.id, deviceId))) return false;
    await this.audit(actor, 'device_removed', user, { device: deviceId });
    return true;
  }

  /** Ends one session of the user; false when it is not a live session of theirs. */
  async endSession(actor: Actor, user: UserRecord, sid: string, live: string[]): Promise<boolean> {
    if (!live.includes(sid) || !(await this.store.endSession(sid, actor.via))) return false;
    await this.audit(actor, 'session_ended', user);
    return true;
  }

  /** Ends every session of the user but `keep` (the account page's own): how many ended. */
  async endSessions(actor: Actor, user: UserRecord, live: string[], keep: string | null = null): Promise<number> {
    let ended = 0;
    for (const sid of live) if (sid !== keep && (await this.store.endSession(sid, actor.via))) ended++;
    await this.audit(actor, keep ? 'other_sessions_ended' : 'sessions_ended', user, { ended });
    return ended;
  }

  /** Users whose username, email or phone contains `query` (all when empty), by creation. */
  search(query: string, limit: number, offset = 0): Promise<UserRecord[]> {
    return this.store.search(query, limit, offset);
  }

  findById(id: string): Promise<UserRecord | null> {
    return this.store.findById(id);
  }

  /** Every method for the user, as enrollment lists them (`method`, `enrolled`, `credentials`…). */
  methods(user: UserRecord, req: IncomingMessage): Promise<JsonObject[]> {
    return this.setup.list(user, req);
  }

  /** A registered method, named in the request's language; null when there is none. */
  method(id: string, req: IncomingMessage): MethodInfo | null {
    return this.store.method(id, req);
  }

  /** The user's OIDC profile claims (name, address, …) and `updated_at`. */
  profile(userId: string): Promise<UserProfile> {
    return this.store.profile(userId);
  }

  /** Changes the profile claims by a JSON merge patch; event `user.profile_updated` with the claims named. */
  async updateProfile(user: UserRecord, patch: Record<string, unknown>): Promise<UserProfile> {
    const profile = await this.store.updateProfile(user.id, patch);
    await this.services.events.record({
      type: 'user.profile_updated',
      userId: user.id,
      data: { claims: Object.keys(patch) },
    });
    return profile;
  }

  /** What the user must do at their next sign-in (`change_password`, `second_factor`). */
  requiredActions(userId: string): Promise<RequiredAction[]> {
    return this.store.requiredActions(userId);
  }

  /** Sets what the user must do at their next sign-in; event `<via>.required_actions_set` with the list. */
  async setRequiredActions(
    actor: Actor,
    user: UserRecord,
    actions: readonly RequiredAction[],
  ): Promise<RequiredAction[]> {
    const kept = await this.store.setRequiredActions(user.id, actions);
    await this.audit(actor, 'required_actions_set', user, { actions: kept.join(',') });
    return kept;
  }

  /** The user's live browser sessions. */
  sessions(userId: string): Promise<Session[]> {
    return this.store.sessions(userId);
  }

  /** The apps a session signed in to. */
  clientsOf(sid: string): Promise<string[]> {
    return this.store.clientsOf(sid);
  }

  /** The user's bound devices, as a page lists them (no key, no push token). */
  devices(userId: string): Promise<DeviceListing[]> {
    return this.store.devices(userId);
  }

  overview(): Promise<ServerOverview> {
    return this.store.overview();
  }
}
