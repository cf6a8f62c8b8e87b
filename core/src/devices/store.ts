import type { Clock, JsonObject } from '@gatehouse-auth/plugin-api';
import { dateOrNull, num, parseJson, type Sql } from '../storage/sql.js';
import type { SecretBox } from '../util/crypto.js';

/** An authenticator app install bound to a user (docs/devices.md). */
export interface Device {
  deviceId: string;
  userId: string;
  /** The app's own id; every call of the device must carry it. */
  clientId: string;
  name: string;
  /** The public JWK (EC P-256 or OKP Ed25519). */
  publicKey: JsonObject;
  alg: 'ES256' | 'EdDSA';
  /** The key signs only after a biometric unlock: the device can prove user verification. */
  biometric: boolean;
  /** Where a push provider reaches the app; null when it polls its inbox. */
  pushToken: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
}

interface DeviceRow {
  id: string;
  user_id: string;
  client_id: string;
  name: string;
  public_key: string;
  alg: string;
  biometric: unknown;
  push_token: string | null;
  created_at: unknown;
  last_used_at: unknown;
}

/** The bound devices. Push tokens are encrypted at rest; public keys need not be. */
export class DeviceStore {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly secretBox: SecretBox,
  ) {}

  private toDevice(r: DeviceRow): Device {
    return {
      deviceId: r.id,
      userId: r.user_id,
      clientId: r.client_id,
      name: r.name,
      publicKey: parseJson<JsonObject>(r.public_key),
      alg: r.alg === 'EdDSA' ? 'EdDSA' : 'ES256',
      biometric: r.biometric === true || r.biometric === 1 || r.biometric === '1',
      pushToken: r.push_token === null ? null : this.secretBox.decrypt(r.push_token),
      createdAt: new Date(num(r.created_at)),
      lastUsedAt: dateOrNull(r.last_used_at),
    };
  }

  /** Binds a device; false when its id is taken (the primary key decides, on every node). */
  async add(device: Omit<Device, 'createdAt' | 'lastUsedAt'>): Promise<boolean> {
    return this.sql.changed(
      `INSERT INTO devices (id, user_id, client_id, name, public_key, alg, biometric, push_token, created_at,
         last_used_at)
       VALUES (:id, :userId, :clientId, :name, :publicKey, :alg, :biometric, :pushToken, :now, NULL)
       ON CONFLICT (id) DO NOTHING RETURNING id`,
      {
        id: device.deviceId,
        userId: device.userId,
        clientId: device.clientId,
        name: device.name,
        publicKey: JSON.stringify(device.publicKey),
        alg: device.alg,
        biometric: device.biometric,
        pushToken: device.pushToken === null ? null : this.secretBox.encrypt(device.pushToken),
        now: this.clock.now().getTime(),
      },
    );
  }

  async find(deviceId: string): Promise<Device | null> {
    const row = await this.sql.one<DeviceRow>('SELECT * FROM devices WHERE id = :id', { id: deviceId });
    return row ? this.toDevice(row) : null;
  }

  /** The user's devices, the one used last first (then the one bound last). */
  async ofUser(userId: string): Promise<Device[]> {
    const rows = await this.sql.select<DeviceRow>(
      `SELECT * FROM devices WHERE user_id = :userId
       ORDER BY COALESCE(last_used_at, created_at) DESC, created_at DESC, id`,
      { userId },
    );
    return rows.map((r) => this.toDevice(r));
  }

  rename(userId: string, deviceId: string, name: string): Promise<boolean> {
    return this.sql.changed('UPDATE devices SET name = :name WHERE id = :deviceId AND user_id = :userId RETURNING id', {
      userId,
      deviceId,
      name,
    });
  }

  async touch(deviceId: string): Promise<void> {
    await this.sql.exec('UPDATE devices SET last_used_at = :now WHERE id = :deviceId', {
      deviceId,
      now: this.clock.now().getTime(),
    });
  }

  /** Removes the device and what was set up on it (credentials bound to it). */
  async remove(userId: string, deviceId: string): Promise<boolean> {
    return this.sql.tx(async (db) => {
      const params = { userId, deviceId };
      if (!(await db.changed('DELETE FROM devices WHERE id = :deviceId AND user_id = :userId RETURNING id', params)))
        return false;
      await db.exec('DELETE FROM credentials WHERE user_id = :userId AND device_id = :deviceId', params);
      return true;
    });
  }
}

/** A device as the setup API shows it: never the push token. */
export function publicDevice(d: Device): JsonObject {
  return {
    device_id: d.deviceId,
    name: d.name,
    client_id: d.clientId,
    biometric: d.biometric,
    alg: d.alg,
    created_at: d.createdAt.toISOString(),
    last_used_at: d.lastUsedAt?.toISOString() ?? null,
  };
}
