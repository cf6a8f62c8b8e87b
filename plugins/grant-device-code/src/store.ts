import type { JsonObject, RecordStore, Services } from '@gatehouse-auth/core';

/**
 * The device grants in the plugin's record store. Only hashes of the codes are keys; nothing
 * stored reveals a code:
 *
 * - `device:<sha256(device_code)>`: the request (client, scope, expiry); consumed when the
 *   tokens are issued, so exactly one poll gets them.
 * - `user:<mac(user_code)>`: which device request a user code belongs to, until it expires or
 *   the user answers.
 * - `decision:<device key>`: the user's answer; `add` lets only the first answer stand.
 * - `poll:<device key>`: when the device last polled and its current interval (slow_down).
 * - `flow:<sha256(id)>` / `confirm:<sha256(id)>`: the page's steps between the code, the login and
 *   the confirmation, server-side (the browser holds only random ids).
 */

export interface DeviceRequest {
  clientId: string;
  clientName: string;
  scope: string[];
  /** Epoch ms. */
  expiresAt: number;
  /** The user code's key, to retire it once answered. */
  userKey: string;
  /** Seconds between polls, as first told to the device. */
  interval: number;
}

export interface Decision {
  approved: boolean;
  userId: string;
  amr: string[];
  /** Epoch seconds. */
  authTime: number;
}

export interface PollState {
  /** Epoch ms of the last poll. */
  last: number;
  /** Seconds the device must wait between polls now. */
  interval: number;
}

/** A signed-in user about to answer a device's request. */
export type Confirmation = Omit<Decision, 'approved'> & { device: string };

/** Records outlive the codes by this much, so a late poll hears expired_token, not invalid_grant. */
export const GRACE_SECONDS = 3600;

export class DeviceGrants {
  constructor(
    private readonly records: RecordStore,
    private readonly services: Pick<Services, 'clock' | 'crypto' | 'secrets'>,
  ) {}

  /** The key of a device code (a hash: the code is 256 random bits). */
  deviceKey(deviceCode: string): string {
    return this.services.crypto.sha256(deviceCode);
  }

  /** The key of a user code (keyed MAC: 20^8 codes are too few for a plain hash). */
  userKey(userCode: string): string {
    return this.services.secrets.mac(`device-user-code:${userCode}`);
  }

  /** Stores a new request; false when the user code is taken (the caller draws another). */
  async create(device: string, request: DeviceRequest, ttlSeconds: number): Promise<boolean> {
    const userKey = request.userKey;
    if (!(await this.records.add(`user:${userKey}`, { device, mac: userKey }, { ttlSeconds }))) return false;
    await this.records.put(`device:${device}`, request as unknown as JsonObject, {
      ttlSeconds: ttlSeconds + GRACE_SECONDS,
    });
    return true;
  }

  async request(device: string): Promise<DeviceRequest | null> {
    return ((await this.records.get(`device:${device}`))?.data as DeviceRequest | undefined) ?? null;
  }

  /** The device a live user code belongs to (the stored MAC compared in constant time), or null. */
  async deviceOfUserCode(userCode: string): Promise<string | null> {
    const key = this.userKey(userCode);
    const record = await this.records.get(`user:${key}`);
    if (!record || typeof record.data.mac !== 'string' || !this.services.crypto.safeEqual(record.data.mac, key)) {
      return null;
    }
    return typeof record.data.device === 'string' ? record.data.device : null;
  }

  async decision(device: string): Promise<Decision | null> {
    return ((await this.records.get(`decision:${device}`))?.data as Decision | undefined) ?? null;
  }

  /** Records the user's answer; false when one was recorded already (the first stands). */
  async decide(device: string, request: DeviceRequest, decision: Decision): Promise<boolean> {
    const ttlSeconds = this.ttlOf(request) + GRACE_SECONDS;
    if (!(await this.records.add(`decision:${device}`, decision as unknown as JsonObject, { ttlSeconds })))
      return false;
    await this.records.delete(`user:${request.userKey}`);
    return true;
  }

  /** Takes the request for issuing tokens: exactly one of racing polls gets it. */
  async take(device: string): Promise<DeviceRequest | null> {
    return ((await this.records.consume(`device:${device}`))?.data as DeviceRequest | undefined) ?? null;
  }

  async poll(device: string): Promise<PollState | null> {
    return ((await this.records.get(`poll:${device}`))?.data as PollState | undefined) ?? null;
  }

  async polled(device: string, request: DeviceRequest, state: PollState): Promise<void> {
    await this.records.put(`poll:${device}`, state as unknown as JsonObject, {
      ttlSeconds: this.ttlOf(request) + GRACE_SECONDS,
    });
  }

  /** A random id for the browser's next step, the step's data kept here. */
  async step(kind: 'flow' | 'confirm', data: JsonObject, ttlSeconds: number): Promise<string> {
    const id = this.services.crypto.randomToken(24);
    await this.records.put(`${kind}:${this.services.crypto.sha256(id)}`, data, { ttlSeconds });
    return id;
  }

  async readStep(kind: 'flow' | 'confirm', id: unknown): Promise<JsonObject | null> {
    if (typeof id !== 'string' || id.length === 0 || id.length > 64) return null;
    return (await this.records.get(`${kind}:${this.services.crypto.sha256(id)}`))?.data ?? null;
  }

  /** Takes a step once: a confirmation is answered by one POST only. */
  async takeStep(kind: 'flow' | 'confirm', id: unknown): Promise<JsonObject | null> {
    if (typeof id !== 'string' || id.length === 0 || id.length > 64) return null;
    return (await this.records.consume(`${kind}:${this.services.crypto.sha256(id)}`))?.data ?? null;
  }

  /** Whole seconds until the request expires, at least 1 (for a TTL). */
  private ttlOf(request: DeviceRequest): number {
    return Math.max(1, Math.ceil((request.expiresAt - this.services.clock.now().getTime()) / 1000));
  }
}
