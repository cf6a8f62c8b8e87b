import type {
  AppSettingsLookup,
  AuthMethod,
  EnrollmentHandlers,
  JsonObject,
  RecordStore,
  RequestFacts,
  Services,
  UploadedFile,
  UserRecord,
} from '@gatehouse-auth/plugin-api';
import type { Logger } from 'pino';
import { appMethods, type AppConfig } from '../config/schema.js';
import { methodRefusalError } from '../errors.js';
import type { Extensions } from '../plugins/loader.js';
import { methodContextOf } from './context.js';
import { registeredMethod, verificationError } from './errors.js';

export type EnrollmentStep = 'initiation' | 'scan' | 'verification';

// `import` is no step of the setup API: only `gatehouse users import` calls it.
const HANDLER: Record<EnrollmentStep, Exclude<keyof EnrollmentHandlers, 'import'>> = {
  initiation: 'initiate',
  scan: 'scan',
  verification: 'verify',
};

/** Wrong confirmation codes allowed per pending setup. */
const MAX_CONFIRMATION_ATTEMPTS = 5;

/** Where a setup's exchange_id (a confirmation handle) is kept, by its hash. */
const EXCHANGE_PREFIX = 'exchange:';

/** Pending setups live this long between steps. */
const PENDING_TTL_SECONDS = 600;

/**
 * Setting up, listing and removing a user's methods. The pending state between steps is kept
 * in the core's record store under the user and method.
 */
export class EnrollmentService {
  constructor(
    private readonly deps: {
      extensions: Extensions;
      services: Services;
      pending: RecordStore;
      /** Ends the user's OAuth grants (refresh tokens) after a credential change (RFC 9700 §4.14.2). */
      revokeGrants?: (userId: string, reason: string) => Promise<unknown>;
      /** The event `password_changed`, with what was set up since the user's last sign-in. */
      passwordChanges?: { changed(user: UserRecord, methodId: string, request: RequestFacts): void };
      /** Per-app method options, for what an app's overview asks of a method. */
      appSettings?: AppSettingsLookup;
    },
  ) {}

  /** Whether the user has `method` set up, as `clientId` sees it (its options; 'enrollment': none). */
  isEnrolled(method: AuthMethod, user: UserRecord, clientId: string, request: RequestFacts, logger: Logger) {
    return method.isEnrolled(methodContextOf(this.deps, user, method.id, { clientId, request, logger }));
  }

  async step(
    step: EnrollmentStep,
    methodId: string,
    user: UserRecord,
    body: Record<string, unknown>,
    request: RequestFacts,
    logger: Logger,
    files: UploadedFile[] = [],
  ): Promise<JsonObject> {
    const method = registeredMethod(this.deps.extensions, methodId);
    const handler = method.enrollment?.[HANDLER[step]];
    if (!handler) throw verificationError('ENROLLMENT_NOT_SUPPORTED', `${method.id} has no ${step} step`);
    const key = `${user.id}:${method.id}`;
    const pending = step === 'initiation' ? null : ((await this.deps.pending.get(key))?.data ?? null);
    const outcome = await handler({
      user,
      credentials: this.deps.services.credentials(user.id, method.id),
      request,
      clientId: 'enrollment',
      logger,
      body,
      files,
      pending,
    });
    if (!outcome.ok) {
      // A wrong confirmation code spends one of a few attempts, then the setup starts over: the
      // code proves control of a phone or email and must not be guessable.
      if (pending && outcome.status === 401) {
        const attempts = (typeof pending._attempts === 'number' ? pending._attempts : 0) + 1;
        if (attempts >= MAX_CONFIRMATION_ATTEMPTS) {
          await this.deps.pending.delete(key);
          throw verificationError('TOO_MANY_ATTEMPTS', 'too many wrong codes; start the setup again');
        }
        await this.deps.pending.put(key, { ...pending, _attempts: attempts }, { ttlSeconds: PENDING_TTL_SECONDS });
      }
      throw methodRefusalError(outcome);
    }
    // A replaced credential (a new password): whoever held the old one loses sessions and tokens,
    // and the security event tells what was set up meanwhile (it outlives the old password).
    if (outcome.done && outcome.replaced) {
      await this.deps.revokeGrants?.(user.id, 'credential_replaced');
      this.deps.passwordChanges?.changed(user, method.id, request);
    }
    if (outcome.done || outcome.pending === null) await this.deps.pending.delete(key);
    else if (outcome.pending) await this.deps.pending.put(key, outcome.pending, { ttlSeconds: PENDING_TTL_SECONDS });
    // A setup that waits for a confirmation gets an exchange_id: the confirmation may come with it
    // instead of a bearer (cidaas clients confirm a code that way). It names this user and method.
    let response = outcome.response;
    if (step === 'initiation' && outcome.pending && !outcome.done) {
      const handle = this.deps.services.crypto.randomToken(24);
      await this.deps.pending.put(
        `${EXCHANGE_PREFIX}${this.deps.services.crypto.sha256(handle)}`,
        { user_id: user.id, method: method.id },
        { ttlSeconds: PENDING_TTL_SECONDS },
      );
      const expiresAt = new Date(this.deps.services.clock.now().getTime() + PENDING_TTL_SECONDS * 1000);
      response = { ...response, exchange_id: { exchange_id: handle, expires_at: expiresAt.toISOString() } };
    }
    await this.deps.services.events.record({
      type: `enrollment.${step}`,
      userId: user.id,
      method: method.id,
      ip: request.ip,
      outcome: outcome.done ? 'enrolled' : 'pending',
    });
    return response;
  }

  /**
   * The user a setup exchange_id was given for, if it is live and for this method; the pending
   * setup it names keeps its own attempt limit.
   */
  async userOfExchange(exchangeId: string, methodId: string): Promise<string | null> {
    const record = await this.deps.pending.get(`${EXCHANGE_PREFIX}${this.deps.services.crypto.sha256(exchangeId)}`);
    const method = this.deps.extensions.methods.get(methodId.toUpperCase());
    if (!record || !method || record.data.method !== method.id) return null;
    return typeof record.data.user_id === 'string' ? record.data.user_id : null;
  }

  /** The user's methods with their credentials' public parts (never secrets). */
  async list(user: UserRecord, request: RequestFacts, logger: Logger): Promise<JsonObject[]> {
    const out: JsonObject[] = [];
    for (const method of this.deps.extensions.methods.values()) {
      const list = await this.deps.services.credentials(user.id, method.id).list();
      out.push({
        method: method.id,
        enrolled: await this.isEnrolled(method, user, 'enrollment', request, logger),
        credentials: list.map((c) => ({
          id: c.id,
          type: c.type,
          label: c.label,
          created_at: c.createdAt.toISOString(),
          used: c.usedAt !== null,
        })),
      });
    }
    return out;
  }

  /**
   * The app's methods with this user's state of each (what an account page shows, cidaas's
   * `GET …/config`): the stages that list it, whether it is set up and can be, and whether the
   * user's email address and phone number are verified.
   */
  async overview(user: UserRecord, app: AppConfig, request: RequestFacts, logger: Logger): Promise<JsonObject> {
    const methods: JsonObject[] = [];
    for (const id of appMethods(app)) {
      const method = this.deps.extensions.methods.get(id);
      if (!method) continue;
      methods.push({
        type: id,
        stages: app.login_stages.flatMap((stage, i) => (stage.includes(id) ? [i + 1] : [])),
        enrolled: await this.isEnrolled(method, user, app.client_id, request, logger),
        can_setup: method.enrollment !== undefined,
      });
    }
    const accounts = this.deps.services.accounts;
    return {
      client_id: app.client_id,
      sub: user.id,
      methods,
      email_verified: user.email ? await accounts.verified(user, 'email') : false,
      phone_number_verified: user.phone ? await accounts.verified(user, 'sms') : false,
    };
  }

  /** Whether the user can sign in with anything besides a password (a second factor). */
  async hasSecondFactor(user: UserRecord, request: RequestFacts, logger: Logger): Promise<boolean> {
    for (const method of this.deps.extensions.methods.values()) {
      if (method.amr.every((v) => v === 'pwd')) continue;
      if (await this.isEnrolled(method, user, 'enrollment', request, logger)) return true;
    }
    return false;
  }

  /**
   * After a way to sign in was removed outside `remove` (a device): the user's sessions and
   * tokens end, as for a removed method, and the removal is an event.
   */
  async afterRemoval(userId: string, eventType: string, data: JsonObject): Promise<void> {
    await this.deps.revokeGrants?.(userId, 'method_removed');
    await this.deps.services.events.record({ type: eventType, userId, data });
  }

  /** Renames one credential (its label: what the user calls a passkey or a phone). */
  async rename(user: UserRecord, methodId: string, credentialId: string, label: string): Promise<void> {
    const method = registeredMethod(this.deps.extensions, methodId);
    const credentials = this.deps.services.credentials(user.id, method.id);
    if (!(await credentials.get(credentialId))) throw verificationError('CREDENTIAL_NOT_FOUND');
    await credentials.update(credentialId, { label });
  }

  /** Removes one credential, or all of the method's credentials when no id is given. */
  async remove(user: UserRecord, methodId: string, credentialId?: string): Promise<number> {
    const method = registeredMethod(this.deps.extensions, methodId);
    const credentials = this.deps.services.credentials(user.id, method.id);
    const ids = credentialId ? [credentialId] : (await credentials.list()).map((c) => c.id);
    let removed = 0;
    for (const id of ids) if (await credentials.remove(id)) removed++;
    if (credentialId && removed === 0) throw verificationError('CREDENTIAL_NOT_FOUND');
    if (removed > 0) await this.deps.revokeGrants?.(user.id, 'method_removed');
    await this.deps.services.events.record({
      type: 'enrollment.removed',
      userId: user.id,
      method: method.id,
      data: { removed },
    });
    return removed;
  }
}
