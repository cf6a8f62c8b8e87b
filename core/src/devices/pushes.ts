import type {
  AuthMethod,
  BoundDevice,
  Clock,
  JsonObject,
  MethodContext,
  RequestFacts,
  Services,
  UploadedFile,
  UserRecord,
} from '@gatehouse-auth/plugin-api';
import Bowser from 'bowser';
import type { AppConfig } from '../config/schema.js';
import type { AssertionReplayStore } from '../oauth/assertions.js';
import { MATCH_NUMBER_DIGITS, matchNumber, safeEqual } from '../util/crypto.js';
import { verificationError } from '../verification/errors.js';
import type { Exchange, ExchangeStore } from '../verification/exchanges.js';
import { flowClosedReason, type LoginFlow } from '../verification/flows.js';
import { LIVE_STATES, type StatusState, type StatusStore } from '../verification/statuses.js';
import { SINGLE_FACTOR_KEY } from '../verification/pipeline.js';
import { canonicalBody, checkDeviceProof } from './proof.js';
import type { Device, DeviceStore } from './store.js';

/**
 * The steps a device takes on a push: the states each may start from, the state it moves to,
 * and the event it records (the push-fatigue rule counts denials).
 */
export const PUSH_STEPS = {
  acknowledge: { from: ['INITIATED'], to: 'PUSH_ACKNOWLEDGED', event: 'push.acknowledged' },
  allow: { from: ['INITIATED', 'PUSH_ACKNOWLEDGED'], to: 'ALLOWED', event: 'push.allowed' },
  deny: { from: LIVE_STATES, to: 'DENIED', event: 'push.denied' },
  cancel: { from: LIVE_STATES, to: 'CANCELLED', event: 'push.cancelled' },
} as const satisfies Record<string, { from: readonly StatusState[]; to: StatusState; event: string }>;
export type PushStep = keyof typeof PUSH_STEPS;

/** Whether the device sent the push's number (compared in constant time; no number, no match). */
function rightNumber(push: PushState, typed: string | undefined): boolean {
  return push.number !== undefined && safeEqual(String(push.number), (typed ?? '').trim());
}

/** What the core keeps about a push in its exchange's state (the method's own keys sit beside it). */
export interface PushState {
  push_id: string;
  device_id: string;
  challenge: string;
  /** The number the login page shows (number matching): the user types it on the device. */
  number?: number;
  /** What the device is shown: the app, and the browser and address the sign-in comes from. */
  context: JsonObject;
  /**
   * The facts of the request that started the push: the login's context. FDS rules judge a
   * device-completed method by them, not by the device's own call (see `signInFacts`).
   */
  initiator?: RequestFacts;
}
const PUSH_KEY = '_push';

/** A device request as the routes read it: the fields, the proof header and the public path. */
export interface DeviceRequest {
  fields: Record<string, string>;
  files: UploadedFile[];
  proof: string | undefined;
  /** The public path of the call (with the issuer's path): what the proof's `htu` must say. */
  path: string;
  request: RequestFacts;
}

export function pushStateOf(exchange: Exchange): PushState | null {
  const push = exchange.state[PUSH_KEY];
  return push && typeof push === 'object' && !Array.isArray(push) ? (push as unknown as PushState) : null;
}

/**
 * The context of the sign-in a device method completes: the facts of the request that started
 * the push (the browser), with this call's request id for the logs. The device's own call (the
 * phone app's user agent and address) is not a sign-in context. Without kept facts (not a push,
 * or one started before they were kept), the request's own.
 */
export function signInFacts(exchange: Exchange, request: RequestFacts): RequestFacts {
  const initiator = pushStateOf(exchange)?.initiator;
  return initiator ? { ...initiator, requestId: request.requestId } : request;
}

export const boundDevice = (d: Device): BoundDevice => ({
  deviceId: d.deviceId,
  name: d.name,
  clientId: d.clientId,
  biometric: d.biometric,
});

/** "Chrome on Linux", for the device to show where a sign-in comes from. */
function browserOf(userAgent: string): string {
  const parsed = Bowser.parse(userAgent || 'unknown');
  const browser = parsed.browser.name ?? 'An unknown browser';
  return parsed.os.name ? `${browser} on ${parsed.os.name}` : browser;
}

/**
 * The push side of device methods (docs/devices.md): picking the device, telling it, the
 * inbox, the signed steps and the device checks at verification. The exchange and status
 * stores keep the state, so any node can take any step.
 */
export class DevicePushes {
  constructor(
    private readonly deps: {
      issuer: string;
      devices: DeviceStore;
      exchanges: ExchangeStore;
      statuses: StatusStore;
      replay: AssertionReplayStore;
      services: Services;
      clock: Clock;
      methods: (id: string) => AuthMethod | undefined;
      /** The login flows: a push whose login ended or moved on is over, whatever its exchange says. */
      flows: { get(id: string): Promise<LoginFlow | null> };
    },
  ) {}

  /** The number matching shows on the login page: two digits, never a leading zero. */
  drawNumber(): number {
    return matchNumber();
  }

  /**
   * The device a push goes to: the one named (it must be the user's and able to do the method),
   * else the user's usable device used last. Null when the user has none.
   */
  async pickDevice(ctx: MethodContext, method: AuthMethod, mediumId: string | null): Promise<Device | null> {
    const usable = async (d: Device) =>
      (!method.device?.userVerification || d.biometric) &&
      (!method.device?.accepts || (await method.device.accepts(ctx, boundDevice(d))));
    if (mediumId) {
      const named = await this.deps.devices.find(mediumId);
      return named && named.userId === ctx.user.id && (await usable(named)) ? named : null;
    }
    for (const device of await this.deps.devices.ofUser(ctx.user.id)) if (await usable(device)) return device;
    return null;
  }

  /**
   * Starts a push to `device`: its state (kept in the exchange), the notification through the
   * method's channel when the device has a push token, and a `push.sent` event (what the
   * push-fatigue rule counts). The inbox shows it from now on.
   */
  async start(input: {
    method: AuthMethod;
    user: UserRecord;
    device: Device;
    app: AppConfig | undefined;
    request: RequestFacts;
    number: number | undefined;
    expiresAt: Date;
  }): Promise<{ state: JsonObject }> {
    const { method, user, device, request } = input;
    const { crypto, events, channels } = this.deps.services;
    const push: PushState = {
      // Never a leading '-': the id is typed on command lines (gatehouse-authenticator approve <push_id>).
      push_id: `push_${crypto.randomToken(16)}`,
      device_id: device.deviceId,
      challenge: crypto.randomToken(32),
      ...(input.number !== undefined ? { number: input.number } : {}),
      context: {
        app: input.app?.name ?? input.app?.client_id ?? '',
        browser: browserOf(request.userAgent),
        ip: request.ip,
        requested_at: this.deps.clock.now().toISOString(),
      },
      initiator: { ...request },
    };
    const channel = method.device?.channel;
    if (channel && device.pushToken) {
      await channels.enqueue(
        channel,
        {
          kind: 'push',
          to: device.pushToken,
          text: `Sign-in request for ${push.context.app as string}`,
          data: { push_id: push.push_id, method: method.id, issuer: this.deps.issuer },
        },
        { expiresAt: input.expiresAt },
      );
    }
    await events.record({
      type: 'push.sent',
      key: device.deviceId,
      userId: user.id,
      method: method.id,
      ip: request.ip,
    });
    return { state: { [PUSH_KEY]: push as unknown as JsonObject } };
  }

  /** The push response members for the login page. */
  pageResponse(device: Device, number: number | undefined): JsonObject {
    return { medium_text: device.name, ...(number !== undefined ? { push_selected_number: number } : {}) };
  }

  // ─────────────── the device's calls ───────────────

  /**
   * The inbox: the device's live pushes, each with a new exchange_id (reading retires the ids
   * answered before). Signed with no nonce. A push whose login ended (completed, cancelled,
   * expired) or went on to another stage is not listed: nobody waits on it any more.
   */
  async inbox(req: DeviceRequest): Promise<JsonObject> {
    const device = await this.signedDevice(req, null);
    const out: JsonObject[] = [];
    for (const exchange of await this.deps.exchanges.liveForMedium(device.deviceId)) {
      const push = pushStateOf(exchange);
      const status = await this.deps.statuses.findByKey(exchange.statusKey);
      if (!push || push.device_id !== device.deviceId || !status) continue;
      if (!LIVE_STATES.includes(status.state) || (await this.loginOver(exchange))) continue;
      const exchangeId = this.deps.services.crypto.randomToken(32);
      if (!(await this.deps.exchanges.rotate(exchange.key, exchangeId))) continue;
      out.push({
        push_id: push.push_id,
        method: exchange.method,
        state: status.state,
        exchange_id: { exchange_id: exchangeId, expires_at: exchange.expiresAt.toISOString() },
        challenge: push.challenge,
        context: push.context,
        // The login page asked for this method alone: the device may say it signs the user in.
        ...(exchange.state[SINGLE_FACTOR_KEY] === true ? { single_factor: true } : {}),
      });
    }
    await this.deps.devices.touch(device.deviceId);
    return { pushes: out };
  }

  /**
   * One signed step on a push: the exchange (checked by `checkExchange`, the verification's
   * own steps) must be a push to this device; the state moves on, and the answer carries a
   * new exchange_id.
   */
  async step(step: PushStep, exchange: Exchange, req: DeviceRequest): Promise<JsonObject> {
    const push = this.pushOf(exchange, req.fields);
    const device = await this.signedDevice(req, push);
    const { from, to, event } = PUSH_STEPS[step];
    if (!(await this.deps.statuses.transition(exchange.statusKey, from, to))) {
      const now = await this.deps.statuses.findByKey(exchange.statusKey);
      throw verificationError('PUSH_STATE', `the push is ${now?.state ?? 'over'}; ${step} is not possible`);
    }
    const reason = step === 'deny' ? (req.fields.reason ?? '').slice(0, 64) || 'user_denied' : null;
    await this.record(event, exchange, device, req.request, reason);
    await this.deps.devices.touch(device.deviceId);
    if (step === 'deny' || step === 'cancel') {
      await this.deps.exchanges.revoke(exchange.key, step === 'deny' ? 'denied' : 'cancelled');
      return { status: to };
    }
    const exchangeId = this.deps.services.crypto.randomToken(32);
    if (!(await this.deps.exchanges.rotate(exchange.key, exchangeId))) throw verificationError('EXCHANGE_USED');
    const method = this.deps.methods(exchange.method);
    return {
      status: to,
      exchange_id: { exchange_id: exchangeId, expires_at: exchange.expiresAt.toISOString() },
      ...(step === 'acknowledge' ? { context: push.context } : {}),
      // The device never learns the number: it asks the user to type the one the login page shows.
      ...(step === 'allow' && method?.device?.numberMatching && push.number !== undefined
        ? { number_digits: MATCH_NUMBER_DIGITS }
        : {}),
    };
  }

  /**
   * The device side of a verification: a push to this device, ALLOWED, a valid proof (with the
   * biometric unlock where the method needs it) and, for number matching, the number typed.
   * Returns the device, or why the proof is wrong (`final` where it must not be retried).
   */
  async checkVerification(
    method: AuthMethod,
    exchange: Exchange,
    req: DeviceRequest,
  ): Promise<{ ok: true; device: Device; uv: boolean } | { ok: false; reason: string; final?: boolean }> {
    const push = pushStateOf(exchange);
    if (!push || !safeEqual(push.push_id, req.fields.push_id ?? '')) return { ok: false, reason: 'push_mismatch' };
    if (push.device_id !== req.fields.device_id) return { ok: false, reason: 'device_mismatch' };
    const device = await this.deps.devices.find(push.device_id);
    if (!device || device.clientId !== req.fields.client_id) return { ok: false, reason: 'device_mismatch' };
    const proof = await this.proofOf(device, push.challenge, req);
    if (!proof.ok) return proof;
    if (method.device?.userVerification && !proof.uv) return { ok: false, reason: 'no_user_verification' };
    if (method.device?.numberMatching && !rightNumber(push, req.fields.pass_code))
      return { ok: false, reason: 'wrong_number', final: true };
    await this.deps.devices.touch(device.deviceId);
    return { ok: true, device, uv: proof.uv };
  }

  /** Records a push that ended with a final failure (a wrong number) as denied. */
  async deniedAtVerification(exchange: Exchange, request: RequestFacts, reason: string): Promise<void> {
    await this.deps.statuses.transition(exchange.statusKey, LIVE_STATES, 'DENIED');
    const push = pushStateOf(exchange);
    const device = push ? await this.deps.devices.find(push.device_id) : null;
    if (device) await this.record('push.denied', exchange, device, request, reason);
  }

  /** Ends the pushes of a removed device: its exchanges are revoked, their statuses CANCELLED. */
  async endPushesOf(deviceId: string): Promise<void> {
    for (const key of await this.deps.exchanges.revokeForMedium(deviceId, 'device_removed'))
      await this.deps.statuses.transition(key, LIVE_STATES, 'CANCELLED');
  }

  // ─────────────── helpers ───────────────

  /**
   * Whether the login a push belongs to no longer waits on it: its flow is over (complete,
   * cancelled, expired) or at another stage. The push steps refuse such a push already
   * (WRONG_FLOW_STAGE, the exchange checks); the inbox does not list it.
   */
  private async loginOver(exchange: Exchange): Promise<boolean> {
    const flow = await this.deps.flows.get(exchange.flowId);
    return !flow || flowClosedReason(flow, this.deps.clock.now()) !== null || flow.stage !== exchange.stage;
  }

  private pushOf(exchange: Exchange, fields: Record<string, string>): PushState {
    const push = pushStateOf(exchange);
    if (!push || !safeEqual(push.push_id, fields.push_id ?? ''))
      throw verificationError('EXCHANGE_INVALID', 'the push_id does not belong to this exchange_id');
    return push;
  }

  /** The device of a signed request; for a push, it must be the push's device. */
  private async signedDevice(req: DeviceRequest, push: PushState | null): Promise<Device> {
    const device = await this.deps.devices.find(req.fields.device_id ?? '');
    if (!device) throw verificationError('DEVICE_NOT_FOUND');
    if ((push && push.device_id !== device.deviceId) || device.clientId !== req.fields.client_id)
      throw verificationError('DEVICE_MISMATCH');
    const proof = await this.proofOf(device, push?.challenge ?? null, req);
    if (!proof.ok) throw verificationError('DEVICE_PROOF_INVALID', undefined, { reason: proof.reason });
    return device;
  }

  private proofOf(device: Device, nonce: string | null, req: DeviceRequest) {
    return checkDeviceProof(
      req.proof,
      device,
      { htu: req.path, nonce, body: canonicalBody(req.fields, req.files) },
      { issuer: this.deps.issuer, now: this.deps.clock.now(), replay: this.deps.replay },
    );
  }

  private record(type: string, exchange: Exchange, device: Device, request: RequestFacts, reason: string | null) {
    return this.deps.services.events.record({
      type,
      key: device.deviceId,
      userId: device.userId,
      method: exchange.method,
      ip: request.ip,
      reason,
    });
  }
}
