import { DataTypes } from 'sequelize';
import type { Migration } from '../migration.js';

/**
 * Background jobs (deliveries of one-time codes, back-channel logout notices): durable, retried
 * with back-off, claimed by one node at a time with a conditional update. The payload is
 * encrypted (a code's message is a secret); a job that succeeded is deleted.
 */
export const m008Jobs: Migration = {
  name: '008-jobs',
  async up({ context: qi }) {
    await qi.createTable('jobs', {
      id: { type: DataTypes.STRING(36), primaryKey: true, allowNull: false },
      kind: { type: DataTypes.STRING(64), allowNull: false },
      payload: { type: DataTypes.TEXT, allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'pending' },
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      max_attempts: { type: DataTypes.INTEGER, allowNull: false },
      next_at: { type: DataTypes.BIGINT, allowNull: false },
      locked_until: { type: DataTypes.BIGINT, allowNull: true },
      expires_at: { type: DataTypes.BIGINT, allowNull: false },
      last_error: { type: DataTypes.STRING(255), allowNull: true },
      created_at: { type: DataTypes.BIGINT, allowNull: false },
    });
    await qi.addIndex('jobs', ['status', 'next_at']);
  },
  async down({ context: qi }) {
    await qi.dropTable('jobs');
  },
};
