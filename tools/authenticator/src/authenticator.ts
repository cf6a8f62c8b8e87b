/**
 * A complete authenticator device for Gatehouse's device API (docs/devices.md): it binds itself
 * from a binding link, reads its inbox and takes the push steps, each call signed with its key.
 * Tests, the README's demo and integrators use it to play the phone.
 */
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK, type KeyObject } from 'jose';
import { canonicalBody, deviceProof, type DeviceAlg, type FilePart } from './proof.js';

/** Everything a device keeps (the CLI writes it to its state file). */
export interface DeviceState {
  /** The server's issuer (proofs' `aud`). */
  issuer: string;
  /** Where to send requests when not the issuer (a proxy, a test server); default the issuer. */
  server?: string;
  deviceId: string;
  clientId: string;
  name: string;
  alg: DeviceAlg;
  biometric: boolean;
  privateJwk: JWK;
  publicJwk: JWK;
  /** The user it is bound to, once bound. */
  sub?: string;
}

/** A pending sign-in request, as the inbox lists it; the steps keep `exchangeId` current. */
export interface Push {
  pushId: string;
  method: string;
  state: string;
  exchangeId: string;
  challenge: string;
  context: Record<string, unknown>;
  /** When the sign-in asked for it (the server's `context.requested_at`); null if it did not say. */
  requestedAt: Date | null;
  /** When the server stops taking it (its exchange's `expires_at`). */
  expiresAt: Date;
}

/** The server's error answer, as thrown by every call. */
export class DeviceCallError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = 'DeviceCallError';
  }
}

export interface CreateOptions {
  name?: string;
  clientId?: string;
  alg?: DeviceAlg;
  /** The key signs only after a biometric unlock (the simulator claims `uv` where asked). */
  biometric?: boolean;
  deviceId?: string;
  server?: string;
  /** The device's clock (proofs' `iat`), for tests with a fake server clock; default the real one. */
  now?: () => Date;
}

/** A photo to send with a FACE verification. */
export interface Photo {
  bytes: Uint8Array;
  type: 'image/jpeg' | 'image/png';
}

const BIND_PATH = '/verification-srv/devices/bind';
const INBOX_PATH = '/verification-srv/devices/pushes';
const LINK_PATH = '/devices/bind';
/** As an app's HTTP client names itself: the server sees the phone, not the sign-in's browser. */
const USER_AGENT = 'gatehouse-authenticator/0.1 (device simulator)';

export class Authenticator {
  private key: CryptoKey | KeyObject | undefined;

  private constructor(
    private readonly device: DeviceState,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** A new, unbound device with a fresh key pair. */
  static async create(opts: CreateOptions = {}): Promise<Authenticator> {
    const alg = opts.alg ?? 'ES256';
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    return new Authenticator(
      {
        issuer: '',
        ...(opts.server ? { server: opts.server } : {}),
        deviceId: opts.deviceId ?? `sim-${randomBytes(12).toString('base64url')}`,
        clientId: opts.clientId ?? 'gatehouse-authenticator',
        name: opts.name ?? 'Simulated phone',
        alg,
        biometric: opts.biometric ?? false,
        privateJwk: await exportJWK(privateKey),
        publicJwk: await exportJWK(publicKey),
      },
      opts.now,
    );
  }

  static restore(state: DeviceState, opts: { now?: () => Date } = {}): Authenticator {
    return new Authenticator(structuredClone(state), opts.now);
  }

  /** What to keep to use this device later (it holds the private key). */
  state(): DeviceState {
    return structuredClone(this.device);
  }

  get deviceId(): string {
    return this.device.deviceId;
  }

  get sub(): string | undefined {
    return this.device.sub;
  }

  /**
   * Binds this device to the account that opened `bindingUrl` (the link in the QR code):
   * `https://id.example.com/devices/bind?code=…`. The issuer is the link's origin and path.
   */
  async bind(bindingUrl: string, opts: { pushToken?: string } = {}): Promise<{ device_id: string; sub: string }> {
    const url = new URL(bindingUrl);
    const code = url.searchParams.get('code');
    if (!code || !url.pathname.endsWith(LINK_PATH)) throw new Error(`not a binding link: ${bindingUrl}`);
    this.device.issuer = url.origin + url.pathname.slice(0, -LINK_PATH.length);
    const body = {
      code,
      device_id: this.device.deviceId,
      client_id: this.device.clientId,
      name: this.device.name,
      public_key: this.device.publicJwk,
      biometric: this.device.biometric,
      ...(opts.pushToken ? { push_token: opts.pushToken } : {}),
    };
    const data = await this.call(BIND_PATH, body, { nonce: code });
    this.device.sub = String(data.sub);
    return { device_id: String(data.device_id), sub: this.device.sub };
  }

  /** The pending sign-in requests (each gets a new exchange id from the server). */
  async pushes(): Promise<Push[]> {
    const data = await this.call(INBOX_PATH, this.ids());
    return (data.pushes as Record<string, unknown>[]).map((p) => {
      const exchange = p.exchange_id as { exchange_id: string; expires_at: string };
      const context = (p.context ?? {}) as Record<string, unknown>;
      const requested = typeof context.requested_at === 'string' ? new Date(context.requested_at) : null;
      return {
        pushId: String(p.push_id),
        method: String(p.method),
        state: String(p.state),
        exchangeId: String(exchange.exchange_id),
        challenge: String(p.challenge),
        context,
        requestedAt: requested && !Number.isNaN(requested.getTime()) ? requested : null,
        expiresAt: new Date(exchange.expires_at),
      };
    });
  }

  /** The user opened the request: the answer says which app, browser and place it came from. */
  async acknowledge(push: Push): Promise<{ context: Record<string, unknown> }> {
    const data = await this.step(push, 'acknowledge');
    return { context: (data.context ?? {}) as Record<string, unknown> };
  }

  /**
   * The user approved. For PUSH the answer says how many digits the number has that the user
   * must now type (the one the login page shows); the device is never told the number itself.
   */
  async allow(push: Push): Promise<{ numberDigits: number | null }> {
    const data = await this.step(push, 'allow');
    return { numberDigits: typeof data.number_digits === 'number' ? data.number_digits : null };
  }

  async deny(push: Push, reason = 'user_denied'): Promise<void> {
    await this.step(push, 'deny', { reason });
  }

  async cancel(push: Push): Promise<void> {
    await this.step(push, 'cancel');
  }

  /**
   * Completes the method: `passCode` is the number typed (PUSH) or the pattern (PATTERN); a
   * `photo` for FACE; `uv` claims the biometric unlock (default: when the key is biometric-bound).
   */
  async verify(
    push: Push,
    opts: { passCode?: string; photo?: Photo; uv?: boolean } = {},
  ): Promise<{ status_id: string; sub: string }> {
    const path = `/verification-srv/authentication/${encodeURIComponent(push.method)}/verification`;
    const fields = { ...this.pushFields(push), ...(opts.passCode !== undefined ? { pass_code: opts.passCode } : {}) };
    const files = opts.photo ? [{ name: 'photo', bytes: opts.photo.bytes, type: opts.photo.type }] : [];
    const data = await this.call(path, fields, {
      nonce: push.challenge,
      uv: opts.uv ?? this.device.biometric,
      files,
    });
    return { status_id: String(data.status_id), sub: String(data.sub) };
  }

  /**
   * Opens, approves and completes a request in one go, as a user would: for PUSH, `number` is
   * what they type (the number the login page shows). It goes on from where the request is, so
   * `approve` after `ack` (or `allow`) does the steps left.
   */
  async approve(push: Push, opts: { number?: number | string; passCode?: string; photo?: Photo } = {}) {
    if (push.state === 'INITIATED') await this.acknowledge(push);
    const { numberDigits } = push.state === 'ALLOWED' ? { numberDigits: null } : await this.allow(push);
    if (numberDigits !== null && opts.number === undefined && opts.passCode === undefined)
      throw new Error(`type the ${numberDigits}-digit number the sign-in page shows`);
    const passCode = opts.passCode ?? (opts.number !== undefined ? String(opts.number) : undefined);
    return this.verify(push, {
      ...(passCode !== undefined ? { passCode } : {}),
      ...(opts.photo ? { photo: opts.photo } : {}),
    });
  }

  // ─────────────── the wire ───────────────

  private ids() {
    return { device_id: this.device.deviceId, client_id: this.device.clientId };
  }

  private pushFields(push: Push) {
    return { exchange_id: push.exchangeId, push_id: push.pushId, ...this.ids() };
  }

  private async step(push: Push, step: string, extra: Record<string, string> = {}) {
    const path = `/verification-srv/authentication/${encodeURIComponent(push.method)}/push/${step}`;
    const data = await this.call(path, { ...this.pushFields(push), ...extra }, { nonce: push.challenge });
    const next = data.exchange_id as { exchange_id?: string } | undefined;
    if (next?.exchange_id) push.exchangeId = next.exchange_id;
    if (typeof data.status === 'string') push.state = data.status;
    return data;
  }

  /** One signed POST: JSON, or multipart when there are files. Answers the envelope's `data`. */
  private async call(
    path: string,
    fields: Record<string, unknown>,
    opts: { nonce?: string; uv?: boolean; files?: FilePart[] } = {},
  ): Promise<Record<string, unknown>> {
    if (!this.device.issuer) throw new Error('this device is not bound yet');
    const issuerPath = new URL(this.device.issuer).pathname.replace(/\/$/, '');
    const files = opts.files ?? [];
    const proof = await deviceProof({
      key: await this.signingKey(),
      alg: this.device.alg,
      deviceId: this.device.deviceId,
      issuer: this.device.issuer,
      path: issuerPath + path,
      body: canonicalBody(fields, files),
      ...(opts.nonce !== undefined ? { nonce: opts.nonce } : {}),
      ...(opts.uv ? { uv: true } : {}),
      iat: Math.floor(this.now().getTime() / 1000),
    });
    let body: string | FormData;
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': USER_AGENT,
      'Device-Proof': proof,
    };
    if (files.length) {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.append(name, String(value));
      for (const f of files)
        form.append(f.name, new Blob([f.bytes], { type: f.type }), `${f.name}.${f.type.split('/')[1]}`);
      body = form;
    } else {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(fields);
    }
    // The issuer's URL (its path included), unless the device talks to the server another way.
    const base = (this.device.server ?? this.device.issuer).replace(/\/$/, '');
    const response = await fetch(base + path, { method: 'POST', headers, body });
    const payload = (await response.json().catch(() => null)) as {
      success?: boolean;
      data?: Record<string, unknown>;
      error?: { code?: string; error?: string };
    } | null;
    if (payload?.success) return payload.data ?? {};
    throw new DeviceCallError(
      response.status,
      payload?.error?.code ?? `HTTP_${response.status}`,
      payload?.error?.error ?? response.statusText,
    );
  }

  private async signingKey(): Promise<CryptoKey | KeyObject> {
    this.key ??= (await importJWK(this.device.privateJwk, this.device.alg)) as CryptoKey | KeyObject;
    return this.key;
  }
}
