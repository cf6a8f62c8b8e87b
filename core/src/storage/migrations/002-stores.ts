import { DataTypes } from 'sequelize';
import type { Migration } from '../migration.js';

/** Credentials per user and method, the event log, and plugins' own records. Times are epoch milliseconds. */
export const m002Stores: Migration = {
  name: '002-stores',
  async up({ context: qi }) {
    await qi.createTable('credentials', {
      id: { type: DataTypes.STRING(36), primaryKey: true, allowNull: false },
      user_id: {
        type: DataTypes.STRING(36),
        allowNull: false,
        references: { model: 'users', key: 'id' },
        onDelete: 'CASCADE',
      },
      method: { type: DataTypes.STRING(32), allowNull: false },
      type: { type: DataTypes.STRING(32), allowNull: false },
      label: { type: DataTypes.STRING(255), allowNull: true },
      secret: { type: DataTypes.TEXT, allowNull: true },
      data: { type: DataTypes.TEXT, allowNull: false, defaultValue: '{}' },
      counter: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
      used_at: { type: DataTypes.BIGINT, allowNull: true },
      created_at: { type: DataTypes.BIGINT, allowNull: false },
    });
    await qi.addIndex('credentials', ['user_id', 'method', 'type']);

    await qi.createTable('events', {
      id: { type: DataTypes.STRING(36), primaryKey: true, allowNull: false },
      at: { type: DataTypes.BIGINT, allowNull: false },
      type: { type: DataTypes.STRING(64), allowNull: false },
      key: { type: DataTypes.STRING(128), allowNull: true },
      user_id: { type: DataTypes.STRING(36), allowNull: true },
      method: { type: DataTypes.STRING(32), allowNull: true },
      client_id: { type: DataTypes.STRING(255), allowNull: true },
      ip: { type: DataTypes.STRING(64), allowNull: true },
      outcome: { type: DataTypes.STRING(32), allowNull: true },
      reason: { type: DataTypes.STRING(255), allowNull: true },
      data: { type: DataTypes.TEXT, allowNull: false, defaultValue: '{}' },
    });
    await qi.addIndex('events', ['user_id', 'type', 'at']);
    await qi.addIndex('events', ['ip', 'type', 'at']);
    await qi.addIndex('events', ['key', 'type', 'at']);

    await qi.createTable('plugin_records', {
      plugin: { type: DataTypes.STRING(214), primaryKey: true, allowNull: false },
      key: { type: DataTypes.STRING(255), primaryKey: true, allowNull: false },
      data: { type: DataTypes.TEXT, allowNull: false },
      seq: { type: DataTypes.BIGINT, allowNull: false },
      created_at: { type: DataTypes.BIGINT, allowNull: false },
      expires_at: { type: DataTypes.BIGINT, allowNull: true },
    });
  },
  async down({ context: qi }) {
    await qi.dropTable('plugin_records');
    await qi.dropTable('events');
    await qi.dropTable('credentials');
  },
};
