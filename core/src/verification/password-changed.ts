import type { History, ListedCredential, RequestFacts, Services, UserRecord } from '@gatehouse-auth/plugin-api';
import type { DeviceStore } from '../devices/store.js';
import type { Extensions } from '../plugins/loader.js';
import type { SecurityEvents } from './security-events.js';

/**
 * The event `password_changed`: a user's password was replaced (every session and token of
 * theirs has just ended), with the ways to sign in set up since their last sign-in began:
 * whoever had the old password, or a leaked login URL, may have added one that the new password
 * does not shut out. The last sign-in began at most `flowTtlSeconds` before its last verified step.
 */
export class PasswordChanges {
  constructor(
    private readonly deps: {
      extensions: Extensions;
      services: Pick<Services, 'credentials' | 'clock'>;
      devices: Pick<DeviceStore, 'ofUser'>;
      history: History;
      securityEvents: Pick<SecurityEvents, 'emit'>;
      flowTtlSeconds: number;
    },
  ) {}

  /** Tells the listeners that `user`'s `methodId` credential was replaced; returns at once. */
  changed(user: UserRecord, methodId: string, request: RequestFacts): void {
    const at = this.deps.services.clock.now();
    this.deps.securityEvents.emit(async () => {
      const since = await this.lastSignInBegan(user.id);
      const credentials = await this.setUpSince(user.id, methodId, since);
      return {
        type: 'password_changed',
        user,
        method: methodId,
        clientId: 'enrollment',
        request,
        at,
        setUpSince: { since, credentials },
      };
    });
  }

  private async lastSignInBegan(userId: string): Promise<Date | null> {
    const [last] = await this.deps.history.recent({ types: ['verification.success'], userId, limit: 1 });
    return last ? new Date(last.at.getTime() - this.deps.flowTtlSeconds * 1000) : null;
  }

  /** Credentials of every other method, and bound devices, created at or after `since` (all when null). */
  private async setUpSince(userId: string, replaced: string, since: Date | null): Promise<ListedCredential[]> {
    const listed: ListedCredential[] = [];
    const recent = (at: Date) => since === null || at >= since;
    for (const method of this.deps.extensions.methods.values()) {
      if (method.id === replaced) continue;
      for (const c of await this.deps.services.credentials(userId, method.id).list()) {
        if (recent(c.createdAt)) listed.push({ method: method.id, label: c.label, createdAt: c.createdAt });
      }
    }
    for (const d of await this.deps.devices.ofUser(userId)) {
      if (recent(d.createdAt)) listed.push({ method: 'device', label: d.name, createdAt: d.createdAt });
    }
    // A set made at once (ten backup codes) is one line.
    const once = new Map(listed.map((c) => [`${c.method}:${c.createdAt.getTime()}`, c]));
    return [...once.values()].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  }
}
