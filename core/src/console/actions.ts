import type { DevicePushes } from '../devices/pushes.js';
import type { DeviceStore } from '../devices/store.js';
import type { Logger } from 'pino';
import type { EventLog, RequestFacts, UserRecord } from '../plugins/extensions.js';
import type { LogoutService } from '../oauth/logout.js';
import type { TokenService } from '../oauth/tokens.js';
import type { UserService } from '../users/users.js';
import type { EnrollmentService } from '../verification/enrollment.js';

/** Who did it, for the audit event: an admin of the console, or the user on the account page. */
export interface Actor {
  /** 'console' or 'account'. */
  via: 'console' | 'account';
  userId: string;
  ip: string | null;
}

export interface AccountActionDeps {
  users: UserService;
  logout: LogoutService;
  tokens: TokenService;
  enrollment: EnrollmentService;
  devices: DeviceStore;
  pushes: DevicePushes;
  events: EventLog;
}

/**
 * What the console and the account page do to an account, each recorded as an event
 * (`console.*` or `account.*`) that names who did it. The routes only check who may.
 */
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

  /** Removes one credential (a passkey); sessions and tokens end, as for any removed method. */
  async removeCredential(actor: Actor, user: UserRecord, method: string, credentialId: string): Promise<void> {
    await this.deps.enrollment.remove(user, method, credentialId);
    await this.audit(actor, 'credential_removed', user, { method, credential: credentialId });
  }

  /** Runs a method's setup again with no input (a new set of backup codes): what it answers. */
  async renew(actor: Actor, user: UserRecord, method: string, request: RequestFacts, logger: Logger) {
    const response = await this.deps.enrollment.step('initiation', method, user, {}, request, logger);
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
}

/** What `EnrollmentService.list` says of one method of a user. */
export interface MethodState {
  method: string;
  enrolled: boolean;
  credentials: unknown[];
}

/**
 * The methods whose last credential the user may not remove: without it, some stage of
 * `stages` (the account page's own sign-in) would have no method the user has set up, and the
 * user could not sign in again. A method with several credentials (passkeys) loses one safely.
 */
export function lastWaysIn(methods: MethodState[], stages: string[][]): Set<string> {
  const enrolled = new Set(methods.filter((m) => m.enrolled).map((m) => m.method));
  const needed = new Set<string>();
  for (const m of methods) {
    if (!m.enrolled || m.credentials.length > 1) continue;
    const without = new Set([...enrolled].filter((id) => id !== m.method));
    if (stages.some((stage) => stage.includes(m.method) && !stage.some((id) => without.has(id)))) {
      needed.add(m.method);
    }
  }
  return needed;
}
