/**
 * Issue 30: a standalone token (client credentials) is its own grant, and the index on
 * oauth_tokens.grant_id leaves it out (migration 013): one random index page less per token
 * written and checkpointed. Revoking a grant still finds its tokens through that index, and never
 * touches a standalone token.
 */
import { expect } from 'chai';
import { introspect, machineToken, MACHINE, obtainCode, redeem, startServer, type OAuthServer } from './support.js';

const REVOKE_BY_GRANT =
  'UPDATE oauth_tokens SET revoked_at = :now WHERE grant_id = :id AND grant_id <> id AND revoked_at IS NULL';

describe('the grant_id index leaves standalone tokens out (issue 30)', function () {
  this.timeout(30_000);
  let server: OAuthServer;
  before(async () => (server = await startServer()));
  after(() => server?.close());

  it('is partial on SQLite, and revoking a grant uses it', async function () {
    const { sql } = server.gatehouse.container.cradle;
    if (sql.dialect !== 'sqlite') this.skip();
    const [index] = await sql.select<{ sql: string }>(
      `SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'oauth_tokens_grant_id'`,
    );
    expect(index?.sql).to.match(/WHERE grant_id <> id$/);
    const plan = await sql.select<{ detail: string }>(`EXPLAIN QUERY PLAN ${REVOKE_BY_GRANT}`, { now: 0, id: 'g' });
    expect(plan.map((p) => p.detail).join('; ')).to.include('USING INDEX oauth_tokens_grant_id');
  });

  it("revoking a grant revokes its access and refresh tokens, and no client's standalone token", async () => {
    const machine = await machineToken(server);
    expect(machine.status, machine.text).to.equal(200);
    const standalone = machine.body.access_token as string;
    const res = await redeem(server, await obtainCode(server, await server.user()));
    expect(res.status, res.text).to.equal(200);
    const { access_token: access, refresh_token: refresh } = res.body as Record<string, string>;
    const { tokens } = server.gatehouse.container.cradle;
    const grantId = (await tokens.inspect(access!)).token!.grantId;
    expect(grantId).to.not.equal((await tokens.inspect(standalone)).token!.key);

    await tokens.revokeGrant(grantId, 'revoked');
    expect((await introspect(server, access!)).active).to.equal(false);
    expect((await introspect(server, refresh!)).active).to.equal(false);
    expect((await introspect(server, standalone, MACHINE)).active).to.equal(true);
  });
});
