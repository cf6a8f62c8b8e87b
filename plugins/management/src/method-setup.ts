import {
  methodRefusalError,
  verificationError,
  type JsonObject,
  type LoginFlowView,
  type MethodSetup,
  type PluginApi,
  type UserRecord,
} from '@gatehouse-auth/core';
import type { IncomingMessage } from 'node:http';

type Step = 'initiation' | 'scan' | 'verification';

/** Wrong confirmation codes allowed per pending setup. */
const MAX_CONFIRMATION_ATTEMPTS = 5;

/** Where a setup's exchange_id (a confirmation handle) is kept, by its hash. */
const EXCHANGE_PREFIX = 'exchange:';

/** The pending setup's member holding the hash of its exchange_id. */
const EXCHANGE_KEY = '_exchange';

const noSuchSetup = () => verificationError('EXCHANGE_INVALID', 'no such setup in progress for this method');

/** Pending setups live this long between steps. */
const PENDING_TTL_SECONDS = 600;

/**
 * Setting up, listing, renaming and removing a user's methods (service `methodSetup`, moved out
 * of the core by decision 81). The pending state between steps is kept in this plugin's records
 * under the user and method. The core runs each method's handler and what a replaced credential
 * entails (`web.setup.run`), and ends the user's sessions after a removal (`web.setup.removed`).
 */
export class MethodSetupService implements MethodSetup {
  constructor(private readonly api: Pick<PluginApi, 'web' | 'services' | 'records'>) {}

  /** The registered method with this id (any case), or METHOD_NOT_FOUND as the core answers it. */
  private method(methodId: string) {
    const method = this.api.web.methods().find((m) => m.id === methodId.toUpperCase());
    if (!method) throw verificationError('METHOD_NOT_FOUND', `no verification method "${methodId}"`);
    return method;
  }

  step(step: Step, methodId: string, user: UserRecord, body: Record<string, unknown>, req: IncomingMessage) {
    return this.run(step, methodId, user, body, req);
  }

  /**
   * One step; `exchange`, the hash of the exchange_id a confirmation came with, must be the one
   * the pending setup was given (a later setup of the method, or none, is not that exchange's).
   */
  private async run(
    step: Step,
    methodId: string,
    user: UserRecord,
    body: Record<string, unknown>,
    req: IncomingMessage,
    exchange?: string,
  ): Promise<JsonObject> {
    const { records, services } = this.api;
    const key = `${user.id}:${this.method(methodId).id}`;
    const pending = step === 'initiation' ? null : ((await records.get(key))?.data ?? null);
    if (exchange !== undefined) {
      const own = pending?.[EXCHANGE_KEY];
      if (typeof own !== 'string' || !services.crypto.safeEqual(own, exchange)) throw noSuchSetup();
    }
    const { method, outcome } = await this.api.web.setup.run(step, methodId, user, body, pending, req);
    if (!outcome.ok) {
      // A wrong confirmation code spends one of a few attempts, then the setup starts over: the
      // code proves control of a phone or email and must not be guessable.
      if (pending && outcome.status === 401) {
        const attempts = (typeof pending._attempts === 'number' ? pending._attempts : 0) + 1;
        if (attempts >= MAX_CONFIRMATION_ATTEMPTS) {
          await records.delete(key);
          throw verificationError('TOO_MANY_ATTEMPTS', 'too many wrong codes; start the setup again');
        }
        await records.put(key, { ...pending, _attempts: attempts }, { ttlSeconds: PENDING_TTL_SECONDS });
      }
      throw methodRefusalError(outcome);
    }
    // A setup that waits for a confirmation gets an exchange_id: the confirmation may come with it
    // instead of a bearer (cidaas clients confirm a code that way). It names this user and method,
    // and the pending setup keeps its hash, so it confirms that setup and no later one.
    let response = outcome.response;
    const handle = step === 'initiation' && outcome.pending && !outcome.done ? services.crypto.randomToken(24) : null;
    if (outcome.done || outcome.pending === null) await records.delete(key);
    else if (outcome.pending) {
      const exchangeOf = handle ? services.crypto.sha256(handle) : pending?.[EXCHANGE_KEY];
      const kept = exchangeOf === undefined ? outcome.pending : { ...outcome.pending, [EXCHANGE_KEY]: exchangeOf };
      await records.put(key, kept, { ttlSeconds: PENDING_TTL_SECONDS });
    }
    if (handle) {
      await records.put(
        `${EXCHANGE_PREFIX}${services.crypto.sha256(handle)}`,
        { user_id: user.id, method: method.id },
        { ttlSeconds: PENDING_TTL_SECONDS },
      );
      const expiresAt = new Date(services.clock.now().getTime() + PENDING_TTL_SECONDS * 1000);
      response = { ...response, exchange_id: { exchange_id: handle, expires_at: expiresAt.toISOString() } };
    }
    await services.events.record({
      type: `enrollment.${step}`,
      userId: user.id,
      method: method.id,
      ip: this.api.web.clientIp(req),
      outcome: outcome.done ? 'enrolled' : 'pending',
    });
    return response;
  }

  // A confirmation without a bearer: the setup's exchange_id names the user and the method; the
  // pending setup it names keeps its own attempt limit.
  async confirm(methodId: string, body: Record<string, unknown>, req: IncomingMessage) {
    const { exchange_id: exchangeId, sub: _sub, ...fields } = body;
    const record =
      typeof exchangeId === 'string'
        ? await this.api.records.get(`${EXCHANGE_PREFIX}${this.api.services.crypto.sha256(exchangeId)}`)
        : null;
    const method = this.api.web.methods().find((m) => m.id === methodId.toUpperCase());
    const userId =
      record && method && record.data.method === method.id && typeof record.data.user_id === 'string'
        ? record.data.user_id
        : null;
    const user = userId ? await this.api.services.users.findById(userId) : null;
    if (!user || user.status !== 'active') throw noSuchSetup();
    return this.run('verification', methodId, user, fields, req, this.api.services.crypto.sha256(exchangeId as string));
  }

  /** The user's methods with their credentials' public parts (never secrets). */
  async list(user: UserRecord, req: IncomingMessage): Promise<JsonObject[]> {
    const out: JsonObject[] = [];
    for (const method of this.api.web.methods()) {
      const list = await this.api.services.credentials(user.id, method.id).list();
      out.push({
        method: method.id,
        enrolled: await this.api.web.setup.isEnrolled(user, method.id, req),
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

  /** Renames one credential (its label: what the user calls a passkey or a phone). */
  async rename(user: UserRecord, methodId: string, credentialId: string, label: string): Promise<void> {
    const credentials = this.api.services.credentials(user.id, this.method(methodId).id);
    if (!(await credentials.get(credentialId))) throw verificationError('CREDENTIAL_NOT_FOUND');
    await credentials.update(credentialId, { label });
  }

  /** Removes one credential, or all of the method's credentials when no id is given. */
  async remove(user: UserRecord, methodId: string, credentialId?: string): Promise<number> {
    const method = this.method(methodId);
    const credentials = this.api.services.credentials(user.id, method.id);
    const ids = credentialId ? [credentialId] : (await credentials.list()).map((c) => c.id);
    let removed = 0;
    for (const id of ids) if (await credentials.remove(id)) removed++;
    if (credentialId && removed === 0) throw verificationError('CREDENTIAL_NOT_FOUND');
    if (removed > 0) await this.api.web.setup.removed(user.id);
    await this.api.services.events.record({
      type: 'enrollment.removed',
      userId: user.id,
      method: method.id,
      data: { removed },
    });
    return removed;
  }

  stepDuringLogin(
    flow: LoginFlowView,
    methodId: string,
    step: Step,
    body: Record<string, unknown>,
    req: IncomingMessage,
  ) {
    return this.api.web.setup.stepDuringLogin(flow, methodId, step, req, (user) =>
      this.step(step, methodId, user, body, req),
    );
  }
}
