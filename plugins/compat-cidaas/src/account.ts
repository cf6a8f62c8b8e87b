import {
  maskEmail,
  maskPhone,
  routeInput,
  verificationError,
  type JsonObject,
  type RecordStore,
  type RouteSpec,
  type Services,
  type UserRecord,
  answerSuccess,
  textFields,
} from '@gatehouse-auth/core';
import { CIDAAS_API } from './api.js';
import type { RouteGroupInput } from './http.js';

export type AccountMedium = 'email' | 'sms';

/** How long a code is good for, and how many wrong ones end it. */
const TTL_SECONDS = 600;
const MAX_ATTEMPTS = 5;

/** The delivery channels that send the codes (plugin options). */
export interface AccountChannels {
  email_channel?: string | undefined;
  sms_channel?: string | undefined;
}

/**
 * Account verification (cidaas's account-verification calls): proving that the email address
 * or phone number on the user record reaches the user, with a code sent through a delivery
 * channel. The core keeps the address that was proven (`services.accounts.markVerified`), so
 * changing the address makes it unverified again; ID tokens and FDS rules read it there.
 */
export class AccountVerification {
  constructor(
    private readonly deps: {
      services: Services;
      channels: AccountChannels;
      /** Pending codes, by the hash of their exchange id. */
      records: RecordStore;
    },
  ) {}

  async start(user: UserRecord, medium: AccountMedium): Promise<JsonObject> {
    const { services, channels } = this.deps;
    const address = medium === 'email' ? user.email : user.phone;
    if (!address)
      throw verificationError(
        'INVALID_FIELD',
        `the user has no ${medium === 'email' ? 'email address' : 'phone number'}`,
      );
    const channel = medium === 'email' ? channels.email_channel : channels.sms_channel;
    if (!channel) throw verificationError('METHOD_NOT_ENABLED', `no delivery channel sends ${medium} (compat-cidaas)`);
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
    await services.accounts.markVerified(data.user_id, data.medium, data.address);
    await services.events.record({ type: 'account.verified', userId: data.user_id, data: { medium: data.medium } });
    return { verified: true, medium: data.medium, sub: data.user_id };
  }

  private pendingKey(handle: string): string {
    return `pending:${this.deps.services.crypto.sha256(handle)}`;
  }
}

/** `/verification-actions-srv/account/initiation` (the setup API's callers) and `/verification-actions-srv/account`. */
export function accountRoutes({ api, router }: RouteGroupInput, channels: AccountChannels): RouteSpec[] {
  const { services, web } = api;
  const accounts = new AccountVerification({ services, channels, records: api.records });
  const json = services.http.json();
  const form = services.http.form();

  router.post(CIDAAS_API.accountInitiation.path, json, form, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const { user } = await web.setup.access(req, res, body.sub);
    const input = routeInput(CIDAAS_API.accountInitiation, req).body;
    const medium = input.verification_medium ?? input.medium;
    if (medium !== 'email' && medium !== 'sms')
      throw verificationError('INVALID_FIELD', 'verification_medium must be email or sms', {
        fields: ['verification_medium'],
      });
    answerSuccess(res, await accounts.start(user, medium));
  });
  router.post(CIDAAS_API.accountConfirm.path, json, form, async (req, res) => {
    const fields = textFields(routeInput(CIDAAS_API.accountConfirm, req).body);
    if (!fields.exchange_id) throw verificationError('EXCHANGE_INVALID', 'exchange_id is required');
    answerSuccess(res, await accounts.confirm(fields.exchange_id, fields.code ?? fields.pass_code ?? ''));
  });
  return [CIDAAS_API.accountInitiation, CIDAAS_API.accountConfirm];
}
