import { expect } from 'chai';
import type { OAuthError } from '@gatehouse-auth/core';
import { type GrantHandler, type OAuthClient, type TokenResponse } from '@gatehouse-auth/core';
import {
  fakeClient,
  fakeOAuth,
  fakeServices,
  grantContext,
  registerWithFakes,
  type FakeOAuth,
  type FakeServices,
  type Registered,
  expectOAuthError,
} from '@gatehouse-auth/testing';
import plugin, { authenticationOf } from '../src/index.js';

const AUTH_TIME = 1767268800;
const DAY = 24 * 3600;

interface Setup {
  services: FakeServices;
  oauth: FakeOAuth;
  handler: GrantHandler;
  client: OAuthClient;
  /** The first token response of the grant (as a code redemption would have issued it). */
  first: TokenResponse;
  grantId: string;
  records: Registered['records'];
}

async function setup(client: OAuthClient = fakeClient()): Promise<Setup> {
  const services = fakeServices();
  const oauth = fakeOAuth({
    clock: services.clock,
    users: [{ identifier: 'alice', userId: 'user-1', password: 'unused' }],
  });
  const { grants, records } = await registerWithFakes(plugin, {}, services);
  const first = await oauth.issue({
    client,
    subject: 'user-1',
    scope: ['openid', 'profile', 'offline_access'],
    grantType: 'authorization_code',
    refreshToken: true,
    grantData: { auth_time: AUTH_TIME, amr: ['pwd', 'otp'] },
  });
  oauth.issued.length = 0;
  const grantId = oauth.tokenRow(first.refresh_token!)!.grantId;
  return { services, oauth, handler: grants[0]!, client, first, grantId, records };
}

function refresh(s: Setup, params: Record<string, string | undefined>, client: OAuthClient = s.client) {
  return s.handler.handle(grantContext({ client, oauth: s.oauth, params }));
}

const active = async (s: Setup, token: string) => (await s.oauth.inspect(token)).active;

describe('@gatehouse-auth/grant-refresh-token', () => {
  it('registers one handler for refresh_token with its parameters', async () => {
    const { handler } = await setup();
    expect(handler.grantType).to.equal('refresh_token');
    expect(handler.parameters).to.deep.equal(['refresh_token', 'scope']);
  });

  describe('success', () => {
    it('rotates: issue() gets the same subject, scope and grant, the parent key and the login facts', async () => {
      const s = await setup();
      const rt1 = s.first.refresh_token!;
      const parentKey = s.oauth.tokenRow(rt1)!.key;
      const next = await refresh(s, { refresh_token: rt1 });

      expect(s.oauth.issued).to.deep.equal([
        {
          client: s.client,
          subject: 'user-1',
          scope: ['openid', 'profile', 'offline_access'],
          refreshScope: ['openid', 'profile', 'offline_access'],
          grantType: 'refresh_token',
          grantId: s.grantId,
          refreshToken: true,
          parentRefreshKey: parentKey,
          idToken: { authTime: AUTH_TIME, amr: ['pwd', 'otp'] },
        },
      ]);
      expect(next.refresh_token).to.be.a('string').and.not.equal(rt1);
      expect(s.oauth.tokenRow(rt1)!.rotatedAt).to.deep.equal(s.services.clock.now());
      expect(s.oauth.tokenRow(next.refresh_token!)!.parentKey).to.equal(parentKey);
      expect(await active(s, rt1)).to.equal(false);
      expect(await active(s, next.refresh_token!)).to.equal(true);
      expect(s.oauth.revocations).to.deep.equal([]);
    });

    it('a narrower scope is granted', async () => {
      const s = await setup();
      const next = await refresh(s, { refresh_token: s.first.refresh_token!, scope: 'profile' });
      expect(s.oauth.issued[0]!.scope).to.deep.equal(['profile']);
      expect(next.scope).to.equal('profile');
    });

    it('each successor keeps working until the grant’s absolute expiry, never past it', async () => {
      const s = await setup(fakeClient({ refreshTokenTtl: 30 * DAY }));
      s.services.clock.advance(20 * DAY);
      const rt2 = (await refresh(s, { refresh_token: s.first.refresh_token! })).refresh_token!;
      s.services.clock.advance(9 * DAY);
      const rt3 = (await refresh(s, { refresh_token: rt2 })).refresh_token!;
      s.services.clock.advance(DAY);
      const err = await expectOAuthError(refresh(s, { refresh_token: rt3 }), 'invalid_grant');
      expect(err.message).to.equal('refresh token expired or revoked');
      expect(s.oauth.tokenRow(rt3)!.rotatedAt).to.equal(null);
    });

    it('authenticationOf reads auth_time and amr from grant data and ignores malformed values', () => {
      expect(authenticationOf({ auth_time: 5, amr: ['pwd', 'otp'] })).to.deep.equal({
        authTime: 5,
        amr: ['pwd', 'otp'],
      });
      expect(authenticationOf({})).to.deep.equal({});
      expect(authenticationOf({ auth_time: '5', amr: ['pwd', 3] })).to.deep.equal({ amr: ['pwd'] });
    });
  });

  describe('failures', () => {
    it('no refresh_token → invalid_request', async () => {
      const s = await setup();
      await expectOAuthError(refresh(s, {}), 'invalid_request');
      await expectOAuthError(refresh(s, { refresh_token: '' }), 'invalid_request');
    });

    it('an unknown token or an access token → invalid_grant, nothing revoked', async () => {
      const s = await setup();
      await expectOAuthError(refresh(s, { refresh_token: 'unknown-token' }), 'invalid_grant');
      const err = await expectOAuthError(refresh(s, { refresh_token: s.first.access_token }), 'invalid_grant');
      expect(err.message).to.equal('invalid refresh token');
      expect(s.oauth.revocations).to.deep.equal([]);
      expect(await active(s, s.first.access_token)).to.equal(true);
    });

    it("client B presenting A's refresh token → invalid_grant, nothing rotated or revoked", async () => {
      const s = await setup();
      const rt1 = s.first.refresh_token!;
      const err = await expectOAuthError(
        refresh(s, { refresh_token: rt1 }, fakeClient({ clientId: 'client-b' })),
        'invalid_grant',
      );
      expect(err.message).to.equal('invalid refresh token');
      expect(s.oauth.revocations).to.deep.equal([]);
      expect(s.oauth.tokenRow(rt1)!.rotatedAt).to.equal(null);
      expect((await refresh(s, { refresh_token: rt1 })).access_token).to.be.a('string');
    });

    it("client B presenting A's rotated token revokes nothing", async () => {
      const s = await setup();
      const rt2 = (await refresh(s, { refresh_token: s.first.refresh_token! })).refresh_token!;
      await expectOAuthError(
        refresh(s, { refresh_token: s.first.refresh_token! }, fakeClient({ clientId: 'client-b' })),
        'invalid_grant',
      );
      expect(s.oauth.revocations).to.deep.equal([]);
      expect(await active(s, rt2)).to.equal(true);
    });

    it('reuse of RT1 after RT1 → RT2: invalid_grant, and RT2 and every access token of the grant die', async () => {
      const s = await setup();
      const rt1 = s.first.refresh_token!;
      const second = await refresh(s, { refresh_token: rt1 });
      s.services.clock.advance(1);
      const err = await expectOAuthError(refresh(s, { refresh_token: rt1 }), 'invalid_grant');
      expect(err.message).to.equal('refresh token already used');
      expect(s.oauth.revocations).to.deep.equal([{ grantId: s.grantId, reason: 'refresh_reuse' }]);
      expect(await active(s, second.refresh_token!)).to.equal(false);
      expect(await active(s, second.access_token)).to.equal(false);
      expect(await active(s, s.first.access_token)).to.equal(false);
      await expectOAuthError(refresh(s, { refresh_token: second.refresh_token! }), 'invalid_grant');
      expect(s.oauth.issued).to.have.length(1);
    });

    it('reuse of RT1 after RT3 exists revokes the family (no grace period for older ancestors)', async () => {
      const s = await setup();
      const rt2 = (await refresh(s, { refresh_token: s.first.refresh_token! })).refresh_token!;
      const third = await refresh(s, { refresh_token: rt2 });
      await expectOAuthError(refresh(s, { refresh_token: s.first.refresh_token! }), 'invalid_grant');
      expect(s.oauth.revocations).to.deep.equal([{ grantId: s.grantId, reason: 'refresh_reuse' }]);
      expect(await active(s, third.refresh_token!)).to.equal(false);
      expect(await active(s, third.access_token)).to.equal(false);
    });

    it('two concurrent refreshes with one token: one succeeds, the other revokes the grant', async () => {
      const s = await setup();
      const params = { refresh_token: s.first.refresh_token! };
      const results = await Promise.allSettled([refresh(s, params), refresh(s, params)]);
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
      expect(rejected).to.have.length(1);
      expect((rejected[0]!.reason as OAuthError).code).to.equal('invalid_grant');
      expect(s.oauth.revocations).to.deep.equal([{ grantId: s.grantId, reason: 'refresh_reuse' }]);
    });

    it('a revoked grant → invalid_grant without another revocation', async () => {
      const s = await setup();
      await s.oauth.grants.revoke(s.grantId, 'logout');
      const err = await expectOAuthError(refresh(s, { refresh_token: s.first.refresh_token! }), 'invalid_grant');
      expect(err.message).to.equal('refresh token expired or revoked');
      expect(s.oauth.revocations).to.deep.equal([{ grantId: s.grantId, reason: 'logout' }]);
      expect(s.oauth.issued).to.deep.equal([]);
    });

    it('a refresh token past the absolute expiry → invalid_grant, not rotated', async () => {
      const s = await setup(fakeClient({ refreshTokenTtl: 3600 }));
      s.services.clock.advance(3600);
      await expectOAuthError(refresh(s, { refresh_token: s.first.refresh_token! }), 'invalid_grant');
      expect(s.oauth.tokenRow(s.first.refresh_token!)!.rotatedAt).to.equal(null);
      expect(s.oauth.revocations).to.deep.equal([]);
    });

    it('a wider scope → invalid_scope, the token is not rotated', async () => {
      const s = await setup();
      const rt1 = s.first.refresh_token!;
      for (const scope of ['openid admin', 'email', 'openid "x"']) {
        await expectOAuthError(refresh(s, { refresh_token: rt1, scope }), 'invalid_scope');
      }
      expect(s.oauth.tokenRow(rt1)!.rotatedAt).to.equal(null);
      expect(s.oauth.issued).to.deep.equal([]);
    });

    it('the successor keeps the original scope (RFC 6749 §6): a later refresh may ask for it again, never more', async () => {
      const s = await setup();
      const rt2 = (await refresh(s, { refresh_token: s.first.refresh_token!, scope: 'openid' })).refresh_token!;
      expect(s.oauth.issued[0]!.refreshScope).to.deep.equal(['openid', 'profile', 'offline_access']);
      const third = await refresh(s, { refresh_token: rt2, scope: 'openid profile' });
      expect(third.scope).to.equal('openid profile');
      const rt3 = third.refresh_token!;
      await expectOAuthError(refresh(s, { refresh_token: rt3, scope: 'openid email' }), 'invalid_scope');
    });

    it('a subject that is no longer active ends the family: invalid_grant and the grant is revoked', async () => {
      const services = fakeServices();
      const s = await setup();
      void services;
      const disabled = fakeOAuth({
        clock: s.services.clock,
        users: [{ identifier: 'alice', userId: 'user-1', password: 'unused', status: 'disabled' }],
      });
      const grant = disabled.createGrant({
        clientId: s.client.clientId,
        subject: 'user-1',
        scope: ['openid'],
        ttlSeconds: 3600,
      });
      const first = await disabled.issue({
        client: s.client,
        subject: 'user-1',
        scope: ['openid'],
        grantType: 'authorization_code',
        grantId: grant.id,
        refreshToken: true,
      });
      await expectOAuthError(
        s.handler.handle(
          grantContext({ client: s.client, oauth: disabled, params: { refresh_token: first.refresh_token! } }),
        ),
        'invalid_grant',
      );
      expect(disabled.revocations).to.deep.equal([{ grantId: grant.id, reason: 'subject_inactive' }]);
    });
  });

  describe('reuse interval (app setting refresh_token_reuse_interval)', () => {
    const withInterval = (seconds: number) => fakeClient({ settings: { refresh_token_reuse_interval: seconds } });

    it('two tabs at once with one token: both get the same new pair, nothing revoked', async () => {
      const s = await setup(withInterval(10));
      const params = { refresh_token: s.first.refresh_token! };
      const [a, b] = await Promise.all([refresh(s, params), refresh(s, params)]);
      expect(b).to.deep.equal(a);
      expect(s.oauth.issued).to.have.length(1);
      expect(s.oauth.revocations).to.deep.equal([]);
      expect(await active(s, a.refresh_token!)).to.equal(true);
    });

    it('a tab that arrives after the rotation committed, before its pair was kept, waits for the pair', async () => {
      const s = await setup(withInterval(10));
      const params = { refresh_token: s.first.refresh_token! };
      // Hold the winner between its rotation (committed) and keeping its pair; the other tab then
      // finds the token rotated and no pair yet (it happened in CI once signing left the threads).
      const put = s.records.put.bind(s.records);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let rotated!: () => void;
      const committed = new Promise<void>((resolve) => (rotated = resolve));
      s.records.put = async (...args: Parameters<typeof put>) => {
        rotated();
        await held;
        return put(...args);
      };
      const first = refresh(s, params);
      await committed;
      const second = refresh(s, params);
      setTimeout(release, 100);
      const [a, b] = await Promise.all([first, second]);
      expect(b).to.deep.equal(a);
      expect(s.oauth.revocations).to.deep.equal([]);
      expect(await active(s, a.refresh_token!)).to.equal(true);
    });

    it('the rotated token within the interval answers the same pair, with what is left of expires_in', async () => {
      const s = await setup(withInterval(10));
      const first = await refresh(s, { refresh_token: s.first.refresh_token! });
      s.services.clock.advance(4);
      const again = await refresh(s, { refresh_token: s.first.refresh_token! });
      expect(again.access_token).to.equal(first.access_token);
      expect(again.refresh_token).to.equal(first.refresh_token);
      expect(again.expires_in).to.equal(first.expires_in! - 4);
      expect(s.oauth.revocations).to.deep.equal([]);
    });

    it('past the interval it is reuse: invalid_grant and the family is revoked', async () => {
      const s = await setup(withInterval(10));
      const first = await refresh(s, { refresh_token: s.first.refresh_token! });
      s.services.clock.advance(11);
      const err = await expectOAuthError(refresh(s, { refresh_token: s.first.refresh_token! }), 'invalid_grant');
      expect(err.message).to.equal('refresh token already used');
      expect(s.oauth.revocations).to.deep.equal([{ grantId: s.grantId, reason: 'refresh_reuse' }]);
      expect(await active(s, first.refresh_token!)).to.equal(false);
    });

    it('once the successor was used, the old token is reuse even within the interval', async () => {
      const s = await setup(withInterval(30));
      const second = await refresh(s, { refresh_token: s.first.refresh_token! });
      const third = await refresh(s, { refresh_token: second.refresh_token! });
      await expectOAuthError(refresh(s, { refresh_token: s.first.refresh_token! }), 'invalid_grant');
      expect(s.oauth.revocations).to.deep.equal([{ grantId: s.grantId, reason: 'refresh_reuse' }]);
      expect(await active(s, third.refresh_token!)).to.equal(false);
    });

    it('another client presenting the rotated token gets nothing and revokes nothing', async () => {
      const s = await setup(withInterval(30));
      await refresh(s, { refresh_token: s.first.refresh_token! });
      const other = fakeClient({ clientId: 'client-b', settings: { refresh_token_reuse_interval: 30 } });
      const err = await expectOAuthError(refresh(s, { refresh_token: s.first.refresh_token! }, other), 'invalid_grant');
      expect(err.message).to.equal('invalid refresh token');
      expect(s.oauth.revocations).to.deep.equal([]);
    });

    it('the pair is kept encrypted, only for the interval', async () => {
      const s = await setup(withInterval(5));
      const first = await refresh(s, { refresh_token: s.first.refresh_token! });
      const stored = await s.records.list('');
      expect(stored).to.have.length(1);
      expect(JSON.stringify(stored)).not.to.include(first.refresh_token!).and.not.to.include(first.access_token);
      s.services.clock.advance(6);
      expect(await s.records.list('')).to.deep.equal([]);
    });

    it('the setting is refused above 60 seconds', async () => {
      const { reuseIntervalConfig } = await import('../src/grant.js');
      expect(reuseIntervalConfig.safeParse(61).success).to.equal(false);
      expect(reuseIntervalConfig.parse(undefined)).to.equal(0);
    });
  });
});
