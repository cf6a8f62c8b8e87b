import { DataTypes } from 'sequelize';
import type { Migration } from '../migration.js';

export const m001Users: Migration = {
  name: '001-users',
  async up({ context: qi }) {
    await qi.createTable('users', {
      id: { type: DataTypes.STRING(36), primaryKey: true, allowNull: false },
      username: { type: DataTypes.STRING(255), allowNull: false, unique: true },
      email: { type: DataTypes.STRING(320), allowNull: true, unique: true },
      phone: { type: DataTypes.STRING(32), allowNull: true, unique: true },
      status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'active' },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
  },
  async down({ context: qi }) {
    await qi.dropTable('users');
  },
};
