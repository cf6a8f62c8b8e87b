import { DataTypes } from 'sequelize';
import type { Migration } from '../migration.js';

/**
 * Every identifier a user signs in with (username, email, phone), lower case, in one table with
 * a primary key: a username can no longer equal another user's email or phone, and the
 * database refuses it even when two creations race. Existing users are copied in: usernames,
 * then emails, then phones, so where an earlier release let two collide the identifier goes to
 * the user the lookup picks (username before email before phone).
 */
export const m006UserIdentifiers: Migration = {
  name: '006-user-identifiers',
  async up({ context: qi }) {
    await qi.createTable('user_identifiers', {
      value: { type: DataTypes.STRING(320), primaryKey: true, allowNull: false },
      user_id: { type: DataTypes.STRING(36), allowNull: false },
    });
    await qi.addIndex('user_identifiers', ['user_id']);
    for (const column of ['username', 'email', 'phone']) {
      await qi.sequelize.query(
        `INSERT INTO user_identifiers (value, user_id)
         SELECT lower(${column}), id FROM users WHERE ${column} IS NOT NULL ORDER BY created_at, id
         ON CONFLICT (value) DO NOTHING`,
      );
    }
  },
  async down({ context: qi }) {
    await qi.dropTable('user_identifiers');
  },
};
