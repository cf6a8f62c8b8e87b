import type {
  Actor,
  EventLog,
  JsonObject,
  MethodInfo,
  OAuthClient,
  Session,
  UserRecord,
} from '@gatehouse-auth/plugin-api';
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { ApiError } from '../errors.js';
import type { DevicePushes } from '../devices/pushes.js';
import type { Device, DeviceStore } from '../devices/store.js';
import type { DeviceCookie } from '../http/device.js';
import type { Locales } from '../i18n/locales.js';
import type { DependencyChecks, DependencyState } from '../observability/dependencies.js';
import type { ClientRegistry } from '../oauth/clients.js';
import type { LogoutService } from '../oauth/logout.js';
import type { SessionStore } from '../oauth/sessions.js';
import type { TokenService } from '../oauth/tokens.js';
import type { Extensions, LoadedPluginInfo } from '../plugins/loader.js';
import { requestFacts } from '../verification/context.js';
import type { EnrollmentService } from '../verification/enrollment.js';
import type { UserProfile, UserProfiles } from './profile.js';
import type { RequiredAction, RequiredActions } from './required-actions.js';
import type { UserService } from './users.js';

/** A bound device as the pages list it. */
export type DeviceListing = Pick<Device, 'deviceId' | 'name' | 'biometric' | 'createdAt' | 'lastUsedAt'>;

/** What the server runs, for an admin: apps, plugins, dependencies, whether it is draining. */
export interface ServerOverview {
  apps: OAuthClient[];
  plugins: LoadedPluginInfo[];
  methods: string[];
  dependencies: DependencyState[];
  draining: boolean;
}

/**
 * Since plugin API 1.3 (`services.resolve<UserAccounts>('userAccounts')`): what the console and
 * the account page do to an account, each an event naming who did it, and the views they read.
 */
export type UserAccounts = Pick<AccountActions, keyof AccountActions>;

export interface AccountActionDeps {
  users: UserService;
  logout: LogoutService;
  tokens: TokenService;
  enrollment: EnrollmentService;
  devices: DeviceStore;
  pushes: DevicePushes;
  events: EventLog;
  sessions: SessionStore;
  device: DeviceCookie;
  locales: Locales;
  extensions: Extensions;
  clients: ClientRegistry;
  loadedPlugins: LoadedPluginInfo[];
  dependencies: DependencyChecks;
  lifecycle: { draining: boolean };
  profiles: UserProfiles;
  requiredActions: RequiredActions;
}

/** The core's implementation of `UserAccounts`: the routes that use it only check who may. */
export class AccountActions {
  constructor(private readonly deps: AccountActionDeps) {}

  private audit(actor: Actor, action: string, target: UserRecord, data: Record<string, string | number> = {}) {
    return this.deps.events.record({
      type: `${actor.via}.${action}`,
      userId: target.id,
      ip: actor.ip,
      data: { actor: actor.userId, ...data },
    });
  }

  async createUser(actor: Actor, input: { username: string; email?: string; phone?: string }): Promise<UserRecord> {
    const user = await this.deps.users.create(input);
    await this.audit(actor, 'user_created', user);
    return user;
  }

  /** A disabled user cannot sign in, and loses every session and token now. */
  async disable(actor: Actor, user: UserRecord): Promise<void> {
    await this.deps.users.setStatus(user.id, 'disabled');
    await this.deps.logout.endUserSessions(user.id, 'user_disabled');
    await this.deps.tokens.revokeSubject(user.id, 'user_disabled');
    await this.audit(actor, 'user_disabled', user);
  }

  /**
   * Since plugin API 1.3: deletes the user for good. Their browser sessions end first (apps are
   * told by back-channel logout), then the user and every row that references them go in one
   * transaction (`UserService.erase`: credentials, devices, sessions, tokens, grants, flows,
   * events, records). What stays is one event `<via>.user_deleted` without personal data: no
   * user id, username, email, phone or address, only `data.user`, a SHA-256 of the id (the same
   * user deleted twice is the same hash; nothing leads back from it). False when there was no
   * such user.
   */
  async deleteUser(actor: Actor, user: UserRecord): Promise<boolean> {
    await this.deps.logout.endUserSessions(user.id, 'user_deleted');
    await this.deps.tokens.revokeSubject(user.id, 'user_deleted');
    if (!(await this.deps.users.erase(user.id))) return false;
    const opaque = createHash('sha256').update(`user:${user.id}`).digest('hex');
    // The actor is the user themself on the account page: their id is personal data too.
    const self = actor.userId === user.id;
    await this.deps.events.record({
      type: `${actor.via}.user_deleted`,
      data: { user: opaque, ...(self ? {} : { actor: actor.userId }) },
    });
    return true;
  }

  /**
   * Since plugin API 1.3: sets the user's email address or phone number (`null` removes it),
   * once the caller has proven the new one reaches the user (a code sent there). ApiError 400
   * INVALID_FIELD for a malformed value, 409 USER_EXISTS when another user has it. Event
   * `<via>.address_changed` with the field only (no address). The user is told at the old
   * address by the caller, which knows the channel.
   */
  async changeAddress(actor: Actor, user: UserRecord, field: 'email' | 'phone', value: string | null): Promise<void> {
    if (!(await this.deps.users.setAddress(user.id, field, value))) {
      throw new ApiError(404, 'USER_NOT_FOUND', 'no such user');
    }
    await this.audit(actor, 'address_changed', user, { field });
  }

  /** Lets a disabled or locked user sign in again. */
  async enable(actor: Actor, user: UserRecord): Promise<void> {
    await this.deps.users.setStatus(user.id, 'active');
    await this.audit(actor, 'user_enabled', user, { was: user.status });
  }

  /**
   * Lifts a factor's lockout (FDS rules read `factor.unlocked` as a reset of the failures
   * before it), as the admin API's unlock does.
   */
  async unlockFactor(actor: Actor, user: UserRecord, method: string): Promise<void> {
    await this.deps.events.record({ type: 'factor.unlocked', userId: user.id, method, ip: actor.ip });
    await this.audit(actor, 'factor_unlocked', user, { method });
  }

  /** Removes every credential of a method (the user sets it up again); sessions and tokens end. */
  async resetFactor(actor: Actor, user: UserRecord, method: string): Promise<number> {
    const removed = await this.deps.enrollment.remove(user, method);
    await this.audit(actor, 'factor_reset', user, { method, removed });
    return removed;
  }

  /** Removes one credential (a passkey); sessions and tokens end. An ApiError 404 when there is none. */
  async removeCredential(actor: Actor, user: UserRecord, method: string, credentialId: string): Promise<void> {
    await this.deps.enrollment.remove(user, method, credentialId);
    await this.audit(actor, 'credential_removed', user, { method, credential: credentialId });
  }

  /** Runs a method's setup again with no input (a new set of backup codes): what it answers. */
  async renew(actor: Actor, user: UserRecord, method: string, req: IncomingMessage): Promise<JsonObject> {
    const response = await this.deps.enrollment.step('initiation', method, user, {}, this.facts(req), log(req));
    await this.audit(actor, 'method_renewed', user, { method });
    return response;
  }

  /** Removes a bound device and what was set up on it; false when the user has no such device. */
  async removeDevice(actor: Actor, user: UserRecord, deviceId: string): Promise<boolean> {
    if (!(await this.deps.devices.remove(user.id, deviceId))) return false;
    await this.deps.pushes.endPushesOf(deviceId);
    await this.deps.enrollment.afterRemoval(user.id, 'device.removed', { device_id: deviceId });
    await this.audit(actor, 'device_removed', user, { device: deviceId });
    return true;
  }

  /** Ends one session of the user; false when it is not a live session of theirs. */
  async endSession(actor: Actor, user: UserRecord, sid: string, live: string[]): Promise<boolean> {
    if (!live.includes(sid) || !(await this.deps.logout.endSession(sid, actor.via))) return false;
    await this.audit(actor, 'session_ended', user);
    return true;
  }

  /** Ends every session of the user but `keep` (the account page's own): how many ended. */
  async endSessions(actor: Actor, user: UserRecord, live: string[], keep: string | null = null): Promise<number> {
    let ended = 0;
    for (const sid of live) if (sid !== keep && (await this.deps.logout.endSession(sid, actor.via))) ended++;
    await this.audit(actor, keep ? 'other_sessions_ended' : 'sessions_ended', user, { ended });
    return ended;
  }

  /** Users whose username, email or phone contains `query` (all when empty), by creation. */
  search(query: string, limit: number, offset = 0): Promise<UserRecord[]> {
    return this.deps.users.search(query, limit, offset);
  }

  findById(id: string): Promise<UserRecord | null> {
    return this.deps.users.findById(id);
  }

  /** Every method for the user, as enrollment lists them (`method`, `enrolled`, `credentials`…). */
  methods(user: UserRecord, req: IncomingMessage): Promise<JsonObject[]> {
    return this.deps.enrollment.list(user, this.facts(req), log(req));
  }

  /** A registered method, named in the request's language; null when there is none. */
  method(id: string, req: IncomingMessage): MethodInfo | null {
    const method = this.deps.extensions.methods.get(id);
    if (!method) return null;
    const t = this.deps.locales.for(req);
    const renew = method.page?.renew;
    return {
      label: t.or(`method.${id}.label`, method.page?.label ?? id),
      renew: renew
        ? { text: t.or(`method.${id}.renew.text`, renew.text), button: t.or(`method.${id}.renew.button`, renew.button) }
        : null,
    };
  }

  /** Since 1.3: the user's OIDC profile claims (name, address, …) and `updated_at`. */
  profile(userId: string): Promise<UserProfile> {
    return this.deps.profiles.get(userId);
  }

  /**
   * Since 1.3: changes the user's profile claims by a JSON merge patch (`null` removes a claim);
   * a bad value refuses the whole patch (ApiError 400 INVALID_FIELD). Event `user.profile_updated`.
   */
  async updateProfile(user: UserRecord, patch: Record<string, unknown>): Promise<UserProfile> {
    const profile = await this.deps.profiles.update(user.id, patch);
    await this.deps.events.record({
      type: 'user.profile_updated',
      userId: user.id,
      data: { claims: Object.keys(patch) },
    });
    return profile;
  }

  /** Since 1.3: what the user must do at their next sign-in (`change_password`, `second_factor`). */
  requiredActions(userId: string): Promise<RequiredAction[]> {
    return this.deps.requiredActions.of(userId);
  }

  /**
   * Since 1.3: sets what the user must do at their next sign-in (the hosted page walks them
   * through it before the app gets its answer); an empty list clears it. Event
   * `<via>.required_actions_set` with the list; the actions kept (unknown ones dropped).
   */
  async setRequiredActions(
    actor: Actor,
    user: UserRecord,
    actions: readonly RequiredAction[],
  ): Promise<RequiredAction[]> {
    const kept = await this.deps.requiredActions.set(user.id, actions);
    await this.audit(actor, 'required_actions_set', user, { actions: kept.join(',') });
    return kept;
  }

  /** The user's live browser sessions. */
  sessions(userId: string): Promise<Session[]> {
    return this.deps.sessions.ofUser(userId);
  }

  /** The apps a session signed in to. */
  clientsOf(sid: string): Promise<string[]> {
    return this.deps.sessions.clientsOf(sid);
  }

  /** The user's bound devices, as a page lists them (no key, no push token). */
  async devices(userId: string): Promise<DeviceListing[]> {
    const devices = await this.deps.devices.ofUser(userId);
    return devices.map(({ deviceId, name, biometric, createdAt, lastUsedAt }) => ({
      deviceId,
      name,
      biometric,
      createdAt,
      lastUsedAt,
    }));
  }

  async overview(): Promise<ServerOverview> {
    const { clients, loadedPlugins, extensions, dependencies, lifecycle } = this.deps;
    return {
      apps: clients.all(),
      plugins: loadedPlugins,
      methods: extensions.methods.ids(),
      dependencies: await dependencies.states(),
      draining: lifecycle.draining,
    };
  }

  private facts(req: IncomingMessage) {
    return requestFacts(req, undefined, this.deps.device);
  }
}

const log = (req: IncomingMessage) => (req as IncomingMessage & { log: Logger }).log;
