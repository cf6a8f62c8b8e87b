/**
 * One-time codes sent through a delivery channel (text message, email, voice call): the shared
 * machinery behind every code method. A method plugin supplies only what differs — how to find,
 * normalise and mask the destination, and the wording of the message.
 */
import type {
  AuthMethod,
  Credential,
  EnrollmentContext,
  EnrollmentOutcome,
  InitiateContext,
  InitiateOutcome,
  MessageKind,
  MethodContext,
  MethodRefusal,
  VerifyContext,
  VerifyOutcome,
} from './extensions.js';
import type { PluginApi } from './api.js';
import type { Services } from './services.js';
import type { JsonObject, UserRecord } from './values.js';
import { z } from 'zod';
import { scrubbed } from './scrub.js';
import { pickLocale } from './negotiate.js';

/** Credential type under which enrolled destinations (extra phones, addresses) are stored. */
const MEDIUM = 'medium';

/** Options every code method accepts in its plugin config. */
/** A configured message text: it must carry the code. */
const codeTemplate = z.string().refine((m) => m.includes('{code}'), { message: 'must contain {code}' });

export const codeMethodOptions = z.strictObject({
  /** Id of the delivery channel that carries the code. */
  channel: z.string().min(1),
  code_length: z.number().int().min(6).max(10).default(6),
  /** Seconds a code stays valid; never beyond the exchange, and at most 10 minutes. */
  code_ttl: z.number().int().min(30).max(600).default(300),
  /** Codes one destination (and one user) may be sent within `send_window_seconds`. */
  max_sends: z.number().int().min(1).default(5),
  send_window_seconds: z.number().int().min(1).default(900),
  /**
   * Whether the address on the user record may receive codes as it is (`any`), or only once the
   * user proved it (`verified`: account verification, docs/verification.md). Addresses set up
   * through the method's own enrollment are proven by it either way.
   */
  primary_address: z.enum(['any', 'verified']).default('any'),
  /** Replaces the method's default text; `{code}` and `{minutes}` are filled in. */
  message: codeTemplate.optional(),
  /**
   * Replaces it per language (`{ de: 'Ihr Code: {code}' }`), chosen like the default text's
   * language: the sign-in request's `ui_locales`, then the browser's. Falls back to `message`.
   */
  messages: z
    .record(z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{1,8})*$/, 'must be a language tag'), codeTemplate)
    .optional(),
});

export type CodeMethodOptions = z.infer<typeof codeMethodOptions>;

/** What a concrete code method supplies to `createCodeMethod`. */
export interface CodeMethodSpec {
  /** Method id, upper case, e.g. the path segment. */
  id: string;
  kind: Extract<MessageKind, 'sms' | 'email' | 'voice'>;
  amr: string[];
  /** The user's primary destination from the user record, if any. */
  addressOf(user: UserRecord): string | null;
  /** Canonical form of a destination, or null when it is not a valid one. */
  normalizeAddress(raw: string): string | null;
  /** What the user may be shown of a destination. */
  mask(address: string): string;
  /** The default message carrying `code`, valid for `minutes`, in `locale` (one of `locales`). */
  render(code: string, minutes: number, locale: string): { subject?: string; text: string };
  /** The message carrying a sign-in link instead (`processingType: LINK`); without it, no links. */
  renderLink?(url: string, minutes: number, locale: string): { subject?: string; text: string };
  /** Since plugin API 1.3: the languages `render` speaks, the first the fallback; default `['en']`. */
  locales?: string[];
  /** How `{code}` appears in a configured `message` template (e.g. spelled out for voice); default as is. */
  formatCode?(code: string): string;
  /** On the hosted page: the method's name, the code input's label, and the button that sends. */
  page: { label: string; codeLabel: string; send: string; sendAgain: string };
}

/** `+15551230000` → `+1******0000`: the country code's first digit and the last four stay visible. */
export function maskPhone(phone: string): string {
  const head = phone.startsWith('+') ? phone.slice(0, 2) : phone.slice(0, 1);
  const tail = phone.slice(-4);
  const hidden = Math.max(phone.length - head.length - tail.length, 3);
  return head + '*'.repeat(hidden) + tail;
}

/** `alice@example.com` → `a***@example.com`; the length of the local part is not revealed. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

/** E.164 form of a phone number (`+` and 7–15 digits), ignoring spaces, dashes and parentheses; else null. */
export function normalizePhone(raw: string): string | null {
  const compact = raw.replace(/[\s\-()]/g, '');
  return /^\+[1-9]\d{6,14}$/.test(compact) ? compact : null;
}

/** Trimmed, lower-cased email address with one `@` and a dotted domain; else null. */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  if (email.length > 254 || /\s/.test(email)) return null;
  const parts = email.split('@');
  if (parts.length !== 2) return null;
  const [local, domain] = parts as [string, string];
  if (!local || !/^[^.]+(\.[^.]+)+$/.test(domain)) return null;
  return email;
}

interface IssuedCode {
  code_mac: string;
  salt: string;
  code_expires_at: number;
  /** The secret went out in a link (a long token), not as a code. */
  link?: boolean;
}

type Failure = MethodRefusal;

const fail = (code: string, status: number, message: string): Failure => ({ ok: false, code, status, message });

/**
 * Adds a one-time-code method, with a start-up check that `options.channel` names a registered
 * channel that carries its kind of message (otherwise the first sign-in would find out).
 *
 * @example
 * register(api, options) {
 *   addCodeMethod(api, { id: 'SMS', kind: 'sms', amr: ['sms'], addressOf, normalizeAddress, mask, render }, options);
 * }
 */
export function addCodeMethod(api: PluginApi, spec: CodeMethodSpec, options: CodeMethodOptions): void {
  api.methods.add(createCodeMethod(spec, api.services, options));
  api.check(() => {
    const channel = api.services.channels.get(options.channel);
    const known = () => api.services.channels.ids().join(', ') || 'none';
    if (!channel)
      throw new Error(`options.channel: no delivery channel "${options.channel}" is registered (known: ${known()})`);
    if (!channel.kinds.includes(spec.kind)) {
      throw new Error(`options.channel: delivery channel "${options.channel}" does not send ${spec.kind} messages`);
    }
  });
}

/**
 * Builds a one-time-code method: `initiate` sends a fresh code to the user's destination,
 * `verify` checks `pass_code` against the code kept (as a MAC) in the exchange's state, and
 * `enrollment` binds an extra destination after the user proves they receive codes there.
 *
 * @example
 * // in a plugin whose `options` schema is `codeMethodOptions`:
 * api.methods.add(createCodeMethod({ id, kind, amr, addressOf, normalizeAddress, mask, render }, api.services, options));
 */
export function createCodeMethod(spec: CodeMethodSpec, services: Services, options: CodeMethodOptions): AuthMethod {
  const destinationKey = (address: string) => services.crypto.sha256(address);

  const macOf = (salt: string, code: string) => services.secrets.mac(`${salt}:${code}`);

  const isWellFormed = (code: unknown, link: boolean): code is string =>
    typeof code === 'string' &&
    (link ? /^[\w-]{43}$/.test(code) : code.length === options.code_length && /^\d+$/.test(code));

  /** The user's primary destination, normalised; null when absent, invalid or (if so configured) unproven. */
  const primaryAddress = async (user: UserRecord): Promise<string | null> => {
    const raw = spec.addressOf(user);
    const address = raw ? spec.normalizeAddress(raw) : null;
    if (!address || options.primary_address === 'any') return address;
    return (await services.accounts.verified(user, spec.kind === 'email' ? 'email' : 'sms')) ? address : null;
  };

  const addressOfMedium = (credential: Credential | null): string | null => {
    if (!credential || credential.type !== MEDIUM) return null;
    const address = credential.data['address'];
    return typeof address === 'string' ? address : null;
  };

  /**
   * Seconds until this destination and this user may be sent a code again (0: now): at most
   * `max_sends` within the window each (pumping, bombing). The wait ends when the oldest send
   * that counts leaves the window.
   */
  const sendWait = async (address: string, userId: string): Promise<number> => {
    const now = services.clock.now().getTime();
    const window = options.send_window_seconds * 1000;
    // A send counts for `window` ms after it: from `at` to just before `at + window`.
    const query = { types: ['delivery.sent'], since: new Date(now - window + 1), limit: options.max_sends };
    const waitFor = (sends: { at: Date }[]): number => {
      const oldest = sends[options.max_sends - 1];
      return oldest ? Math.max(1, Math.ceil((oldest.at.getTime() + window - now) / 1000)) : 0;
    };
    const [toDestination, toUser] = await Promise.all([
      services.history.recent({ ...query, key: destinationKey(address) }),
      services.history.recent({ ...query, userId }),
    ]);
    return Math.max(waitFor(toDestination), waitFor(toUser));
  };

  /**
   * Generates, sends and records a code; returns what to keep for checking it, or a failure.
   * `queued`: the message goes to the background queue (retried, outcome recorded) and the
   * caller answers without waiting for the provider: a login initiation must take as long for
   * a real user as for an unknown one. Otherwise the send is awaited (enrollment, where the user
   * binding a new destination wants to hear that it failed).
   */
  const sendCode = async (
    ctx: MethodContext,
    address: string,
    expiresAt: number,
    queued: boolean,
    link?: (token: string) => string,
  ): Promise<IssuedCode | Failure> => {
    const wait = await sendWait(address, ctx.user.id);
    if (wait > 0) {
      return {
        ...fail('TOO_MANY_SENDS', 429, 'Too many codes were sent; try again after retry_after seconds'),
        retryAfter: wait,
      };
    }
    // A link carries a long random token (nobody types it); a code is short digits.
    const code = link ? services.crypto.randomToken(32) : services.crypto.randomDigits(options.code_length);
    const salt = services.crypto.randomToken(16);
    const minutes = Math.max(1, Math.round((expiresAt - services.clock.now().getTime()) / 60_000));
    const url = link?.(code);
    // The person's language: the sign-in request's ui_locales, then the browser's (the operator's texts count too).
    const locale = pickLocale([...(spec.locales ?? ['en']), ...Object.keys(options.messages ?? {})], ctx.request);
    const rendered =
      url && spec.renderLink ? spec.renderLink(url, minutes, locale) : spec.render(code, minutes, locale);
    const template = options.messages?.[locale] ?? options.message;
    const text =
      template && !url
        ? template
            .replaceAll('{code}', spec.formatCode ? spec.formatCode(code) : code)
            .replaceAll('{minutes}', String(minutes))
        : rendered.text;
    const message = {
      kind: spec.kind,
      to: address,
      ...(rendered.subject !== undefined ? { subject: rendered.subject } : {}),
      text,
      // An operator's single `message` is in no language the server knows.
      ...(template && !url && !options.messages?.[locale] ? {} : { locale }),
    };
    // The provider's error may echo the message; the code must never reach the logs.
    const secrets = spec.formatCode ? [code, spec.formatCode(code)] : [code];
    try {
      if (queued) {
        await services.channels.enqueue(options.channel, message, {
          expiresAt: new Date(expiresAt),
          secrets,
          about: { userId: ctx.user.id, method: spec.id, clientId: ctx.clientId, key: destinationKey(address) },
        });
      } else {
        await services.channels.deliver(options.channel, message);
      }
    } catch (err) {
      const reason = scrubbed(err, secrets).message;
      ctx.logger.warn({ method: spec.id, channel: options.channel, reason }, 'one-time code delivery failed');
      return fail('DELIVERY_FAILED', 502, 'The code could not be delivered');
    }
    await services.events.record({
      type: 'delivery.sent',
      key: destinationKey(address),
      userId: ctx.user.id,
      method: spec.id,
      clientId: ctx.clientId,
      ip: ctx.request.ip,
      data: { channel: options.channel, kind: spec.kind },
    });
    return { code_mac: macOf(salt, code), salt, code_expires_at: expiresAt, ...(url ? { link: true } : {}) };
  };

  /** 'ok' or why the presented code does not match the issued one. */
  const check = (
    issued: JsonObject | null,
    presented: unknown,
  ): 'ok' | 'malformed' | 'no_code' | 'expired' | 'mismatch' => {
    if (!isWellFormed(presented, issued?.['link'] === true)) return 'malformed';
    const mac = issued?.['code_mac'];
    const salt = issued?.['salt'];
    const expiresAt = issued?.['code_expires_at'];
    // Compared even with no code issued (the phantom's exchange): a wrong code takes the same work.
    const same = services.crypto.safeEqual(
      macOf(typeof salt === 'string' ? salt : '', presented),
      typeof mac === 'string' ? mac : '',
    );
    if (typeof mac !== 'string' || typeof salt !== 'string' || typeof expiresAt !== 'number') return 'no_code';
    if (services.clock.now().getTime() > expiresAt) return 'expired';
    return same ? 'ok' : 'mismatch';
  };

  const resolveDestination = async (ctx: InitiateContext): Promise<string | Failure> => {
    if (ctx.mediumId) {
      const address = addressOfMedium(await ctx.credentials.get(ctx.mediumId));
      return address ?? fail('MEDIUM_NOT_FOUND', 404, 'No such medium');
    }
    const primary = await primaryAddress(ctx.user);
    if (primary) return primary;
    for (const credential of await ctx.credentials.list(MEDIUM)) {
      const address = addressOfMedium(credential);
      if (address) return address;
    }
    return fail('NO_DESTINATION', 400, 'The user has nowhere to receive a code');
  };

  const enrollmentAddress = (body: Record<string, unknown>): string | null => {
    // `mobile_number` is what cidaas clients send for a phone.
    const raw = body['address'] ?? (spec.kind === 'email' ? body['email'] : (body['phone'] ?? body['mobile_number']));
    return typeof raw === 'string' ? spec.normalizeAddress(raw) : null;
  };

  return {
    id: spec.id,
    amr: spec.amr,
    verifyFields: ['pass_code'],
    errors: {
      TOO_MANY_SENDS: [
        429,
        'max_sends codes went to this destination or user within the window; retry after retry_after',
      ],
    },
    ...(spec.renderLink ? { links: true } : {}),
    page: {
      label: spec.page.label,
      sends: { button: spec.page.send, again: spec.page.sendAgain },
      inputs: [
        {
          field: 'pass_code',
          label: spec.page.codeLabel,
          autocomplete: 'one-time-code',
          inputmode: 'numeric',
        },
      ],
    },

    async isEnrolled(ctx: MethodContext): Promise<boolean> {
      if (await primaryAddress(ctx.user)) return true;
      return (await ctx.credentials.list(MEDIUM)).some((c) => addressOfMedium(c) !== null);
    },

    async initiate(ctx: InitiateContext): Promise<InitiateOutcome> {
      const address = await resolveDestination(ctx);
      if (typeof address !== 'string') return address;
      const expiresAt = Math.min(
        services.clock.now().getTime() + options.code_ttl * 1000,
        ctx.exchangeExpiresAt.getTime(),
      );
      const issued = await sendCode(ctx, address, expiresAt, true, ctx.link);
      if ('ok' in issued) return issued;
      const mediumText = spec.mask(address);
      return { ok: true, state: { ...issued, medium: mediumText }, response: { medium_text: mediumText } };
    },

    async verify(ctx: VerifyContext): Promise<VerifyOutcome> {
      const result = check(ctx.state, ctx.fields['pass_code']);
      return result === 'ok' ? { ok: true } : { ok: false, reason: result };
    },

    enrollment: {
      async initiate(ctx: EnrollmentContext): Promise<EnrollmentOutcome> {
        const address = enrollmentAddress(ctx.body);
        if (!address) return fail('INVALID_FIELD', 400, 'A valid address is required');
        const issued = await sendCode(ctx, address, services.clock.now().getTime() + options.code_ttl * 1000, false);
        if ('ok' in issued) return issued;
        return { ok: true, pending: { address, ...issued }, response: { medium_text: spec.mask(address) } };
      },

      async verify(ctx: EnrollmentContext): Promise<EnrollmentOutcome> {
        const address = ctx.pending?.['address'];
        if (typeof address !== 'string' || check(ctx.pending, ctx.body['pass_code']) !== 'ok') {
          return fail('VERIFICATION_FAILED', 401, 'The code is wrong or expired');
        }
        const mediumText = spec.mask(address);
        // Proving the same destination twice keeps one credential rather than a duplicate.
        const existing = (await ctx.credentials.list(MEDIUM)).find((c) => addressOfMedium(c) === address);
        const credential =
          existing ?? (await ctx.credentials.add({ type: MEDIUM, label: mediumText, data: { address } }));
        return { ok: true, done: true, pending: null, response: { medium_id: credential.id, medium_text: mediumText } };
      },
    },
  };
}
