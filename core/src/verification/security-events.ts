import type { Logger } from 'pino';
import type { RequestFacts, UserRecord } from '../plugins/extensions.js';
import { PHANTOM_USER_ID } from './context.js';

/** A way to sign in a user has, as an event names it (never a secret). */
export interface ListedCredential {
  method: string;
  label: string | null;
  createdAt: Date;
}

/** What every security event says: whose, by which method, for which app, from where, when. */
interface SecurityOccurrence {
  user: UserRecord;
  method: string;
  clientId: string;
  request: RequestFacts;
  at: Date;
}

/**
 * Since plugin API 1.3: what the core tells `api.securityEvents` listeners about, after the
 * fact (SECURITY-CHECKLIST §7 TOTP 1, §8.6; ASVS 6.3.5): a right one-time code of a spent step
 * presented again, a sign-in blocked or challenged by the FDS rules, a password replaced. With
 * `password_changed`, the ways to sign in set up since the user's last sign-in began (`since`,
 * null when they never signed in): what whoever had the old password may have left behind.
 */
export type SecurityEvent =
  | (SecurityOccurrence & { type: 'code_reuse' | 'sign_in_blocked' | 'sign_in_challenged' })
  | (SecurityOccurrence & {
      type: 'password_changed';
      setUpSince: { since: Date | null; credentials: ListedCredential[] };
    });

/** A plugin's listener: its promise is awaited by shutdown, its failure logged. */
export type SecurityEventListener = (event: SecurityEvent) => void | Promise<void>;

/**
 * Hands security events to the plugins' listeners in the background: the request that caused
 * one never waits for them nor fails with them. The phantom user of an unknown identifier is
 * nobody's: nothing is told of it.
 */
export class SecurityEvents {
  private readonly listeners: { plugin: string; listener: SecurityEventListener }[] = [];
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly logger: Logger) {}

  listen(plugin: string, listener: SecurityEventListener): void {
    this.listeners.push({ plugin, listener });
  }

  /** Whether anyone listens: an event that costs queries to describe is skipped otherwise. */
  get heard(): boolean {
    return this.listeners.length > 0;
  }

  /** Tells every listener (an event, or its description still to be read); returns at once. */
  emit(event: SecurityEvent | (() => Promise<SecurityEvent>)): void {
    if (!this.heard) return;
    const work = (async () => {
      const told = typeof event === 'function' ? await event() : event;
      if (told.user.id === PHANTOM_USER_ID) return;
      await Promise.all(
        this.listeners.map(async ({ plugin, listener }) => {
          try {
            await listener(told);
          } catch (err) {
            this.logger.error({ err, plugin, event: told.type }, 'a security event listener failed');
          }
        }),
      );
    })().catch((err: unknown) => this.logger.error({ err }, 'a security event could not be described'));
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  /** Waits for the listeners still at work (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }
}
