import type { OAuthServer, TestUser } from '../../../test/oauth/support.js';

/** Every row of any table that names the user (by id, username, email or phone): table → count. */
export async function rowsOf(
  server: Pick<OAuthServer, 'gatehouse'>,
  user: Pick<TestUser, 'id' | 'username' | 'email'>,
): Promise<Record<string, number>> {
  const { sql } = server.gatehouse.container.cradle as unknown as {
    sql: { select<T>(q: string, p?: Record<string, unknown>): Promise<T[]> };
  };
  const tables = [
    'users',
    'credentials',
    'events',
    'plugin_records',
    'login_flows',
    'verification_statuses',
    'exchanges',
    'oauth_grants',
    'oauth_codes',
    'oauth_tokens',
    'sessions',
    'user_identifiers',
    'devices',
    'jobs',
    'session_clients',
  ];
  const found: Record<string, number> = {};
  const needles = [user.id, user.username, user.email].filter(Boolean);
  for (const table of tables) {
    // The outbox channel keeps every message it "sent" (the deletion notice too) for its own
    // ttl, keyed by address: a development channel's retention, not the user's account.
    const rows = await sql.select<Record<string, unknown>>(
      table === 'plugin_records'
        ? `SELECT * FROM ${table} WHERE plugin <> '@gatehouse-auth/channel-outbox'`
        : `SELECT * FROM ${table}`,
    );
    const count = rows.filter((row) =>
      needles.some((n) => JSON.stringify(row).toLowerCase().includes(n.toLowerCase())),
    ).length;
    if (count) found[table] = count;
  }
  return found;
}
