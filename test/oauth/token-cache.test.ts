/**
 * Issue 15: introspection answers active tokens from memory, and a revocation on one node is
 * seen on another at once (PostgreSQL LISTEN/NOTIFY), including in the millisecond after the
 * revocation's answer. Plus the cache's own rules: bounded, expiring, race-safe.
 */
import { expect } from 'chai';
import { FakeClock } from '@gatehouse-auth/testing';
import { ActiveTokenCache } from '@gatehouse-auth/core';
import { withPostgresDatabase } from '../support/postgres.js';
import {
  MACHINE,
  WEB,
  basic,
  clientKey,
  introspect,
  machineToken,
  obtainCode,
  postForm,
  redeem,
  startServer,
  type OAuthServer,
} from './support.js';

type Sql = OAuthServer['gatehouse']['container']['cradle']['sql'];

/** Counts the token lookups a server makes in its database. */
function countTokenReads(sql: Sql): { readonly n: number } {
  const counter = { n: 0 };
  const one = sql.one.bind(sql);
  sql.one = ((text: string, params?: Record<string, unknown>) => {
    if (text.includes('FROM oauth_tokens')) counter.n++;
    return one(text, params);
  }) as Sql['one'];
  return counter;
}

const revoke = (server: OAuthServer, token: string, client = MACHINE) =>
  postForm(server, '/oauth2/revoke/', { token }, basic(client.id, client.secret));

describe('token cache: introspection without a database round trip (issue 15)', function () {
  describe('ActiveTokenCache', function () {
    const clock = new FakeClock(new Date('2026-01-01T00:00:00Z'));
    const info = (key: string, grantId: string, subject: string | null, ttlSeconds = 60) => ({
      active: true,
      token: {
        key,
        kind: 'access' as const,
        grantId,
        clientId: 'c',
        subject,
        scope: [],
        data: {},
        createdAt: clock.now(),
        expiresAt: new Date(clock.now().getTime() + ttlSeconds * 1000),
        revokedAt: null,
        rotatedAt: null,
        parentKey: null,
      },
    });

    it('keeps at most max_entries, dropping the oldest', function () {
      const cache = new ActiveTokenCache(2, 60_000, clock);
      for (const k of ['a', 'b', 'c']) cache.set(k, info(k, 'g', null), cache.generation);
      expect(cache.size).to.equal(2);
      expect(cache.get('a')).to.equal(null);
      expect(cache.get('c')?.token?.key).to.equal('c');
    });

    it('forgets a token at its expiry and after max_age', function () {
      const cache = new ActiveTokenCache(10, 30_000, clock);
      cache.set('short', info('short', 'g', null, 10), cache.generation);
      cache.set('long', info('long', 'g', null, 3600), cache.generation);
      clock.advance(11);
      expect(cache.get('short')).to.equal(null);
      expect(cache.get('long')).to.not.equal(null);
      clock.advance(20);
      expect(cache.get('long')).to.equal(null);
    });

    it('does not cache a read that raced a revocation, nor inactive or refresh tokens', function () {
      const cache = new ActiveTokenCache(10, 60_000, clock);
      const before = cache.generation;
      cache.invalidate({ keys: ['x'] });
      cache.set('x', info('x', 'g', null), before);
      expect(cache.get('x')).to.equal(null);
      cache.set('y', { ...info('y', 'g', null), active: false }, cache.generation);
      const refresh = info('z', 'g', null);
      cache.set('z', { ...refresh, token: { ...refresh.token, kind: 'refresh' as const } }, cache.generation);
      expect(cache.size).to.equal(0);
    });

    it('drops by key, by grant and by subject; off drops all and caches nothing', function () {
      const cache = new ActiveTokenCache(10, 60_000, clock);
      const fill = () => {
        for (const [k, g, s] of [
          ['k1', 'g1', 'alice'],
          ['k2', 'g2', 'bob'],
          ['k3', 'g3', null],
        ] as const)
          cache.set(k, info(k, g, s), cache.generation);
      };
      fill();
      cache.invalidate({ grants: ['g2'] });
      cache.invalidate({ subjects: ['alice'] });
      expect([cache.get('k1'), cache.get('k2')]).to.deep.equal([null, null]);
      expect(cache.get('k3')).to.not.equal(null);
      cache.invalidate({ keys: ['k3'] });
      expect(cache.size).to.equal(0);
      cache.setEnabled(false);
      fill();
      expect(cache.size).to.equal(0);
      cache.setEnabled(true);
      fill();
      expect(cache.size).to.equal(3);
    });
  });

  describe('one node', function () {
    let server: OAuthServer;
    before(async () => (server = await startServer()));
    after(() => server?.close());

    it('introspects an active token twice with one database read; a revoked one is inactive at once', async function () {
      const reads = countTokenReads(server.gatehouse.container.cradle.sql);
      const token = (await machineToken(server)).body.access_token as string;
      expect((await introspect(server, token, MACHINE)).active).to.equal(true);
      const after1 = reads.n;
      expect((await introspect(server, token, MACHINE)).active).to.equal(true);
      expect(reads.n).to.equal(after1);
      expect((await revoke(server, token)).status).to.equal(200);
      expect(await introspect(server, token, MACHINE)).to.deep.equal({ active: false });
    });
  });

  describe('two nodes on one PostgreSQL database', function () {
    const db = withPostgresDatabase();
    let a: OAuthServer;
    let b: OAuthServer;
    before(async function () {
      this.timeout(30_000);
      const key = await clientKey();
      a = await startServer({ databaseUrl: db.url, key });
      b = await startServer({ databaseUrl: db.url, key });
    });
    after(async () => {
      await a?.close();
      await b?.close();
    });

    it('a token revoked on A introspects inactive on B in the next millisecond, 50 times out of 50', async function () {
      this.timeout(60_000);
      const readsOnB = countTokenReads(b.gatehouse.container.cradle.sql);
      const stale: number[] = [];
      for (let i = 0; i < 50; i++) {
        const token = (await machineToken(a)).body.access_token as string;
        expect((await introspect(b, token, MACHINE)).active).to.equal(true);
        const cachedReads = readsOnB.n;
        expect((await introspect(b, token, MACHINE)).active, 'cached on B').to.equal(true);
        expect(readsOnB.n, 'the second introspection on B read no token row').to.equal(cachedReads);
        expect((await revoke(a, token)).status).to.equal(200);
        if ((await introspect(b, token, MACHINE)).active !== false) stale.push(i);
      }
      expect(stale).to.deep.equal([]);
    });

    it("revoking a refresh token on A ends its grant's access tokens on B", async function () {
      const user = await a.user('cache');
      const res = await redeem(a, await obtainCode(a, user, { scope: 'openid offline_access' }));
      const tokens = res.body as Record<string, string>;
      expect((await introspect(b, tokens.access_token!)).active).to.equal(true);
      expect((await revoke(a, tokens.refresh_token!, WEB)).status).to.equal(200);
      expect(await introspect(b, tokens.access_token!)).to.deep.equal({ active: false });
    });

    it("signing a user out everywhere on A (admin) ends the user's tokens cached on B", async function () {
      const user = await a.user('cache-subject');
      const tokens = (await redeem(a, await obtainCode(a, user, { scope: 'openid' }))).body as Record<string, string>;
      expect((await introspect(b, tokens.access_token!)).active).to.equal(true);
      await a.gatehouse.container.cradle.tokens.revokeSubject(user.id, 'test');
      expect(await introspect(b, tokens.access_token!)).to.deep.equal({ active: false });
    });

    it('while the listeners are cut off, caches are off and a revocation is still seen; then they reconnect', async function () {
      this.timeout(20_000);
      const cache = b.gatehouse.container.cradle.tokenCache;
      const token = (await machineToken(a)).body.access_token as string;
      await introspect(b, token, MACHINE);
      expect(cache.size).to.be.greaterThan(0);
      await a.gatehouse.container.cradle.sql.exec(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = 'gatehouse-peer-bus'`,
      );
      await until(() => !cache.caching);
      expect(cache.size).to.equal(0);
      expect((await revoke(a, token)).status).to.equal(200);
      expect(await introspect(b, token, MACHINE)).to.deep.equal({ active: false });
      await until(() => cache.caching);
    });
  });
});

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
