import type { Migration } from '../migration.js';

/**
 * Revoking a token revokes the access tokens exchanged from it (RFC 8693), found by
 * `parent_id`. The index is partial: most tokens have no parent, and an index entry for each of
 * them would slow every token insert for nothing.
 */
export const m005TokenParents: Migration = {
  name: '005-token-parents',
  async up({ context: qi }) {
    await qi.sequelize.query(
      'CREATE INDEX oauth_tokens_parent_id ON oauth_tokens (parent_id) WHERE parent_id IS NOT NULL',
    );
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP INDEX oauth_tokens_parent_id');
  },
};
