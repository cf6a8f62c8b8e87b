import { DataTypes } from 'sequelize';
import type { Migration } from '../migration.js';

/**
 * OAuth state: signing keys, grants (one per authorization; a refresh-token family), codes,
 * tokens, single-use assertion ids and browser sessions. Codes, tokens and session ids are
 * stored as SHA-256 only; private keys encrypted. Times are epoch ms.
 */
export const m004OAuth: Migration = {
  name: '004-oauth',
  async up({ context: qi }) {
    const t = DataTypes;
    await qi.createTable('signing_keys', {
      kid: { type: t.STRING(64), primaryKey: true, allowNull: false },
      alg: { type: t.STRING(16), allowNull: false },
      public_jwk: { type: t.TEXT, allowNull: false },
      private_sealed: { type: t.TEXT, allowNull: false },
      /** next → active → retired */
      state: { type: t.STRING(16), allowNull: false },
      created_at: { type: t.BIGINT, allowNull: false },
      activated_at: { type: t.BIGINT, allowNull: true },
      retired_at: { type: t.BIGINT, allowNull: true },
      /** A retired key is published until every token it signed has expired. */
      publish_until: { type: t.BIGINT, allowNull: true },
    });

    await qi.createTable('oauth_grants', {
      id: { type: t.STRING(64), primaryKey: true, allowNull: false },
      client_id: { type: t.STRING(255), allowNull: false },
      subject: { type: t.STRING(255), allowNull: true },
      scope: { type: t.TEXT, allowNull: false },
      data: { type: t.TEXT, allowNull: false, defaultValue: '{}' },
      created_at: { type: t.BIGINT, allowNull: false },
      expires_at: { type: t.BIGINT, allowNull: false },
      revoked_at: { type: t.BIGINT, allowNull: true },
      revoked_reason: { type: t.STRING(64), allowNull: true },
    });
    await qi.addIndex('oauth_grants', ['subject']);

    await qi.createTable('oauth_codes', {
      id: { type: t.STRING(64), primaryKey: true, allowNull: false },
      grant_id: { type: t.STRING(64), allowNull: false },
      client_id: { type: t.STRING(255), allowNull: false },
      data: { type: t.TEXT, allowNull: false },
      created_at: { type: t.BIGINT, allowNull: false },
      expires_at: { type: t.BIGINT, allowNull: false },
      used_at: { type: t.BIGINT, allowNull: true },
    });
    await qi.addIndex('oauth_codes', ['expires_at']);

    await qi.createTable('oauth_tokens', {
      id: { type: t.STRING(64), primaryKey: true, allowNull: false },
      kind: { type: t.STRING(16), allowNull: false },
      grant_id: { type: t.STRING(64), allowNull: false },
      client_id: { type: t.STRING(255), allowNull: false },
      subject: { type: t.STRING(255), allowNull: true },
      scope: { type: t.TEXT, allowNull: false },
      data: { type: t.TEXT, allowNull: false, defaultValue: '{}' },
      created_at: { type: t.BIGINT, allowNull: false },
      expires_at: { type: t.BIGINT, allowNull: false },
      revoked_at: { type: t.BIGINT, allowNull: true },
      /** Refresh tokens: when this one was exchanged for its successor. */
      rotated_at: { type: t.BIGINT, allowNull: true },
      parent_id: { type: t.STRING(64), allowNull: true },
    });
    await qi.addIndex('oauth_tokens', ['grant_id']);
    await qi.addIndex('oauth_tokens', ['expires_at']);

    await qi.createTable('oauth_assertions', {
      id: { type: t.STRING(64), primaryKey: true, allowNull: false },
      expires_at: { type: t.BIGINT, allowNull: false },
    });

    await qi.createTable('sessions', {
      id: { type: t.STRING(64), primaryKey: true, allowNull: false },
      user_id: { type: t.STRING(36), allowNull: false },
      data: { type: t.TEXT, allowNull: false, defaultValue: '{}' },
      created_at: { type: t.BIGINT, allowNull: false },
      expires_at: { type: t.BIGINT, allowNull: false },
      revoked_at: { type: t.BIGINT, allowNull: true },
    });
    await qi.addIndex('sessions', ['user_id']);
  },
  async down({ context: qi }) {
    for (const table of [
      'sessions',
      'oauth_assertions',
      'oauth_tokens',
      'oauth_codes',
      'oauth_grants',
      'signing_keys',
    ]) {
      await qi.dropTable(table);
    }
  },
};
