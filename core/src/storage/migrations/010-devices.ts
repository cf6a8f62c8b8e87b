import { DataTypes } from 'sequelize';
import type { Migration } from '../migration.js';

/**
 * Authenticator devices (docs/devices.md). `devices` holds each bound app install with its
 * public key; `exchanges.medium_id` ties a push to its device (a removed device ends its pushes),
 * `exchanges.status_seal` keeps the status_id of an exchange whose id was rotated by a device
 * step (encrypted: a database reader learns nothing usable), and `credentials.device_id` ties
 * what was set up on a device (a pattern) to it, so it goes with the device.
 * `verification_statuses.single_factor` marks a proof that completes a whole login (FACE).
 */
export const m010Devices: Migration = {
  name: '010-devices',
  async up({ context: qi }) {
    await qi.createTable('devices', {
      id: { type: DataTypes.STRING(128), primaryKey: true, allowNull: false },
      user_id: { type: DataTypes.STRING(36), allowNull: false },
      client_id: { type: DataTypes.STRING(128), allowNull: false },
      name: { type: DataTypes.STRING(128), allowNull: false },
      public_key: { type: DataTypes.TEXT, allowNull: false },
      alg: { type: DataTypes.STRING(16), allowNull: false },
      biometric: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      push_token: { type: DataTypes.TEXT, allowNull: true },
      created_at: { type: DataTypes.BIGINT, allowNull: false },
      last_used_at: { type: DataTypes.BIGINT, allowNull: true },
    });
    await qi.addIndex('devices', ['user_id']);
    await qi.addColumn('exchanges', 'medium_id', { type: DataTypes.STRING(128), allowNull: true });
    await qi.addColumn('exchanges', 'status_seal', { type: DataTypes.TEXT, allowNull: true });
    await qi.addIndex('exchanges', ['medium_id']);
    await qi.addColumn('credentials', 'device_id', { type: DataTypes.STRING(128), allowNull: true });
    await qi.addIndex('credentials', ['device_id']);
    await qi.addColumn('verification_statuses', 'single_factor', {
      type: DataTypes.BOOLEAN,
      allowNull: false,
      defaultValue: false,
    });
  },
  async down({ context: qi }) {
    await qi.removeColumn('verification_statuses', 'single_factor');
    await qi.removeIndex('credentials', ['device_id']);
    await qi.removeColumn('credentials', 'device_id');
    await qi.removeIndex('exchanges', ['medium_id']);
    await qi.removeColumn('exchanges', 'status_seal');
    await qi.removeColumn('exchanges', 'medium_id');
    await qi.dropTable('devices');
  },
};
