import { expect } from 'chai';
import { createHash } from 'node:crypto';
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
  type NewFakeCode,
  expectOAuthError,
} from '@gatehouse-auth/testing';
import plugin, { authorizationCodeGrant, wantsRefreshToken } from '../src/index.js';

const REDIRECT = 'https://app.example.test/callback';
// RFC 7636 Appendix B.
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const AUTH_TIME = 1767268800;

interface Setup {
  services: FakeServices;
  oauth: FakeOAuth;
  handler: GrantHandler;
  client: OAuthClient;
}

async function setup(client: OAuthClient = fakeClient()): Promise<Setup> {
  const services = fakeServices();
  const oauth = fakeOAuth({ clock: services.clock });
  const { grants } = await registerWithFakes(plugin, {}, services);
  return { services, oauth, handler: grants[0]!, client };
}

function newCode(s: Setup, overrides: Partial<NewFakeCode> = {}) {
  return s.oauth.createCode({
    clientId: s.client.clientId,
    subject: 'user-1',
    redirectUri: REDIRECT,
    scope: ['openid', 'profile', 'offline_access'],
    codeChallenge: CHALLENGE,
    codeChallengeMethod: 'S256',
    nonce: 'n-0S6_WzA2Mj',
    authTime: AUTH_TIME,
    amr: ['pwd', 'otp'],
    ...overrides,
  });
}

function redeem(s: Setup, params: Record<string, string | undefined>, client: OAuthClient = s.client) {
  return s.handler.handle(grantContext({ client, oauth: s.oauth, params }));
}

const codeRow = (s: Setup, key: string) => s.oauth.codeRows.get(key)!;

describe('@gatehouse-auth/grant-authorization-code', () => {
  it('registers one handler for authorization_code with its parameters', async () => {
    const { handler } = await setup();
    expect(handler.grantType).to.equal('authorization_code');
    expect(handler.parameters).to.deep.equal(['code', 'redirect_uri', 'code_verifier']);
  });

  it('refuses unknown options at start-up', async () => {
    let thrown: unknown = null;
    await registerWithFakes(plugin, { lenient: true }).catch((err: unknown) => (thrown = err));
    expect(thrown).to.be.instanceOf(Error);
  });

  describe('success', () => {
    it('redeems a code with PKCE: issue() gets the code subject, scope, grant and ID token inputs', async () => {
      const s = await setup();
      const { code, record } = newCode(s);
      const response = await redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });

      expect(s.oauth.issued).to.have.length(1);
      expect(s.oauth.issued[0]).to.deep.equal({
        client: s.client,
        subject: 'user-1',
        scope: ['openid', 'profile', 'offline_access'],
        grantType: 'authorization_code',
        grantId: record.grantId,
        grant: record.grant,
        refreshToken: true,
        idToken: { nonce: 'n-0S6_WzA2Mj', authTime: AUTH_TIME, amr: ['pwd', 'otp'], code },
        grantData: { auth_time: AUTH_TIME, amr: ['pwd', 'otp'] },
      });
      expect(response.token_type).to.equal('bearer');
      expect(response.scope).to.equal('openid profile offline_access');
      expect(response.refresh_token).to.be.a('string');
      expect(response.id_token).to.be.a('string');
      expect(codeRow(s, record.key).usedAt).to.deep.equal(s.services.clock.now());
      expect(s.oauth.revocations).to.deep.equal([]);
    });

    it('redeems a confidential client code without PKCE when none was requested', async () => {
      const s = await setup();
      const { code } = newCode(s, { codeChallenge: null, codeChallengeMethod: null });
      const response = await redeem(s, { code, redirect_uri: REDIRECT });
      expect(response.access_token).to.be.a('string');
    });

    it('a code whose authorization request named no redirect_uri may be redeemed without one (list B)', async () => {
      const s = await setup();
      const { code } = newCode(s, { redirectUriSent: false });
      await redeem(s, { code, code_verifier: VERIFIER });
      expect(s.oauth.issued).to.have.length(1);
      const { code: other } = newCode(s, { redirectUriSent: false });
      await expectOAuthError(
        redeem(s, { code: other, code_verifier: VERIFIER, redirect_uri: `${REDIRECT}/x` }),
        'invalid_grant',
      );
    });

    it('accepts verifiers of exactly 43 and 128 characters', async () => {
      for (const verifier of ['a'.repeat(43), 'A-._~'.repeat(25) + 'xyz']) {
        const s = await setup();
        expect(verifier.length).to.be.oneOf([43, 128]);
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        const { code } = newCode(s, { codeChallenge: challenge });
        const response = await redeem(s, { code, redirect_uri: REDIRECT, code_verifier: verifier });
        expect(response.access_token).to.be.a('string');
      }
    });

    it('compares the challenge through the constant-time helper', async () => {
      const services = fakeServices();
      const compared: [string, string][] = [];
      const handler = authorizationCodeGrant({
        clock: services.clock,
        crypto: {
          ...services.crypto,
          safeEqual: (a, b) => {
            compared.push([a, b]);
            return services.crypto.safeEqual(a, b);
          },
        },
      });
      const s: Setup = { services, oauth: fakeOAuth({ clock: services.clock }), handler, client: fakeClient() };
      const { code } = newCode(s);
      await redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
      expect(compared).to.deep.equal([[CHALLENGE, CHALLENGE]]);
    });
  });

  describe('refresh token rule', () => {
    it('wantsRefreshToken: the client needs the grant; openid requests also need offline_access', () => {
      const both = ['authorization_code', 'refresh_token'];
      expect(wantsRefreshToken(both, ['openid', 'offline_access'])).to.equal(true);
      expect(wantsRefreshToken(both, ['openid', 'profile'])).to.equal(false);
      expect(wantsRefreshToken(both, ['read'])).to.equal(true);
      expect(wantsRefreshToken(['authorization_code'], ['read'])).to.equal(false);
      expect(wantsRefreshToken(['authorization_code'], ['openid', 'offline_access'])).to.equal(false);
    });

    it('an openid code without offline_access gets no refresh token', async () => {
      const s = await setup();
      const { code } = newCode(s, { scope: ['openid', 'profile'] });
      const response = await redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
      expect(s.oauth.issued[0]!.refreshToken).to.equal(false);
      expect(response).to.not.have.property('refresh_token');
    });

    it('a plain OAuth code gets one when the client has the refresh_token grant', async () => {
      const s = await setup(fakeClient({ scopes: ['read'] }));
      const { code } = newCode(s, { scope: ['read'] });
      const response = await redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
      expect(s.oauth.issued[0]!.refreshToken).to.equal(true);
      expect(response.refresh_token).to.be.a('string');
      expect(response).to.not.have.property('id_token');
    });
  });

  describe('failures', () => {
    it('no code → invalid_request', async () => {
      const s = await setup();
      await expectOAuthError(redeem(s, { redirect_uri: REDIRECT, code_verifier: VERIFIER }), 'invalid_request');
      await expectOAuthError(redeem(s, { code: '', redirect_uri: REDIRECT }), 'invalid_request');
    });

    it('an unknown code → invalid_grant, and the description does not echo it', async () => {
      const s = await setup();
      const err = await expectOAuthError(
        redeem(s, { code: 'no-such-code-value', redirect_uri: REDIRECT, code_verifier: VERIFIER }),
        'invalid_grant',
      );
      expect(err.message).to.equal('invalid authorization code');
      expect(s.oauth.issued).to.deep.equal([]);
    });

    it("client B redeeming client A's code → invalid_grant, nothing revoked, the code still works for A", async () => {
      const s = await setup();
      const { code, record } = newCode(s);
      const clientB = fakeClient({ clientId: 'client-b' });
      const err = await expectOAuthError(
        redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER }, clientB),
        'invalid_grant',
      );
      expect(err.message).to.equal('invalid authorization code');
      expect(s.oauth.revocations).to.deep.equal([]);
      expect(codeRow(s, record.key).usedAt).to.equal(null);
      const response = await redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
      expect(response.access_token).to.be.a('string');
    });

    it('a second redemption → invalid_grant and revokes the grant: the first tokens become inactive', async () => {
      const s = await setup();
      const { code, record } = newCode(s);
      const params = { code, redirect_uri: REDIRECT, code_verifier: VERIFIER };
      const first: TokenResponse = await redeem(s, params);
      expect((await s.oauth.inspect(first.access_token)).active).to.equal(true);

      s.services.clock.advance(30);
      const err = await expectOAuthError(redeem(s, params), 'invalid_grant');
      expect(err.message).to.equal('authorization code already used');
      expect(s.oauth.revocations).to.deep.equal([{ grantId: record.grantId, reason: 'code_reuse' }]);
      expect((await s.oauth.inspect(first.access_token)).active).to.equal(false);
      expect((await s.oauth.inspect(first.refresh_token!)).active).to.equal(false);
      expect(s.oauth.issued).to.have.length(1);
    });

    it('a replay of a used code by another client revokes nothing', async () => {
      const s = await setup();
      const { code } = newCode(s);
      const first = await redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
      await expectOAuthError(
        redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER }, fakeClient({ clientId: 'client-b' })),
        'invalid_grant',
      );
      expect(s.oauth.revocations).to.deep.equal([]);
      expect((await s.oauth.inspect(first.access_token)).active).to.equal(true);
    });

    it('a replay without the right verifier or redirect_uri revokes nothing', async () => {
      const s = await setup();
      const { code } = newCode(s);
      const first = await redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
      await expectOAuthError(
        redeem(s, { code, redirect_uri: REDIRECT, code_verifier: 'b'.repeat(43) }),
        'invalid_grant',
      );
      await expectOAuthError(
        redeem(s, { code, redirect_uri: `${REDIRECT}/x`, code_verifier: VERIFIER }),
        'invalid_grant',
      );
      expect(s.oauth.revocations).to.deep.equal([]);
      expect((await s.oauth.inspect(first.access_token)).active).to.equal(true);
    });

    it('two concurrent redemptions: exactly one succeeds, the other revokes the grant', async () => {
      const s = await setup();
      const { code, record } = newCode(s);
      const params = { code, redirect_uri: REDIRECT, code_verifier: VERIFIER };
      const results = await Promise.allSettled([redeem(s, params), redeem(s, params)]);
      const fulfilled = results.filter((r) => r.status === 'fulfilled');
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(fulfilled).to.have.length(1);
      expect(rejected).to.have.length(1);
      expect((rejected[0]!.reason as OAuthError).code).to.equal('invalid_grant');
      expect(s.oauth.revocations).to.deep.equal([{ grantId: record.grantId, reason: 'code_reuse' }]);
    });

    it('a code at or past its lifetime → invalid_grant, not consumed, nothing revoked', async () => {
      const s = await setup();
      const { code, record } = newCode(s, { ttlSeconds: 60 });
      s.services.clock.advance(60);
      const err = await expectOAuthError(
        redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER }),
        'invalid_grant',
      );
      expect(err.message).to.equal('authorization code expired');
      expect(codeRow(s, record.key).usedAt).to.equal(null);
      expect(s.oauth.revocations).to.deep.equal([]);
      expect(s.oauth.issued).to.deep.equal([]);
    });

    it('a code whose grant was revoked since (logout) → invalid_grant, not consumed, no tokens', async () => {
      const s = await setup();
      const { code, record } = newCode(s);
      await s.oauth.grants.revoke(record.grantId, 'logout');
      const err = await expectOAuthError(
        redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER }),
        'invalid_grant',
      );
      expect(err.message).to.equal('authorization code revoked');
      expect(codeRow(s, record.key).usedAt).to.equal(null);
      expect(s.oauth.issued).to.deep.equal([]);
    });

    it('a code whose grant row is gone → invalid_grant, not a server error', async () => {
      const s = await setup();
      const { code, record } = newCode(s);
      s.oauth.grantRows.delete(record.grantId);
      const err = await expectOAuthError(
        redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER }),
        'invalid_grant',
      );
      expect(err.message).to.equal('authorization code revoked');
    });

    it('a code that expires between the check and the conditional consume → invalid_grant, nothing revoked', async () => {
      const s = await setup();
      const { code } = newCode(s, { ttlSeconds: 60 });
      s.services.clock.advance(59);
      const consume = s.oauth.codes.consume;
      s.oauth.codes.consume = (c) => {
        s.services.clock.advance(2);
        return consume(c);
      };
      const err = await expectOAuthError(
        redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER }),
        'invalid_grant',
      );
      expect(err.message).to.equal('authorization code expired');
      expect(s.oauth.revocations).to.deep.equal([]);
    });

    it('redirect_uri missing or not byte-identical → invalid_grant, the code stays unused', async () => {
      const s = await setup();
      const { code, record } = newCode(s);
      const variants = [
        undefined,
        `${REDIRECT}/`,
        REDIRECT.toUpperCase(),
        `${REDIRECT}?x=1`,
        `${REDIRECT}#f`,
        `${REDIRECT}x`,
      ];
      for (const redirect_uri of variants) {
        await expectOAuthError(redeem(s, { code, redirect_uri, code_verifier: VERIFIER }), 'invalid_grant');
      }
      expect(codeRow(s, record.key).usedAt).to.equal(null);
      expect(s.oauth.issued).to.deep.equal([]);
    });

    describe('PKCE', () => {
      const bad: [string, string | undefined, string][] = [
        ['missing', undefined, 'code_verifier is required'],
        ['wrong', 'b'.repeat(43), 'PKCE verification failed'],
        ['42 characters', VERIFIER.slice(0, 42), 'code_verifier must be 43 to 128 unreserved characters'],
        ['129 characters', 'a'.repeat(129), 'code_verifier must be 43 to 128 unreserved characters'],
        [
          'with a reserved character',
          `${VERIFIER.slice(0, 42)}+`,
          'code_verifier must be 43 to 128 unreserved characters',
        ],
        ['with a space', `${VERIFIER.slice(0, 42)} `, 'code_verifier must be 43 to 128 unreserved characters'],
        ['equal to the challenge', CHALLENGE, 'PKCE verification failed'],
      ];
      for (const [name, verifier, message] of bad) {
        it(`code_verifier ${name} → invalid_grant, the code stays unused`, async () => {
          const s = await setup();
          const { code, record } = newCode(s);
          const err = await expectOAuthError(
            redeem(s, { code, redirect_uri: REDIRECT, code_verifier: verifier }),
            'invalid_grant',
          );
          expect(err.message).to.equal(message);
          expect(codeRow(s, record.key).usedAt).to.equal(null);
        });
      }

      it('a code_verifier without an earlier challenge (downgrade) → invalid_grant', async () => {
        const s = await setup();
        const { code } = newCode(s, { codeChallenge: null, codeChallengeMethod: null });
        const err = await expectOAuthError(
          redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER }),
          'invalid_grant',
        );
        expect(err.message).to.equal('code_verifier sent but the authorization request had no code_challenge');
      });

      it('a public client code without a challenge → invalid_grant', async () => {
        const s = await setup(fakeClient({ authMethod: 'none' }));
        const { code } = newCode(s, { codeChallenge: null, codeChallengeMethod: null });
        const err = await expectOAuthError(redeem(s, { code, redirect_uri: REDIRECT }), 'invalid_grant');
        expect(err.message).to.equal('PKCE is required for public clients');
      });

      it('a public client with a correct verifier succeeds', async () => {
        const s = await setup(fakeClient({ authMethod: 'none' }));
        const { code } = newCode(s);
        const response = await redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER });
        expect(response.access_token).to.be.a('string');
      });

      it('a stored plain challenge is refused even when the verifier equals it', async () => {
        const s = await setup();
        const { code } = newCode(s, { codeChallenge: VERIFIER, codeChallengeMethod: 'plain' });
        const err = await expectOAuthError(
          redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER }),
          'invalid_grant',
        );
        expect(err.message).to.equal('unsupported code_challenge_method');
      });
    });
  });

  describe('a code bound to a key (RFC 9449 §10, dpop_jkt)', () => {
    const JKT = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';

    it('without a DPoP proof: invalid_grant, and the code stays unused', async () => {
      const s = await setup();
      const { code, record } = newCode(s, { dpopJkt: JKT });
      const err = await expectOAuthError(
        redeem(s, { code, redirect_uri: REDIRECT, code_verifier: VERIFIER }),
        'invalid_grant',
      );
      expect(err.message).to.equal('a DPoP proof of the key the code is bound to is required');
      expect(codeRow(s, record.key).usedAt).to.equal(null);
    });

    it('with a proof of another key: invalid_grant', async () => {
      const s = await setup();
      const { code } = newCode(s, { dpopJkt: JKT });
      const oauth = { ...s.oauth, proofKey: 'another-key-thumbprint-0123456789abcdefghij' };
      const err = await expectOAuthError(
        s.handler.handle(
          grantContext({ client: s.client, oauth, params: { code, redirect_uri: REDIRECT, code_verifier: VERIFIER } }),
        ),
        'invalid_grant',
      );
      expect(err.message).to.equal('the DPoP proof is not of the key the code is bound to');
    });
  });
});
