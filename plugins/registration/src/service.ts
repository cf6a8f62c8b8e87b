import type { IncomingMessage } from 'node:http';
import type { Response } from 'express';
import {
  E164_PATTERN,
  EMAIL_PATTERN,
  USERNAME_PATTERN,
  isProtocolError,
  profilePatchSchema,
  type CredentialStore,
  type JsonObject,
  type LoginContinuation,
  type LoginFlowView,
  type NamedLimit,
  type NewCredential,
  type PluginApi,
  type UserAccounts,
  type UserRecord,
} from '@gatehouse-auth/core';
import {
  ACCOUNT_FIELDS,
  provenMedium,
  type AppRegistration,
  type FieldName,
  type RegistrationOptions,
} from './config.js';

/** A refusal, with the status and code the page shows and the cidaas calls answer. */
export class RegistrationError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field: string | null = null,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

/** What a registrant gives: the app's fields, the password (twice), the terms. */
export interface RegistrationInput {
  fields: Partial<Record<FieldName, string>>;
  password: string;
  /** The repeat, when the form asks for one (null: not asked). */
  passwordRepeat: string | null;
  termsAccepted: boolean;
}

/** A registration waiting for its code: `id` goes with the code (it authorises nothing alone). */
export interface Pending {
  id: string;
  medium: 'email' | 'sms';
  /** The address, masked (`j•••@example.com`). */
  masked: string;
  minutes: number;
}

/** A registration done: the new user, and where the login goes next. */
export interface Registered {
  user: UserRecord;
  continuation: LoginContinuation;
}

/** What `api.provide('registration', …)` lends other plugins (the cidaas calls). */
export interface RegistrationService {
  /** The app's registration settings, or null when it has none on. */
  settings(clientId: string): AppRegistration | null;
  /**
   * The app's form: its fields in order with their labels in `locale` (else the flow's
   * `ui_locales`, else the browser's), then the password; and the terms version to accept.
   */
  form(
    req: IncomingMessage,
    flow: LoginFlowView,
    locale: string | null,
  ): { locale: string; fields: { name: string; required: boolean; label: string }[]; terms: string | null } | null;
  /** Starts a registration for the flow: a code on its way, or (verify: none) the account made. */
  start(req: IncomingMessage, flow: LoginFlowView, input: RegistrationInput): Promise<Pending | Registered>;
  /** Proves the code of a pending registration: the account is made and the login continues. */
  confirm(req: IncomingMessage, flow: LoginFlowView, pendingId: string, code: string): Promise<Registered>;
  /** The pending registration's masked address, for the code page (null when gone). */
  pending(flow: LoginFlowView, pendingId: string): Promise<Pending | null>;
  /**
   * The flow of a request id for this browser, open, at its first stage, of an app with
   * registration on. `admitted`: the caller ran `admit` in this request (which claimed the flow
   * for this browser or threw), so the browser need not hold its cookie yet.
   */
  flowFor(
    req: IncomingMessage,
    requestId: unknown,
    opts?: { admitted?: boolean },
  ): Promise<{ flow: LoginFlowView; app: AppRegistration }>;
  /** `web.loginFlows.admit`: the form's origin, and the first claim of an app's generated flow. */
  admit(req: IncomingMessage, res: Response, requestId: string): Promise<void>;
  /**
   * Whether an account has one of these identifiers, for an app whose `user_existence` is
   * `answer`; null (say nothing) otherwise. Counted in the per-address limit.
   */
  exists(req: IncomingMessage, flow: LoginFlowView, identifiers: string[]): Promise<boolean | null>;
}

interface PendingRecord {
  flowId: string;
  clientId: string;
  username: string;
  email: string | null;
  phone: string | null;
  profile: JsonObject;
  /** The password method's credentials, made by its enrollment (a hash), sealed. */
  credentials: string;
  credentialType: string;
  medium: 'email' | 'sms';
  address: string;
  codeMac: string;
  terms: string | null;
}

const PROFILE_FIELDS = (name: FieldName) => !ACCOUNT_FIELDS.includes(name);

/** `jane@example.com` → `j•••@example.com`; `+15551234567` → `•••4567`. */
export function maskAddress(medium: 'email' | 'sms', address: string): string {
  if (medium === 'sms') return `•••${address.slice(-4)}`;
  const at = address.lastIndexOf('@');
  return `${address.slice(0, 1)}•••${address.slice(at)}`;
}

/**
 * The registration (decision 46): checks what the registrant gave, sets the password through the
 * password method's own enrollment (its policy), runs the FDS rules of the `registration` phase,
 * and keeps the registration waiting for the code sent to the address. An address already taken
 * gets the same answer, and its owner a notice. The account is made only once the code is proven.
 */
export function registrationService(
  api: PluginApi,
  options: RegistrationOptions,
  apps: Map<string, AppRegistration>,
): RegistrationService {
  const { web, services, records } = api;
  const perIp = web.limit('register', options.per_ip_per_hour, 3600);
  const perAddress = web.limit('address', options.per_address_per_hour, 3600);
  const codeAttempts: NamedLimit = web.limit('code', options.max_attempts, options.code_ttl_minutes * 60);
  const ttlSeconds = options.code_ttl_minutes * 60;
  const keyOf = (pendingId: string) => `pending:${services.crypto.sha256(pendingId)}`;
  const usedKeyOf = (pendingId: string) => `used:${services.crypto.sha256(pendingId)}`;
  const codeMac = (pendingId: string, code: string) => services.secrets.mac(`registration-code:${pendingId}:${code}`);

  const limited = async (limit: NamedLimit, key: string) => {
    const wait = await limit.hit(key);
    if (wait) throw new RegistrationError(429, 'TOO_MANY_REQUESTS', 'too many registrations', null, wait);
  };
  const uiLocales = (flow: LoginFlowView) =>
    typeof flow.oauth?.ui_locales === 'string' ? (flow.oauth.ui_locales as string) : null;

  /** The channel of a medium; checked at start-up for every app that needs it. */
  const channelOf = (medium: 'email' | 'sms') => (medium === 'email' ? options.email_channel : options.sms_channel)!;

  /** Checks the fields against the app's list; the account's identifiers and profile claims. */
  function readFields(app: AppRegistration, given: RegistrationInput['fields']) {
    const value = (name: FieldName) => (typeof given[name] === 'string' ? given[name].trim() : '');
    const missing = app.fields.filter((f) => f.required && !value(f.name)).map((f) => f.name);
    if (missing.length) throw new RegistrationError(400, 'FIELD_MISSING', `missing: ${missing.join(', ')}`, missing[0]);
    const asked = new Set(app.fields.map((f) => f.name));
    const email = asked.has('email') && value('email') ? value('email').toLowerCase() : null;
    const phone = asked.has('phone') && value('phone') ? value('phone') : null;
    if (email !== null && !EMAIL_PATTERN.test(email)) throw invalid('email');
    if (phone !== null && !E164_PATTERN.test(phone)) throw invalid('phone');
    let username = asked.has('username') ? value('username') : '';
    if (username) {
      // A chosen name must not look like an address: a taken "username" would then tell that an
      // address has an account (the answer for addresses never does).
      if (!USERNAME_PATTERN.test(username) || username.includes('@') || username.startsWith('+')) {
        throw invalid('username');
      }
    } else {
      username = email ?? phone ?? '';
    }
    if (!username) throw new RegistrationError(400, 'FIELD_MISSING', 'missing: email or phone', 'email');
    const profile: Record<string, string> = {};
    for (const f of app.fields) if (PROFILE_FIELDS(f.name) && value(f.name)) profile[f.name] = value(f.name);
    const parsed = profilePatchSchema.safeParse(profile);
    if (!parsed.success) throw invalid(String(parsed.error.issues[0]?.path[0] ?? 'profile'));
    return { username, email, phone, profile: profile as JsonObject, ownName: asked.has('username') };
  }

  /**
   * The password through the password method's own enrollment: its policy decides, and it hashes.
   * The credential it makes is kept (sealed) until the account exists.
   */
  async function passwordCredentials(req: IncomingMessage, flow: LoginFlowView, username: string, password: string) {
    const method = web.loginFlows.method(options.password_method);
    let made: { type: string; credentials: NewCredential[] } | null = null;
    const capture: CredentialStore = {
      list: async () => [],
      get: async () => null,
      replaceAll: async (type, credentials) => {
        made = { type, credentials };
        return [];
      },
      add: async (credential) => {
        made = { type: credential.type, credentials: [...(made?.credentials ?? []), credential] };
        return { id: 'pending', userId: 'pending', method: method.id, createdAt: new Date(), ...credential } as never;
      },
      remove: async () => false,
      markUsed: async () => false,
      advanceCounter: async () => false,
      update: async () => {},
    };
    const provisional: UserRecord = {
      id: '00000000-0000-0000-0000-000000000000',
      username,
      email: null,
      phone: null,
      status: 'active',
    };
    const outcome = await method.enrollment!.initiate({
      user: provisional,
      credentials: capture,
      request: web.requestFacts(req),
      clientId: flow.clientId,
      logger: api.logger,
      body: { password },
      pending: null,
    });
    if (!outcome.ok) {
      const known = ['PASSWORD_TOO_SHORT', 'PASSWORD_TOO_LONG', 'PASSWORD_TOO_COMMON'];
      throw new RegistrationError(
        400,
        known.includes(outcome.code) ? outcome.code : 'PASSWORD_REFUSED',
        outcome.message,
        'password',
      );
    }
    if (!made) throw new Error(`${method.id} enrollment stored no credential`);
    return made as { type: string; credentials: NewCredential[] };
  }

  async function taken(identifiers: (string | null)[]): Promise<UserRecord | null> {
    for (const id of identifiers) {
      if (!id) continue;
      const user = await services.users.findByIdentifier(id);
      if (user) return user;
    }
    return null;
  }

  async function send(
    req: IncomingMessage,
    flow: LoginFlowView,
    medium: 'email' | 'sms',
    to: string,
    what: 'code' | 'taken',
    code: string | null,
  ) {
    const t = web.messages(req, uiLocales(flow));
    const vars = { app: flow.clientName, code: code ?? '', minutes: options.code_ttl_minutes };
    const text = t.t(`reg.mail.${what}.text`, vars);
    await services.channels.enqueue(
      channelOf(medium),
      { kind: medium, to, text, ...(medium === 'email' ? { subject: t.t(`reg.mail.${what}.subject`, vars) } : {}) },
      {
        expiresAt: new Date(services.clock.now().getTime() + ttlSeconds * 1000),
        secrets: code ? [code] : [],
        about: { clientId: flow.clientId },
      },
    );
  }

  /** Makes the account from what the registration kept, and moves the login on with it. */
  async function finish(
    req: IncomingMessage,
    flow: LoginFlowView,
    kept: Omit<PendingRecord, 'codeMac' | 'address' | 'medium'> & {
      proven: { medium: 'email' | 'sms'; address: string } | null;
    },
  ): Promise<Registered> {
    const accounts = services.resolve<UserAccounts>('userAccounts');
    let user: UserRecord;
    try {
      user = await accounts.createUser(
        { via: 'registration', userId: 'self', ip: web.clientIp(req) },
        {
          username: kept.username,
          ...(kept.email ? { email: kept.email } : {}),
          ...(kept.phone ? { phone: kept.phone } : {}),
        },
      );
    } catch (err) {
      // Taken since the registration started (or a username someone has): nothing was made.
      if (isProtocolError(err) && err.code === 'USER_EXISTS') {
        throw new RegistrationError(409, 'REGISTRATION_FAILED', 'the account could not be created');
      }
      throw err;
    }
    const credentials = JSON.parse(services.secrets.decrypt(kept.credentials)) as NewCredential[];
    await services.credentials(user.id, options.password_method).replaceAll(kept.credentialType, credentials);
    const done = [options.password_method];
    if (kept.proven) {
      await services.accounts.markVerified(user.id, kept.proven.medium, kept.proven.address);
      const method = options.proven_methods[kept.proven.medium];
      if (registered(method)) done.push(method);
    }
    if (Object.keys(kept.profile).length) await accounts.updateProfile(user, kept.profile);
    if (kept.terms) {
      const at = services.clock.now().toISOString();
      await records.put(`terms:${user.id}`, { version: kept.terms, accepted_at: at });
      await services.events.record({
        type: 'registration.terms_accepted',
        userId: user.id,
        clientId: flow.clientId,
        data: { version: kept.terms },
      });
    }
    await services.events.record({
      type: 'registration.completed',
      userId: user.id,
      clientId: flow.clientId,
      ip: web.clientIp(req),
      data: { verified: kept.proven?.medium ?? null },
    });
    const continuation = await web.loginFlows.registered(req, flow, user, done);
    return { user, continuation };
  }

  function registered(methodId: string): boolean {
    try {
      web.loginFlows.method(methodId);
      return true;
    } catch {
      return false;
    }
  }

  return {
    settings: (clientId) => {
      const app = apps.get(clientId);
      return app?.enabled ? app : null;
    },

    async flowFor(req, requestId, opts = {}) {
      let flow: LoginFlowView;
      try {
        flow = await web.loginFlows.open(requestId);
      } catch (err) {
        if (isProtocolError(err)) throw new RegistrationError(err.status, err.code, err.message);
        throw err;
      }
      const app = apps.get(flow.clientId);
      if (!app?.enabled) throw new RegistrationError(404, 'REGISTRATION_DISABLED', 'this app offers no registration');
      if (!opts.admitted && !web.loginFlows.isBound(req, flow)) {
        throw new RegistrationError(403, 'FLOW_NOT_BOUND', 'this login belongs to another browser');
      }
      if (flow.userId !== null || flow.stage !== 0) {
        throw new RegistrationError(409, 'WRONG_FLOW_STAGE', 'this login already names its user');
      }
      return { flow, app };
    },

    admit: (req, res, requestId) => web.loginFlows.admit(req, res, requestId),

    form(req, flow, locale) {
      const app = apps.get(flow.clientId);
      if (!app?.enabled) return null;
      const t = web.messages(req, locale ?? uiLocales(flow));
      return {
        locale: t.locale,
        fields: [
          ...app.fields.map((f) => ({
            name: f.name as string,
            required: f.required,
            label: t.t(`reg.field.${f.name}`),
          })),
          { name: 'password', required: true, label: t.t('reg.password') },
          { name: 'password_echo', required: true, label: t.t('reg.password_repeat') },
        ],
        terms: app.terms_version ?? null,
      };
    },

    async exists(req, flow, identifiers) {
      const app = apps.get(flow.clientId);
      if (!app?.enabled || app.user_existence !== 'answer') return null;
      await limited(perIp, web.clientIp(req));
      return (await taken(identifiers.filter(Boolean).slice(0, 3))) !== null;
    },

    async start(req, flow, input) {
      const app = apps.get(flow.clientId);
      if (!app?.enabled) throw new RegistrationError(404, 'REGISTRATION_DISABLED', 'this app offers no registration');
      await limited(perIp, web.clientIp(req));
      const { username, email, phone, profile, ownName } = readFields(app, input.fields);
      if (input.passwordRepeat !== null && input.passwordRepeat !== input.password) {
        throw new RegistrationError(400, 'PASSWORD_MISMATCH', 'the passwords differ', 'password');
      }
      if (app.terms_version && !input.termsAccepted) {
        throw new RegistrationError(400, 'TERMS_NOT_ACCEPTED', 'the terms must be accepted', 'terms');
      }
      const made = await passwordCredentials(req, flow, username, input.password);
      const verdict = await web.loginFlows.screenRegistration(req, flow, { username, email, phone });
      if (verdict.action !== 'allow') {
        await services.events.record({
          type: 'registration.refused',
          clientId: flow.clientId,
          ip: web.clientIp(req),
          reason: verdict.reasons.join(',').slice(0, 200) || 'fds',
          aggregateSeconds: 60,
        });
        throw new RegistrationError(
          403,
          'REGISTRATION_REFUSED',
          'refused by fraud detection',
          null,
          verdict.retryAfter ?? null,
        );
      }
      // A chosen username is a name, not an address: a taken one is said (never for an address).
      if (ownName && (await services.users.findByIdentifier(username))) {
        throw new RegistrationError(409, 'USERNAME_TAKEN', 'the username is taken', 'username');
      }
      const kept = {
        flowId: flow.id,
        clientId: flow.clientId,
        username,
        email,
        phone,
        profile,
        credentials: services.secrets.encrypt(JSON.stringify(made.credentials)),
        credentialType: made.type,
        terms: app.terms_version ?? null,
      };
      if (app.verify === 'none') {
        const owner = await taken([email, phone]);
        if (owner) {
          // Without a code the account exists at once, so a taken address cannot be hidden here
          // (README, "verify: none"); its owner still hears of it.
          const [medium, to] = email && owner.email === email ? (['email', email] as const) : (['sms', phone] as const);
          if (to && (medium === 'email' ? options.email_channel : options.sms_channel)) {
            await limited(perAddress, services.secrets.mac(`registration-address:${to.toLowerCase()}`));
            await send(req, flow, medium, to, 'taken', null);
          }
          throw new RegistrationError(409, 'REGISTRATION_FAILED', 'the account could not be created');
        }
        return finish(req, flow, { ...kept, proven: null });
      }
      const medium = provenMedium(app);
      const address = (medium === 'email' ? email : phone)!;
      await limited(perAddress, services.secrets.mac(`registration-address:${address.toLowerCase()}`));
      const id = services.crypto.randomToken(24);
      const code = services.crypto.randomDigits(options.code_length);
      // A taken address: the same answer, a code nobody has, and a notice to the owner instead.
      // (Another identifier given and taken shows only once the address is proven: the account
      // cannot be made then, REGISTRATION_FAILED.)
      const takenAddress = (await taken([address])) !== null;
      const record: PendingRecord = {
        ...kept,
        medium,
        address,
        codeMac: takenAddress ? codeMac(id, services.crypto.randomToken(24)) : codeMac(id, code),
      };
      await records.put(keyOf(id), record as unknown as JsonObject, { ttlSeconds });
      await send(req, flow, medium, address, takenAddress ? 'taken' : 'code', takenAddress ? null : code);
      await services.events.record({
        type: 'registration.started',
        clientId: flow.clientId,
        ip: web.clientIp(req),
        aggregateSeconds: 60,
      });
      return { id, medium, masked: maskAddress(medium, address), minutes: options.code_ttl_minutes };
    },

    async pending(flow, pendingId) {
      if (typeof pendingId !== 'string' || !pendingId || pendingId.length > 64) return null;
      const stored = await records.get(keyOf(pendingId));
      const data = stored?.data as unknown as PendingRecord | undefined;
      if (!data || data.flowId !== flow.id) return null;
      return {
        id: pendingId,
        medium: data.medium,
        masked: maskAddress(data.medium, data.address),
        minutes: options.code_ttl_minutes,
      };
    },

    async confirm(req, flow, pendingId, code) {
      if (typeof pendingId !== 'string' || !pendingId || pendingId.length > 64) {
        throw new RegistrationError(410, 'CODE_EXPIRED', 'no registration waits for a code');
      }
      const key = keyOf(pendingId);
      const stored = await records.get(key);
      const data = stored?.data as unknown as PendingRecord | undefined;
      if (!data || data.flowId !== flow.id) {
        if (await records.get(usedKeyOf(pendingId))) throw new RegistrationError(409, 'CODE_USED', 'the code was used');
        throw new RegistrationError(410, 'CODE_EXPIRED', 'the code has expired');
      }
      // Counted on every node before the code is looked at: parallel guesses count too.
      const wait = await codeAttempts.hit(services.crypto.sha256(pendingId));
      if (wait) {
        await records.delete(key);
        throw new RegistrationError(429, 'TOO_MANY_ATTEMPTS', 'too many wrong codes', 'code', wait);
      }
      const given = typeof code === 'string' ? code.trim() : '';
      if (!/^\d{4,12}$/.test(given) || !services.crypto.safeEqual(codeMac(pendingId, given), data.codeMac)) {
        throw new RegistrationError(400, 'CODE_INVALID', 'the code is not right', 'code');
      }
      // Single use, decided by the database: of two requests with the right code, one gets it.
      const won = await records.consume(key);
      if (!won) throw new RegistrationError(409, 'CODE_USED', 'the code was used');
      await records.put(usedKeyOf(pendingId), {}, { ttlSeconds });
      return finish(req, flow, { ...data, proven: { medium: data.medium, address: data.address } });
    },
  };
}

function invalid(field: string): RegistrationError {
  return new RegistrationError(400, 'INVALID_FIELD', `${field} is not valid`, field);
}
