import type { GatehouseConfig } from '../config/schema.js';
import { maskEmail, maskPhone } from '../methods/code-method.js';
import type { JsonObject, RecordStore, UserRecord } from '../plugins/extensions.js';
import type { Services } from '../services.js';
import { verificationError } from './errors.js';

export type AccountMedium = 'email' | 'sms';

/** How long a code is good for, and how many wrong ones end it. */
const TTL_SECONDS = 600;
const MAX_ATTEMPTS = 5;

/**
 * Account verification (cidaas's account-verification calls): proving that the email address
 * or phone number on the user record reaches the user, with a code sent through the
 * notification channels. What is kept is the address that was proven, so changing the address
 * makes it unverified again. FDS rules and plugins read it with `services.accounts.verified`.
 */
export class AccountVerification {
  constructor(
    private readonly deps: {
      config: GatehouseConfig;
      services: Services;
      /** Pending codes (by the hash of their exchange id) and proven addresses (by user). */
      records: RecordStore;
    },
  ) {}

  async start(user: UserRecord, medium: AccountMedium): Promise<JsonObject> {
    const { services, config } = this.deps;
    const address = medium === 'email' ? user.email : user.phone;
    if (!address)
      throw verificationError(
        'INVALID_FIELD',
        `the user has no ${medium === 'email' ? 'email address' : 'phone number'}`,
      );
    const channel = medium === 'email' ? config.notifications.email_channel : config.notifications.sms_channel;
    if (!channel)
      throw verificationError('METHOD_NOT_ENABLED', `no notification channel sends ${medium} (notifications)`);
    const code = services.crypto.randomDigits(6);
    const handle = services.crypto.randomToken(24);
    const expiresAt = new Date(services.clock.now().getTime() + TTL_SECONDS * 1000);
    await this.deps.records.put(
      this.pendingKey(handle),
      { user_id: user.id, medium, address, code_mac: services.secrets.mac(`${handle}:${code}`), attempts: 0 },
      { ttlSeconds: TTL_SECONDS },
    );
    const text = `Your code to verify this ${medium === 'email' ? 'address' : 'number'} is ${code}. It expires in 10 minutes.`;
    await services.channels.enqueue(
      channel,
      { kind: medium, to: address, ...(medium === 'email' ? { subject: 'Verify your email address' } : {}), text },
      { expiresAt, secrets: [code], about: { userId: user.id } },
    );
    return {
      exchange_id: { exchange_id: handle, expires_at: expiresAt.toISOString() },
      medium_text: medium === 'email' ? maskEmail(address) : maskPhone(address),
    };
  }

  /** The code for an exchange: the address is then verified. Wrong codes spend the exchange's few attempts. */
  async confirm(handle: string, code: string): Promise<JsonObject> {
    const { services } = this.deps;
    const key = this.pendingKey(handle);
    const pending = await this.deps.records.get(key);
    if (!pending) throw verificationError('EXCHANGE_INVALID', 'no such account verification in progress');
    const data = pending.data as {
      user_id: string;
      medium: AccountMedium;
      address: string;
      code_mac: string;
      attempts: number;
    };
    if (!/^\d{6}$/.test(code) || !services.crypto.safeEqual(services.secrets.mac(`${handle}:${code}`), data.code_mac)) {
      const attempts = data.attempts + 1;
      if (attempts >= MAX_ATTEMPTS) {
        await this.deps.records.delete(key);
        throw verificationError('TOO_MANY_ATTEMPTS', 'too many wrong codes; start again');
      }
      const left = Math.max(
        1,
        Math.ceil(((pending.expiresAt?.getTime() ?? 0) - services.clock.now().getTime()) / 1000),
      );
      await this.deps.records.put(key, { ...data, attempts }, { ttlSeconds: left });
      throw verificationError('VERIFICATION_FAILED');
    }
    // Single use: of two requests with the right code, one verifies.
    if (!(await this.deps.records.consume(key))) throw verificationError('EXCHANGE_USED');
    await this.deps.records.put(`verified:${data.user_id}:${data.medium}`, { address: data.address });
    await services.events.record({ type: 'account.verified', userId: data.user_id, data: { medium: data.medium } });
    return { verified: true, medium: data.medium, sub: data.user_id };
  }

  /** Whether the user's current address for `medium` is the one they proved. */
  async verified(user: UserRecord, medium: AccountMedium): Promise<boolean> {
    const address = medium === 'email' ? user.email : user.phone;
    const proven = await this.deps.records.get(`verified:${user.id}:${medium}`);
    return Boolean(address && proven && proven.data.address === address);
  }

  private pendingKey(handle: string): string {
    return `pending:${this.deps.services.crypto.sha256(handle)}`;
  }
}
