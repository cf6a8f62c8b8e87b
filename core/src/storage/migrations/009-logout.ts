import { DataTypes } from 'sequelize';
import type { Migration } from '../migration.js';

/**
 * Logout. `sessions.sid` names a browser's sign-in as apps see it (the `sid` of ID and logout
 * tokens): it stays when the session cookie is renewed by a step-up of the same user, while the
 * row id (the cookie's hash) changes. `session_clients` lists the apps that received a code or
 * tokens in a session: who gets a back-channel logout notice when it ends.
 */
export const m009Logout: Migration = {
  name: '009-logout',
  async up({ context: qi }) {
    await qi.addColumn('sessions', 'sid', { type: DataTypes.STRING(64), allowNull: true });
    await qi.sequelize.query('UPDATE sessions SET sid = id WHERE sid IS NULL');
    await qi.addIndex('sessions', ['sid']);
    await qi.createTable('session_clients', {
      sid: { type: DataTypes.STRING(64), primaryKey: true, allowNull: false },
      client_id: { type: DataTypes.STRING(255), primaryKey: true, allowNull: false },
      expires_at: { type: DataTypes.BIGINT, allowNull: false },
    });
  },
  async down({ context: qi }) {
    await qi.dropTable('session_clients');
    await qi.removeIndex('sessions', ['sid']);
    await qi.removeColumn('sessions', 'sid');
  },
};
