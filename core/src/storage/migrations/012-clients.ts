import { DataTypes } from 'sequelize';
import type { Migration } from '../migration.js';

/**
 * Apps registered at run time (the admin API, the CLI): an app's settings as the config's
 * `apps[]` entry has them (JSON, without any secret), its client secret only as a SHA-256
 * digest, and the previous digest while a rotation's overlap lasts (decision 0051). `revision`
 * counts the writes of a row: with the row count and the newest `updated_at` it is the change
 * marker every node polls.
 */
export const m012Clients: Migration = {
  name: '012-clients',
  async up({ context: qi }) {
    await qi.createTable('clients', {
      client_id: { type: DataTypes.STRING(255), primaryKey: true, allowNull: false },
      settings: { type: DataTypes.TEXT, allowNull: false },
      secret_sha256: { type: DataTypes.STRING(64), allowNull: true },
      previous_secret_sha256: { type: DataTypes.STRING(64), allowNull: true },
      previous_secret_expires_at: { type: DataTypes.BIGINT, allowNull: true },
      revision: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
      created_at: { type: DataTypes.BIGINT, allowNull: false },
      updated_at: { type: DataTypes.BIGINT, allowNull: false },
    });
    await qi.addIndex('oauth_grants', ['client_id']);
  },
  async down({ context: qi }) {
    await qi.removeIndex('oauth_grants', ['client_id']);
    await qi.dropTable('clients');
  },
};
