import type { Migration } from '../migration.js';

/**
 * A token that stands alone (client credentials, implicit) is its own grant: its `grant_id` is
 * its own key, a random SHA-256 (decision 31's one-INSERT issue). The index on `grant_id` gave
 * each of them an entry at a random place in the index, one more random page written to the
 * WAL and copied by the checkpointer per token, for a lookup that never happens: grants are
 * revoked by the ids of grant rows, which never equal a token's key. The index is now partial
 * (issue 30), and the one query by `grant_id` (TokenService.revokeGrant) names its condition.
 */
export const m013StandaloneTokenIndex: Migration = {
  name: '013-standalone-token-index',
  async up({ context: qi }) {
    await qi.sequelize.query('DROP INDEX IF EXISTS oauth_tokens_grant_id');
    await qi.sequelize.query('CREATE INDEX oauth_tokens_grant_id ON oauth_tokens (grant_id) WHERE grant_id <> id');
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP INDEX oauth_tokens_grant_id');
    await qi.sequelize.query('CREATE INDEX oauth_tokens_grant_id ON oauth_tokens (grant_id)');
  },
};
