import {
  pickLocale,
  type Clock,
  type EventLog,
  type History,
  type NamedLimit,
  type PluginApi,
  type Services,
  type UserRecord,
} from '@gatehouse-auth/core';
import type { NoticeOptions } from './options.js';
import { NOTICE_LOCALES, SUBJECT, text, type NoticeFacts, type SecurityNotice } from './texts.js';

/** A provider slower than this counts as failed (and cannot hold up shutdown). */
const SEND_TIMEOUT_MS = 10_000;

/**
 * Tells users about security events: a reused one-time code, a sign-in blocked or challenged by
 * the FDS rules, a new password. By email when the user has an address and `email_channel` is
 * set, else by SMS. Sending never delays or fails the request that triggered it; the outcome of
 * every notice is an event (`notification.sent` / `.failed` / `.skipped`), and a user gets at
 * most one notice of a kind per `min_interval_seconds`, so an attacker cannot flood them.
 */
export class SecurityNotifier {
  constructor(
    private readonly deps: {
      options: NoticeOptions;
      /** `deliver` counts and traces each send, as the core's deliveries are. */
      channels: Pick<Services['channels'], 'deliver'>;
      events: EventLog;
      history: History;
      clock: Clock;
      logger: PluginApi['logger'];
      /**
       * One notice of a kind per user and interval (`web.limit`, counted on every node): its
       * node-local part is taken synchronously, so a burst of concurrent triggers sends one
       * notice. The events table carries the interval past restarts and failed sends.
       */
      claims: NamedLimit;
      /** A provider slower than this counts as failed (default SEND_TIMEOUT_MS). */
      sendTimeoutMs?: number;
    },
  ) {}

  /** A notice of `notice` to `user`; settles when it was handled, and never rejects. */
  async notify(user: UserRecord, notice: SecurityNotice, facts: NoticeFacts): Promise<void> {
    try {
      if ((await this.deps.claims.hit(`${user.id}:${notice}`)) === null) await this.send(user, notice, facts);
    } catch (err) {
      this.deps.logger.error({ err, notice }, 'security notice could not be recorded');
    }
  }

  private async send(user: UserRecord, notice: SecurityNotice, facts: NoticeFacts): Promise<void> {
    const { email_channel, sms_channel, min_interval_seconds } = this.deps.options;
    const now = this.deps.clock.now();
    const event = (type: string, reason: string | null, data: Record<string, string> = {}) =>
      this.deps.events.record({
        type,
        key: `notice:${notice}`,
        userId: user.id,
        method: facts.method,
        clientId: facts.clientId,
        ip: facts.request.ip,
        outcome: notice,
        reason,
        data,
      });
    // Failed sends count too: a provider that is down is not retried on every trigger.
    const recent = await this.deps.history.count({
      types: ['notification.sent', 'notification.failed'],
      key: `notice:${notice}`,
      userId: user.id,
      since: new Date(now.getTime() - min_interval_seconds * 1000),
      limit: 1,
    });
    if (recent > 0) return;
    const route =
      email_channel && user.email
        ? { channel: email_channel, kind: 'email' as const, to: user.email }
        : sms_channel && user.phone
          ? { channel: sms_channel, kind: 'sms' as const, to: user.phone }
          : null;
    if (!route) return event('notification.skipped', 'no_destination');
    const locale = pickLocale(NOTICE_LOCALES, facts.request);
    const timeoutMs = this.deps.sendTimeoutMs ?? SEND_TIMEOUT_MS;
    try {
      await withTimeout(
        this.deps.channels.deliver(route.channel, {
          kind: route.kind,
          to: route.to,
          ...(route.kind === 'email' ? { subject: SUBJECT[locale]![notice] } : {}),
          text: text(notice, facts, facts.at ?? now, locale),
          locale,
        }),
        timeoutMs,
        `no answer from the provider within ${timeoutMs} ms`,
      );
    } catch (err) {
      this.deps.logger.warn({ err, notice, channel: route.channel }, 'security notice not delivered');
      return event('notification.failed', err instanceof Error ? err.message.slice(0, 200) : 'send failed', {
        channel: route.channel,
      });
    }
    await event('notification.sent', null, { channel: route.channel, kind: route.kind });
  }
}

/** `work`, or a rejection with `message` once `ms` passed (the timer does not hold the process). */
function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    timer.unref();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
