import type { RequestFacts } from './extensions.js';
import type { UserRecord } from './values.js';

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
