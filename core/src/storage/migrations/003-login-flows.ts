import { DataTypes } from 'sequelize';
import type { Migration } from '../migration.js';

/**
 * Login flows (request_id), exchanges (exchange_id) and verification statuses (status_id).
 * Exchange and status ids are bearer handles: only their SHA-256 is stored. Times are epoch ms.
 */
export const m003LoginFlows: Migration = {
  name: '003-login-flows',
  async up({ context: qi }) {
    await qi.createTable('login_flows', {
      id: { type: DataTypes.STRING(64), primaryKey: true, allowNull: false },
      client_id: { type: DataTypes.STRING(255), allowNull: false },
      user_id: { type: DataTypes.STRING(36), allowNull: true },
      stage: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      stages: { type: DataTypes.TEXT, allowNull: false },
      amr: { type: DataTypes.TEXT, allowNull: false, defaultValue: '[]' },
      methods: { type: DataTypes.TEXT, allowNull: false, defaultValue: '[]' },
      status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'active' },
      auth_time: { type: DataTypes.BIGINT, allowNull: true },
      params: { type: DataTypes.TEXT, allowNull: false, defaultValue: '{}' },
      created_at: { type: DataTypes.BIGINT, allowNull: false },
      updated_at: { type: DataTypes.BIGINT, allowNull: false },
      expires_at: { type: DataTypes.BIGINT, allowNull: false },
    });
    await qi.addIndex('login_flows', ['expires_at']);

    await qi.createTable('verification_statuses', {
      id: { type: DataTypes.STRING(64), primaryKey: true, allowNull: false },
      flow_id: { type: DataTypes.STRING(64), allowNull: false },
      user_id: { type: DataTypes.STRING(36), allowNull: true },
      method: { type: DataTypes.STRING(32), allowNull: false },
      stage: { type: DataTypes.INTEGER, allowNull: false },
      state: { type: DataTypes.STRING(24), allowNull: false },
      amr: { type: DataTypes.TEXT, allowNull: false, defaultValue: '[]' },
      step_up: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      created_at: { type: DataTypes.BIGINT, allowNull: false },
      updated_at: { type: DataTypes.BIGINT, allowNull: false },
      expires_at: { type: DataTypes.BIGINT, allowNull: false },
      consumed_at: { type: DataTypes.BIGINT, allowNull: true },
    });
    await qi.addIndex('verification_statuses', ['flow_id']);

    await qi.createTable('exchanges', {
      id: { type: DataTypes.STRING(64), primaryKey: true, allowNull: false },
      flow_id: { type: DataTypes.STRING(64), allowNull: false },
      status_id: { type: DataTypes.STRING(64), allowNull: false },
      user_id: { type: DataTypes.STRING(36), allowNull: true },
      method: { type: DataTypes.STRING(32), allowNull: false },
      stage: { type: DataTypes.INTEGER, allowNull: false },
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      max_attempts: { type: DataTypes.INTEGER, allowNull: false },
      state: { type: DataTypes.TEXT, allowNull: false, defaultValue: '{}' },
      created_at: { type: DataTypes.BIGINT, allowNull: false },
      expires_at: { type: DataTypes.BIGINT, allowNull: false },
      used_at: { type: DataTypes.BIGINT, allowNull: true },
      /** Set when the exchange was superseded by a resend or burned by failures or FDS. */
      revoked_at: { type: DataTypes.BIGINT, allowNull: true },
      revoked_reason: { type: DataTypes.STRING(32), allowNull: true },
    });
    await qi.addIndex('exchanges', ['flow_id', 'stage', 'method']);
    await qi.addIndex('exchanges', ['expires_at']);
  },
  async down({ context: qi }) {
    await qi.dropTable('exchanges');
    await qi.dropTable('verification_statuses');
    await qi.dropTable('login_flows');
  },
};
