import type { Logger } from 'pino';
import type { GatehouseConfig } from '../config/schema.js';
import { BootError } from '../errors.js';
import type { Metrics } from '../observability/metrics.js';
import type { Registry } from '../plugins/registry.js';
import type {
  DeliveryChannel,
  EventLog,
  History,
  MessageKind,
  RequestFacts,
  UserRecord,
} from '../plugins/extensions.js';
import type { Clock } from '../services.js';
import { WindowLimiter } from '../http/rate-limit.js';
import { SharedLimit, type SharedCounters } from '../limits/shared-counters.js';
import { withTimeout } from '../util/timeout.js';
import { pickLocale } from '../i18n/negotiate.js';
import { PHANTOM_USER_ID } from './context.js';

/** What users are told about (SECURITY-CHECKLIST §7 TOTP 1, §8.6; ASVS 6.3.5). */
export type SecurityNotice = 'code_reuse' | 'sign_in_blocked' | 'sign_in_challenged' | 'password_changed';

/** A way to sign in the user has, as a notice names it (never a secret). */
export interface ListedCredential {
  method: string;
  label: string | null;
  createdAt: Date;
}

export interface NoticeFacts {
  method: string;
  request: RequestFacts;
  clientId: string;
  /** password_changed: the ways to sign in set up since the last sign-in began, and when that was. */
  setUpSince?: { since: Date | null; credentials: ListedCredential[] };
}

/** The languages the notices speak: the sign-in's `ui_locales`, then the browser's, pick one. */
const NOTICE_LOCALES = ['en', 'de'];

const SUBJECT: Record<string, Record<SecurityNotice, string>> = {
  en: {
    code_reuse: 'Sign-in alert: a one-time code was used again',
    sign_in_blocked: 'Sign-in alert: a sign-in to your account was blocked',
    sign_in_challenged: 'Sign-in alert: a sign-in needed an extra check',
    password_changed: 'Security alert: your password was changed',
  },
  de: {
    code_reuse: 'Anmeldewarnung: ein Einmalcode wurde erneut verwendet',
    sign_in_blocked: 'Anmeldewarnung: eine Anmeldung bei Ihrem Konto wurde blockiert',
    sign_in_challenged: 'Anmeldewarnung: eine Anmeldung brauchte eine zusätzliche Prüfung',
    password_changed: 'Sicherheitswarnung: Ihr Passwort wurde geändert',
  },
};

const minute = (at: Date) => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** What was set up since the last sign-in: what an attacker who had the password may have left behind. */
function setUpSince(facts: NoticeFacts, de: boolean): string {
  const listed = facts.setUpSince;
  if (!listed) return '';
  const since = listed.since
    ? de
      ? `seit Beginn Ihrer letzten Anmeldung (${minute(listed.since)})`
      : `since your last sign-in began (${minute(listed.since)})`
    : de
      ? 'bisher'
      : 'so far';
  if (!listed.credentials.length) {
    return de
      ? ` ${since[0]!.toUpperCase()}${since.slice(1)} wurde kein anderer Anmeldeweg eingerichtet.`
      : ` No other way to sign in was set up ${since}.`;
  }
  const lines = listed.credentials.map((c) => {
    const label = c.label ? ` "${c.label.slice(0, 60)}"` : '';
    return de
      ? `- ${c.method}${label}, eingerichtet ${minute(c.createdAt)}`
      : `- ${c.method}${label}, set up ${minute(c.createdAt)}`;
  });
  return de
    ? ` Anmeldewege, die ${since} eingerichtet wurden:\n${lines.join('\n')}\nWenn Sie einen davon nicht eingerichtet haben, entfernen Sie ihn jetzt: Er funktioniert auch mit dem neuen Passwort.`
    : ` Ways to sign in set up ${since}:\n${lines.join('\n')}\nIf you did not set one of them up, remove it now: it still works with the new password.`;
}

function text(notice: SecurityNotice, facts: NoticeFacts, at: Date, locale: string): string {
  const when = minute(at);
  if (locale === 'de') {
    const where = facts.request.ip ? ` von ${facts.request.ip}` : '';
    const tail = 'Wenn Sie das nicht waren, ändern Sie Ihr Passwort und informieren Sie Ihre Administration.';
    switch (notice) {
      case 'code_reuse':
        return `Jemand hat am ${when}${where} versucht, sich mit einem bereits verwendeten ${facts.method}-Code bei Ihrem Konto anzumelden. ${tail}`;
      case 'sign_in_blocked':
        return `Eine Anmeldung bei Ihrem Konto (${facts.method}) am ${when}${where} wurde von unseren Sicherheitsprüfungen blockiert. Wenn Sie es waren, warten Sie eine Weile und versuchen Sie es erneut: Ein Gerät, mit dem Sie sich schon angemeldet haben, wird von Fehlversuchen anderswo nicht aufgehalten. ${tail}`;
      case 'sign_in_challenged':
        return `Eine Anmeldung bei Ihrem Konto am ${when}${where} kam von einem neuen Gerät oder Ort und brauchte einen zusätzlichen Prüfschritt. ${tail}`;
      case 'password_changed':
        return `Das Passwort Ihres Kontos wurde am ${when}${where} geändert, und jede Sitzung und App, die mit dem alten angemeldet war, wurde abgemeldet.${setUpSince(facts, true)} Wenn Sie es nicht geändert haben, informieren Sie Ihre Administration.`;
    }
  }
  const where = facts.request.ip ? ` from ${facts.request.ip}` : '';
  const tail = 'If this was not you, change your password and tell your administrator.';
  switch (notice) {
    case 'code_reuse':
      return `Someone tried to sign in to your account at ${when}${where} with a ${facts.method} code that had already been used. ${tail}`;
    case 'sign_in_blocked':
      return `A sign-in to your account (${facts.method}) at ${when}${where} was blocked by our security checks. If it was you, wait a while and try again: a device you signed in from before is not held back by failed attempts made elsewhere. ${tail}`;
    case 'sign_in_challenged':
      return `A sign-in to your account at ${when}${where} came from a new device or place and needed an extra verification step. ${tail}`;
    case 'password_changed':
      return `The password of your account was changed at ${when}${where}, and every session and app signed in with the old one was signed out.${setUpSince(facts, false)} If you did not change it, tell your administrator.`;
  }
}

type NotificationConfig = GatehouseConfig['notifications'];

/** A provider slower than this counts as failed (and cannot hold up shutdown). */
const SEND_TIMEOUT_MS = 10_000;

/**
 * Tells users about suspicious sign-in activity: a reused one-time code, a sign-in blocked or
 * challenged by the FDS rules. By email when the user has an address and `notifications.email_channel`
 * is set, else by SMS. Sending never delays or fails the request that triggered it; the outcome
 * of every notice is an event (`notification.sent` / `.failed` / `.skipped`), and a user gets
 * at most one notice of a kind per `min_interval_seconds`, so an attacker cannot flood them.
 */
export class SecurityNotifier {
  private readonly pending = new Set<Promise<void>>();
  /**
   * One notice of a kind per user and interval: this node's claim is taken synchronously (a
   * burst of concurrent triggers sends one notice), then the shared one (a burst across nodes).
   * The events table carries the interval past restarts and failed sends.
   */
  private readonly claims: { hit(key: string): Promise<number | null> };

  constructor(
    private readonly deps: {
      config: NotificationConfig;
      channels: Registry<DeliveryChannel>;
      events: EventLog;
      history: History;
      clock: Clock;
      logger: Logger;
      /** A provider slower than this counts as failed (default SEND_TIMEOUT_MS). */
      sendTimeoutMs?: number;
      /** Shared across nodes (the container's); without it the claim is this node's only. */
      counters?: SharedCounters;
      /** Counts each notice handed to a channel, as other deliveries are. */
      metrics?: Pick<Metrics, 'delivery'>;
    },
  ) {
    const intervalMs = deps.config.min_interval_seconds * 1000;
    this.claims = deps.counters
      ? new SharedLimit(deps.counters, 'notice', 1, intervalMs, deps.clock)
      : localClaims(new WindowLimiter(1, intervalMs, () => deps.clock.now().getTime()));
  }

  /** Checks the configured channels against the registered ones (after plugins registered). */
  check(): void {
    const { email_channel, sms_channel } = this.deps.config;
    const need = (id: string | undefined, kind: MessageKind, key: string) => {
      if (!id) return;
      const channel = this.deps.channels.get(id);
      if (!channel)
        throw new BootError('CONFIG_INVALID', `notifications.${key}: no delivery channel "${id}" is registered`);
      if (!channel.kinds.includes(kind)) {
        throw new BootError('CONFIG_INVALID', `notifications.${key}: channel "${id}" does not deliver ${kind}`);
      }
    };
    need(email_channel, 'email', 'email_channel');
    need(sms_channel, 'sms', 'sms_channel');
    if (!email_channel && !sms_channel) {
      this.deps.logger.info(
        'notifications: no channel configured; users are not told about reused codes or blocked sign-ins',
      );
    }
  }

  /** Starts a notice in the background; the returned promise settles when it was handled (tests, drain). */
  notify(user: UserRecord, notice: SecurityNotice, facts: NoticeFacts): Promise<void> {
    if (user.id === PHANTOM_USER_ID) return Promise.resolve();
    const { email_channel, sms_channel } = this.deps.config;
    if (!email_channel && !sms_channel) return Promise.resolve();
    // The local part of the claim runs before the first await: a burst here sends once.
    const claimed = this.claims.hit(`${user.id}:${notice}`);
    const work = claimed
      .then((wait) => (wait === null ? this.send(user, notice, facts) : undefined))
      .catch((err: unknown) => {
        this.deps.logger.error({ err, notice }, 'security notice could not be recorded');
      });
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
    return work;
  }

  /** Waits for the notices in flight (shutdown); each send gives up after SEND_TIMEOUT_MS. */
  async drain(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private async send(user: UserRecord, notice: SecurityNotice, facts: NoticeFacts): Promise<void> {
    const { email_channel, sms_channel, min_interval_seconds } = this.deps.config;
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
    const channel = this.deps.channels.get(route.channel);
    const locale = pickLocale(NOTICE_LOCALES, facts.request);
    try {
      if (!channel) throw new Error(`delivery channel ${route.channel} is not registered`);
      await withTimeout(
        channel.send({
          kind: route.kind,
          to: route.to,
          ...(route.kind === 'email' ? { subject: SUBJECT[locale]![notice] } : {}),
          text: text(notice, facts, now, locale),
          locale,
        }),
        this.deps.sendTimeoutMs ?? SEND_TIMEOUT_MS,
        `no answer from the provider within ${this.deps.sendTimeoutMs ?? SEND_TIMEOUT_MS} ms`,
      );
    } catch (err) {
      if (channel) this.deps.metrics?.delivery(channel.id, route.kind, 'failed');
      this.deps.logger.warn({ err, notice, channel: route.channel }, 'security notice not delivered');
      return event('notification.failed', err instanceof Error ? err.message.slice(0, 200) : 'send failed', {
        channel: route.channel,
      });
    }
    this.deps.metrics?.delivery(route.channel, route.kind, 'sent');
    await event('notification.sent', null, { channel: route.channel, kind: route.kind });
  }
}

/** A node-local claim with the shared claim's shape. */
function localClaims(limiter: WindowLimiter): { hit(key: string): Promise<number | null> } {
  return { hit: async (key) => limiter.hit(key) };
}
