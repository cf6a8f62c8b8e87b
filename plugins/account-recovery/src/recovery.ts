import type { IncomingMessage } from 'node:http';
import {
  ApiError,
  isProtocolError,
  type NamedLimit,
  type PluginApi,
  type UserAccounts,
  type UserRecord,
  type MethodSetup,
} from '@gatehouse-auth/core';
import type { RecoveryOptions } from './options.js';

/** The method whose secret a reset replaces. */
export const PASSWORD_METHOD = 'PASSWORD';

/** Where a code goes. */
export type Medium = 'email' | 'sms';

/** What a started reset keeps (`ticket:<sha256 of the ticket>`), for a known user or none. */
interface TicketData {
  [key: string]: string | null;
  user_id: string | null;
  code_mac: string;
  /** Where the browser goes back to afterwards (a login to sign in again), if anywhere. */
  return_to: string | null;
}

/** A proven code (`exchange:<sha256 of the exchange id>`): what is left before the new password. */
interface ExchangeData {
  [key: string]: string | null;
  user_id: string;
  /** `none`: no second factor; `needed`: one must be proven; `proven`: it was, in this reset. */
  second_factor: 'none' | 'needed' | 'proven';
  /** sha256 of the ticket it came from: the cidaas calls name both. */
  ticket_hash: string;
  return_to: string | null;
}

export interface Exchange {
  id: string;
  userId: string;
  secondFactor: 'none' | 'needed' | 'proven';
  returnTo: string | null;
}

/** Why a reset step is refused: a status and a code the tests and the pages name. */
export function recoveryError(status: number, code: string, message: string): ApiError {
  return new ApiError(status, code, message);
}

const CODE_INVALID = () => recoveryError(400, 'CODE_INVALID', 'the code is wrong');
const RECOVERY_EXPIRED = () =>
  recoveryError(410, 'RECOVERY_EXPIRED', 'this reset has expired or was used; start again');

/**
 * The password reset (OWASP Forgot Password, NIST SP 800-63B §6.1.2.3), as the hosted pages and
 * the cidaas calls run it: one answer for every identifier, a 6-digit code that is kept as an
 * HMAC only, expires in minutes, allows a few wrong guesses and is spent once (the database's
 * `consume`); a user with a second factor proves it too before a new password is accepted.
 */
/** What `@gatehouse-auth/notices-security` provides as `securityNotices` (its README). */
interface SecurityNotices {
  tells(type: string, user: UserRecord): boolean;
}

export class PasswordRecovery {
  private readonly attempts: NamedLimit;
  private readonly identifierStarts: NamedLimit;
  private readonly addressStarts: NamedLimit;

  constructor(
    private readonly api: PluginApi,
    private readonly options: RecoveryOptions,
  ) {
    // One window per code: its lifetime.
    this.attempts = api.web.limit('code-attempts', options.max_attempts, options.code_ttl_minutes * 60);
    // Codes sent for one identifier (mail bombing): further starts answer the same, and send nothing.
    this.identifierStarts = api.web.limit('identifier', options.max_codes_per_identifier, 3600);
    // Resets started from one address (a sweep over many identifiers): 429.
    this.addressStarts = api.web.limit('starts', options.max_starts_per_address, 900);
  }

  private get services() {
    return this.api.services;
  }

  private accounts(): UserAccounts {
    return this.services.resolve<UserAccounts>('userAccounts');
  }

  private hash(value: string): string {
    return this.services.crypto.sha256(value);
  }

  /**
   * Starts a reset for whatever `identifier` names: the same answer (a ticket) whether or not it
   * names an active user. A code goes out only for one, by `medium` (or email, else SMS), in the
   * locale of `t`.
   */
  async initiate(
    identifier: string,
    opts: { medium?: Medium | null; returnTo?: string | null; messages: MessagesFor; req: IncomingMessage },
  ): Promise<string> {
    const { services } = this;
    const wait = await this.addressStarts.hit(this.api.web.clientIp(opts.req));
    if (wait !== null) {
      throw new ApiError(429, 'TOO_MANY_REQUESTS', 'too many resets from this address; try again later', {
        retry_after: wait,
      });
    }
    const ticket = services.crypto.randomToken(24);
    const code = services.crypto.randomDigits(6);
    const normalized = identifier.trim().slice(0, 320);
    const found = normalized ? await services.users.findByIdentifier(normalized) : null;
    const user = found?.status === 'active' ? found : null;
    const data: TicketData = {
      user_id: user?.id ?? null,
      code_mac: services.secrets.mac(`recovery:${ticket}:${code}`),
      return_to: opts.returnTo ?? null,
    };
    const ttl = this.options.code_ttl_minutes * 60;
    await this.api.records.put(`ticket:${this.hash(ticket)}`, data, { ttlSeconds: ttl });
    const throttled = (await this.identifierStarts.hit(this.hash(normalized.toLowerCase()))) !== null;
    if (user && !throttled) await this.sendCode(user, code, opts.medium ?? null, opts.messages);
    await services.events.record({
      type: 'recovery.started',
      userId: user?.id ?? null,
      data: { sent: Boolean(user && !throttled) },
    });
    return ticket;
  }

  private async sendCode(user: UserRecord, code: string, medium: Medium | null, messages: MessagesFor): Promise<void> {
    const target = this.target(user, medium);
    if (!target) return;
    const t = await messages(user);
    const minutes = this.options.code_ttl_minutes;
    const expiresAt = new Date(this.services.clock.now().getTime() + minutes * 60_000);
    await this.services.channels.enqueue(
      target.channel,
      {
        kind: target.medium,
        to: target.address,
        ...(target.medium === 'email' ? { subject: t.t('recovery.mail.code_subject') } : {}),
        text: t.t(target.medium === 'email' ? 'recovery.mail.code_text' : 'recovery.sms.code_text', { code, minutes }),
      },
      { expiresAt, secrets: [code], about: { userId: user.id, method: PASSWORD_METHOD } },
    );
  }

  /** The channel and address a code goes to: the medium asked for, else email, else SMS. */
  private target(user: UserRecord, medium: Medium | null) {
    const email =
      user.email && this.options.email_channel
        ? { medium: 'email' as const, channel: this.options.email_channel, address: user.email }
        : null;
    const sms =
      user.phone && this.options.sms_channel
        ? { medium: 'sms' as const, channel: this.options.sms_channel, address: user.phone }
        : null;
    if (medium === 'email') return email;
    if (medium === 'sms') return sms;
    return email ?? sms;
  }

  /**
   * The code of a ticket: right once, it is spent (one of racing callers wins) and an exchange
   * takes its place. Wrong codes count; past `max_attempts` the ticket is gone (TOO_MANY_ATTEMPTS).
   * A ticket with no user never has a right code, so it fails like a wrong one.
   */
  async validate(ticket: unknown, code: unknown, req: IncomingMessage): Promise<Exchange> {
    if (typeof ticket !== 'string' || !ticket || ticket.length > 100) throw RECOVERY_EXPIRED();
    const key = `ticket:${this.hash(ticket)}`;
    const stored = await this.api.records.get(key);
    if (!stored) throw RECOVERY_EXPIRED();
    if ((await this.attempts.hit(this.hash(ticket))) !== null) {
      await this.api.records.delete(key);
      throw recoveryError(429, 'TOO_MANY_ATTEMPTS', 'too many wrong codes; start the reset again');
    }
    const data = stored.data as TicketData;
    const given = typeof code === 'string' ? code.trim() : '';
    const right =
      /^\d{6}$/.test(given) &&
      this.services.crypto.safeEqual(this.services.secrets.mac(`recovery:${ticket}:${given}`), data.code_mac);
    if (!right || !data.user_id) {
      await this.services.events.record({ type: 'recovery.code_failed', userId: data.user_id });
      throw CODE_INVALID();
    }
    // Single use, by the database: of two requests with the right code, one goes on.
    if (!(await this.api.records.consume(key))) throw RECOVERY_EXPIRED();
    const user = await this.services.users.findById(data.user_id);
    if (!user || user.status !== 'active') throw RECOVERY_EXPIRED();
    const factors = await this.secondFactors(user, req);
    if (factors.has && factors.provable.length === 0) {
      await this.services.events.record({ type: 'recovery.refused', userId: user.id, data: { reason: 'no_factor' } });
      throw recoveryError(
        409,
        'SECOND_FACTOR_UNAVAILABLE',
        'this account has a second factor that cannot be proven here; an administrator must reset it',
      );
    }
    const exchange: Exchange = {
      id: this.services.crypto.randomToken(24),
      userId: user.id,
      secondFactor: factors.has ? 'needed' : 'none',
      returnTo: data.return_to,
    };
    await this.saveExchange(exchange, this.hash(ticket));
    await this.services.events.record({ type: 'recovery.code_proven', userId: user.id });
    return exchange;
  }

  private async saveExchange(exchange: Exchange, ticketHash: string): Promise<void> {
    const data: ExchangeData = {
      user_id: exchange.userId,
      second_factor: exchange.secondFactor,
      ticket_hash: ticketHash,
      return_to: exchange.returnTo,
    };
    await this.api.records.put(`exchange:${this.hash(exchange.id)}`, data, {
      ttlSeconds: this.options.code_ttl_minutes * 60,
    });
  }

  /** A live exchange, or RECOVERY_EXPIRED; with `ticket`, only the exchange of that ticket. */
  async exchange(id: unknown, ticket?: unknown): Promise<Exchange> {
    if (typeof id !== 'string' || !id || id.length > 100) throw RECOVERY_EXPIRED();
    const stored = await this.api.records.get(`exchange:${this.hash(id)}`);
    if (!stored) throw RECOVERY_EXPIRED();
    const data = stored.data as ExchangeData;
    if (ticket !== undefined) {
      const given = typeof ticket === 'string' ? this.hash(ticket) : '';
      if (!this.services.crypto.safeEqual(given, data.ticket_hash)) throw RECOVERY_EXPIRED();
    }
    return { id, userId: data.user_id, secondFactor: data.second_factor, returnTo: data.return_to };
  }

  /** The second factor was proven in a login pinned to the exchange's user. */
  async secondFactorProven(exchange: Exchange): Promise<void> {
    const stored = await this.api.records.get(`exchange:${this.hash(exchange.id)}`);
    if (!stored) throw RECOVERY_EXPIRED();
    await this.api.records.put(
      `exchange:${this.hash(exchange.id)}`,
      { ...(stored.data as ExchangeData), second_factor: 'proven' },
      { ttlSeconds: this.options.code_ttl_minutes * 60 },
    );
  }

  /**
   * Whether the user has a second factor (any method set up besides the password and
   * `not_second_factors`), and which of `second_factors` they can prove it with.
   */
  async secondFactors(user: UserRecord, req: IncomingMessage): Promise<{ has: boolean; provable: string[] }> {
    const methods = (await this.accounts().methods(user, req)) as unknown as { method: string; enrolled: boolean }[];
    const enrolled = methods.filter((m) => m.enrolled).map((m) => m.method);
    const ignored = new Set([PASSWORD_METHOD, ...this.options.not_second_factors]);
    return {
      has: enrolled.some((id) => !ignored.has(id)),
      provable: enrolled.filter((id) => this.options.second_factors.includes(id)),
    };
  }

  /**
   * The new password, once: as the PASSWORD method's setup takes it (its policy; PASSWORD_TOO_SHORT,
   * PASSWORD_TOO_COMMON…), refused while a second factor is still to be proven. Then every
   * session of the user ends (the setup also revokes their tokens), the user is told, an event
   * kept. Nobody is signed in by it.
   */
  async accept(
    exchangeId: unknown,
    input: { password: unknown; confirm: unknown; ticket?: unknown; req: IncomingMessage; messages: MessagesFor },
  ): Promise<UserRecord> {
    const exchange = await this.exchange(exchangeId, input.ticket);
    if (exchange.secondFactor === 'needed') {
      throw recoveryError(403, 'SECOND_FACTOR_REQUIRED', 'prove the second factor of the account first');
    }
    if (typeof input.password !== 'string' || !input.password) {
      throw recoveryError(400, 'FIELD_MISSING', 'the new password is required');
    }
    if (input.confirm !== input.password) {
      throw recoveryError(400, 'PASSWORD_MISMATCH', 'the two passwords differ');
    }
    const key = `exchange:${this.hash(exchange.id)}`;
    // Spent before the password is set: a second request with the same exchange finds nothing.
    const taken = await this.api.records.consume(key);
    if (!taken) throw RECOVERY_EXPIRED();
    const user = await this.services.users.findById(exchange.userId);
    if (!user || user.status !== 'active') throw RECOVERY_EXPIRED();
    try {
      await this.services
        .resolve<MethodSetup>('methodSetup')
        .step('initiation', PASSWORD_METHOD, user, { password: input.password }, input.req);
    } catch (err) {
      // A password the policy refuses: the exchange is good for another try, until it expires.
      const left = Math.ceil(((taken.expiresAt?.getTime() ?? 0) - this.services.clock.now().getTime()) / 1000);
      if (left > 0) await this.api.records.add(key, taken.data, { ttlSeconds: left });
      if (isProtocolError(err)) throw recoveryError(err.status, err.code, err.message);
      throw err;
    }
    const accounts = this.accounts();
    const actor = { via: 'recovery', userId: user.id, ip: this.api.web.clientIp(input.req) };
    const live = (await accounts.sessions(user.id)).map((s) => s.sid);
    await accounts.endSessions(actor, user, live);
    await this.services.events.record({
      type: 'recovery.password_reset',
      userId: user.id,
      ip: actor.ip,
      data: { second_factor: exchange.secondFactor },
    });
    await this.sendNotice(user, input.messages);
    return user;
  }

  /**
   * "Your password was reset" to the user's email address (else phone), whoever asked; unless
   * the security notices (`securityNotices`, @gatehouse-auth/notices-security) tell them of the
   * new password already: the setup's `password_changed` event, with what was set up meanwhile.
   */
  private sendNotice(user: UserRecord, messages: MessagesFor): Promise<void> {
    if (this.securityNotices()?.tells('password_changed', user)) return Promise.resolve();
    return this.notify(user, 'notice', {}, messages);
  }

  private securityNotices(): SecurityNotices | null {
    try {
      return this.services.resolve<SecurityNotices>('securityNotices');
    } catch {
      return null; // the plugin is not loaded
    }
  }

  /**
   * A notice to the user's email address (else phone): `recovery.mail.<name>_subject`,
   * `recovery.mail.<name>_text` or `recovery.sms.<name>_text`, with `{when}` and `vars`. A
   * channel that refuses it is logged: what it tells of is done already.
   */
  async notify(user: UserRecord, name: string, vars: Record<string, string>, messages: MessagesFor): Promise<void> {
    const target = this.target(user, null);
    if (!target) return;
    const t = await messages(user);
    const at = this.services.clock.now();
    const values = { ...vars, when: at.toISOString().replace('T', ' ').slice(0, 16) + ' UTC' };
    try {
      await this.services.channels.enqueue(
        target.channel,
        {
          kind: target.medium,
          to: target.address,
          ...(target.medium === 'email' ? { subject: t.t(`recovery.mail.${name}_subject`, values) } : {}),
          text: t.t(`recovery.${target.medium === 'email' ? 'mail' : 'sms'}.${name}_text`, values),
        },
        { expiresAt: new Date(at.getTime() + 86_400_000), about: { userId: user.id, method: PASSWORD_METHOD } },
      );
    } catch (err) {
      this.api.logger.warn({ err, userId: user.id }, 'recovery: a notice could not be queued');
    }
  }
}

/** The messages to write to a user in: their locale when known, else the request's. */
export type MessagesFor = (
  user: UserRecord,
) => Promise<{ t(key: string, vars?: Record<string, string | number>): string }>;
