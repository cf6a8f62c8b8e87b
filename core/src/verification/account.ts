import type { RecordStore, UserRecord } from '@gatehouse-auth/plugin-api';

export type AccountMedium = 'email' | 'sms';

/**
 * The addresses users proved reach them (account verification, which the compat-cidaas plugin
 * runs): what is kept is the address that was proven, so changing the address makes it
 * unverified again. ID-token `email_verified`, the setup overview and `primary_address:
 * verified` read it, so it is the core's (`services.accounts`).
 */
export class AccountVerification {
  constructor(private readonly deps: { records: RecordStore }) {}

  /** Whether the user's current address for `medium` is the one they proved. */
  async verified(user: UserRecord, medium: AccountMedium): Promise<boolean> {
    const address = medium === 'email' ? user.email : user.phone;
    const proven = await this.deps.records.get(`verified:${user.id}:${medium}`);
    return Boolean(address && proven && proven.data.address === address);
  }

  /** Records that the user proved `address` for `medium`. */
  async markVerified(userId: string, medium: AccountMedium, address: string): Promise<void> {
    await this.deps.records.put(`verified:${userId}:${medium}`, { address });
  }
}
