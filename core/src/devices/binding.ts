import { DEVICE_API_PATHS } from '@gatehouse-auth/plugin-api';
import type { Clock, JsonObject, RecordStore, RequestFacts, Services, UserRecord } from '@gatehouse-auth/plugin-api';
import QRCode from 'qrcode';
import type { AssertionReplayStore } from '../oauth/assertions.js';
import { sha256 } from '../util/crypto.js';
import { verificationError } from '../verification/errors.js';
import { BINDING_CODE, type BindBody } from './bodies.js';
import { canonicalBody, checkDeviceProof, keyAlgorithm, publicJwk } from './proof.js';
import type { DeviceStore } from './store.js';

/** How long a binding code (the QR code) is good for. */
const BINDING_TTL_SECONDS = 600;

/**
 * Binding an authenticator app install to a user (docs/devices.md, "Binding a device"): a
 * single-use code shown as a QR code where the user is signed in, then the app's signed call
 * with its new public key.
 */
export class DeviceBinding {
  constructor(
    private readonly deps: {
      issuer: string;
      devices: DeviceStore;
      /** Pending bindings by the hash of their code. */
      pending: RecordStore;
      replay: AssertionReplayStore;
      services: Services;
      clock: Clock;
    },
  ) {}

  /** A new binding code for `user`, with the link and QR code to show them. */
  async start(user: UserRecord, opts: { biometric: boolean }): Promise<JsonObject> {
    const code = this.deps.services.crypto.randomToken(32);
    const expiresAt = new Date(this.deps.clock.now().getTime() + BINDING_TTL_SECONDS * 1000);
    // Kept past its expiry, so a late app is told it expired rather than that it never was.
    await this.deps.pending.put(
      sha256(code),
      { user_id: user.id, biometric: opts.biometric, expires_at: expiresAt.getTime() },
      { ttlSeconds: BINDING_TTL_SECONDS * 6 },
    );
    const link = this.linkFor(code);
    return {
      binding_code: code,
      binding_url: link,
      qr_code: await QRCode.toDataURL(link),
      expires_at: expiresAt.toISOString(),
      biometric_required: opts.biometric,
    };
  }

  /**
   * The link of a live binding code and its QR code, for the page the link opens in a browser
   * (scanned from there by the app); null for a code that is unknown, used or expired.
   */
  async linkOf(code: unknown): Promise<{ link: string; qr: string } | null> {
    if (typeof code !== 'string' || !BINDING_CODE.test(code)) return null;
    const pending = await this.deps.pending.get(sha256(code));
    if (!pending || Number(pending.data.expires_at) <= this.deps.clock.now().getTime()) return null;
    const link = this.linkFor(code);
    return { link, qr: await QRCode.toDataURL(link) };
  }

  private linkFor(code: string): string {
    return `${this.deps.issuer}${DEVICE_API_PATHS.bindingLink}?code=${encodeURIComponent(code)}`;
  }

  /**
   * The app's call, its body checked against `DEVICE_BODIES.bind` (`DevicesWeb.bind` does that,
   * and hands over the body as it came, which the proof signs): checks the code, the key and the proof
   * made with it, then binds the device.
   */
  async complete(body: BindBody, proof: string | undefined, path: string, request: RequestFacts) {
    const { code, device_id: deviceId, client_id: clientId } = body;
    const name = body.name.trim();
    const alg = keyAlgorithm(body.public_key)!; // the schema refused any other key
    const pushToken = body.push_token ?? null;

    const pending = await this.deps.pending.get(sha256(code));
    if (!pending) throw verificationError('BINDING_INVALID');
    if (Number(pending.data.expires_at) <= this.deps.clock.now().getTime()) throw verificationError('BINDING_EXPIRED');
    const biometric = body.biometric === true;
    if (pending.data.biometric === true && !biometric) {
      throw verificationError('INVALID_FIELD', 'this binding needs a key bound to a biometric unlock', {
        fields: ['biometric'],
      });
    }
    const publicKey = publicJwk(body.public_key);
    const checked = await checkDeviceProof(
      proof,
      { deviceId, publicKey, alg, biometric },
      { htu: path, nonce: code, body: canonicalBody(body) },
      { issuer: this.deps.issuer, now: this.deps.clock.now(), replay: this.deps.replay },
    );
    if (!checked.ok) throw verificationError('DEVICE_PROOF_INVALID', undefined, { reason: checked.reason });
    // Single use, decided by the store: of two apps racing with one code, one binds.
    if (!(await this.deps.pending.consume(sha256(code)))) throw verificationError('BINDING_INVALID');
    const userId = String(pending.data.user_id);
    const bound = await this.deps.devices.add({
      deviceId,
      userId,
      clientId,
      name,
      publicKey,
      alg,
      biometric,
      pushToken,
    });
    if (!bound) throw verificationError('DEVICE_EXISTS');
    await this.deps.services.events.record({
      type: 'device.bound',
      key: deviceId,
      userId,
      ip: request.ip,
      data: { name, biometric, alg },
    });
    return { device_id: deviceId, sub: userId, name, issuer: this.deps.issuer };
  }
}
