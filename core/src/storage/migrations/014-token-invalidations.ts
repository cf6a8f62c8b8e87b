import { DataTypes } from 'sequelize';
import type { Migration } from '../migration.js';

/**
 * Revocations as each SQLite node's token cache must apply them (decision 0089): a process the
 * peer bus does not reach (a command run from a shell on the same file) writes them here, and
 * every node reads what came after the last id it read. AUTOINCREMENT: an id is never used twice,
 * even after the purge deleted the newest rows, so a node's "after the last id" misses nothing.
 */
export const m014TokenInvalidations: Migration = {
  name: '014-token-invalidations',
  async up({ context: qi }) {
    await qi.createTable('token_invalidations', {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      origin: { type: DataTypes.STRING(32), allowNull: false },
      data: { type: DataTypes.TEXT, allowNull: false },
      expires_at: { type: DataTypes.BIGINT, allowNull: false },
    });
    await qi.addIndex('token_invalidations', ['expires_at']);
  },
  async down({ context: qi }) {
    await qi.dropTable('token_invalidations');
  },
};
