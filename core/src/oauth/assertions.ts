import type { Clock } from '@gatehouse-auth/plugin-api';
import { uniqueViolation } from '../storage/drivers.js';
import type { Sql } from '../storage/sql.js';
import { sha256 } from '../util/crypto.js';

/**
 * Single use of assertion ids (client-assertion `jti`, JWT-bearer `jti`, SAML assertion ID):
 * the first insert wins, a replay finds the row. Kept until the assertion would expire anyway.
 */
export class AssertionReplayStore {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  /** True the first time `namespace:id` is seen; false on every replay. */
  async use(namespace: string, id: string, expiresAt: Date): Promise<boolean> {
    const now = this.clock.now().getTime();
    try {
      // The primary key decides: a second insert of the same id fails, on every node.
      await this.sql.exec(`INSERT INTO oauth_assertions (id, expires_at) VALUES (:key, :expires)`, {
        // An expired assertion is refused by its own exp check; keep the row a little longer than that.
        key: sha256(`${namespace}:${id}`),
        expires: Math.max(expiresAt.getTime(), now) + 600_000,
      });
      return true;
    } catch (err) {
      if (uniqueViolation(err)) return false;
      throw err;
    }
  }
}
