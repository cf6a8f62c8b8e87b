import { DataTypes } from 'sequelize';
import type { Migration } from '../migration.js';

/**
 * Counters that every node shares (the `/authorize` per-address limit, the one-notice-per-interval
 * claim): one row per key and window, counted with an upsert. A plugin's `sharedCounters` (Redis)
 * takes their place when listed.
 */
export const m011RateWindows: Migration = {
  name: '011-rate-windows',
  async up({ context: qi }) {
    await qi.createTable('rate_windows', {
      key: { type: DataTypes.STRING(128), primaryKey: true, allowNull: false },
      count: { type: DataTypes.INTEGER, allowNull: false },
      expires_at: { type: DataTypes.BIGINT, allowNull: false },
    });
    await qi.addIndex('rate_windows', ['expires_at']);
  },
  async down({ context: qi }) {
    await qi.dropTable('rate_windows');
  },
};
