import { expect } from 'chai';
import { type GrantHandler, type OAuthClient } from '@gatehouse-auth/core';
import {
  fakeClient,
  fakeOAuth,
  fakeServices,
  grantContext,
  registerWithFakes,
  type FakeOAuth,
  type FakeOAuthOptions,
  type FakeServices,
  expectOAuthError,
} from '@gatehouse-auth/testing';
import plugin from '../src/index.js';

const PASSWORD = 'correct horse battery staple';
const APP = fakeClient({
  clientId: 'legacy-app',
  grantTypes: ['password', 'refresh_token'],
  scopes: ['openid', 'profile', 'offline_access'],
});

interface Setup {
  services: FakeServices;
  oauth: FakeOAuth;
  handler: GrantHandler;
}

async function setup(opts: Omit<FakeOAuthOptions, 'clock'> = {}): Promise<Setup> {
  const services = fakeServices();
  const oauth = fakeOAuth({
    clock: services.clock,
    users: [{ identifier: 'alice', userId: 'user-1', password: PASSWORD, method: 'PASSWORD' }],
    ...opts,
  });
  const { grants } = await registerWithFakes(plugin, {}, services);
  return { services, oauth, handler: grants[0]! };
}

function request(s: Setup, params: Record<string, string | undefined>, client: OAuthClient = APP) {
  return s.handler.handle(grantContext({ client, oauth: s.oauth, params }));
}

describe('@gatehouse-auth/grant-password', () => {
  it('registers one handler for password with its parameters', async () => {
    const { handler } = await setup();
    expect(handler.grantType).to.equal('password');
    expect(handler.parameters).to.deep.equal(['username', 'password', 'scope']);
  });

  describe('success', () => {
    it('checks the password through authenticateUser (PASSWORD method) and issues for the user', async () => {
      const s = await setup();
      const authTime = Math.floor(s.services.clock.now().getTime() / 1000);
      const response = await request(s, { username: 'alice', password: PASSWORD });
      expect(s.oauth.authentications).to.deep.equal([
        { identifier: 'alice', method: 'PASSWORD', fields: { password: PASSWORD }, clientId: 'legacy-app' },
      ]);
      expect(s.oauth.issued).to.deep.equal([
        {
          client: APP,
          subject: 'user-1',
          scope: ['openid', 'profile', 'offline_access'],
          grantType: 'password',
          refreshToken: true,
          idToken: { authTime, amr: ['pwd'] },
          grantData: { auth_time: authTime, amr: ['pwd'] },
        },
      ]);
      expect(response.refresh_token).to.be.a('string');
      expect(response.id_token).to.be.a('string');
    });

    it('a requested subset of scopes; no refresh token without the refresh_token grant', async () => {
      const s = await setup();
      const client = fakeClient({ grantTypes: ['password'], scopes: ['openid', 'profile'] });
      const response = await request(s, { username: 'alice', password: PASSWORD, scope: 'profile' }, client);
      expect(s.oauth.issued[0]!.scope).to.deep.equal(['profile']);
      expect(s.oauth.issued[0]!.refreshToken).to.equal(false);
      expect(response).to.not.have.property('refresh_token');
    });

    it('a single login stage that offers PASSWORD is fine', async () => {
      const s = await setup();
      const client = { ...APP, loginStages: [['FIDO2', 'PASSWORD']] };
      expect((await request(s, { username: 'alice', password: PASSWORD }, client)).access_token).to.be.a('string');
    });
  });

  describe('failures', () => {
    const unhappy: [string, Record<string, string>, FakeOAuthOptions['authenticate']][] = [
      ['a wrong password', { username: 'alice', password: 'wrong password here' }, undefined],
      ['an unknown user', { username: 'mallory', password: PASSWORD }, undefined],
      [
        'a fraud rule denying',
        { username: 'alice', password: PASSWORD },
        () => ({ ok: false, reason: 'fds:velocity.user' }),
      ],
    ];
    for (const [name, params, authenticate] of unhappy) {
      it(`${name} → invalid_grant with the same description`, async () => {
        const s = await setup(authenticate ? { authenticate } : {});
        const err = await expectOAuthError(request(s, params), 'invalid_grant');
        expect(err.message).to.equal('invalid resource owner credentials');
        expect(s.oauth.authentications).to.have.length(1);
        expect(s.oauth.issued).to.deep.equal([]);
      });
    }

    it('username or password missing → invalid_request, nothing checked', async () => {
      const s = await setup();
      let err = await expectOAuthError(request(s, { password: PASSWORD }), 'invalid_request');
      expect(err.message).to.equal('username is required');
      err = await expectOAuthError(request(s, { username: 'alice', password: '' }), 'invalid_request');
      expect(err.message).to.equal('password is required');
      expect(s.oauth.authentications).to.deep.equal([]);
    });

    it('a client without the password grant → unauthorized_client, nothing checked', async () => {
      const s = await setup();
      const client = fakeClient({ grantTypes: ['authorization_code', 'refresh_token'] });
      await expectOAuthError(request(s, { username: 'alice', password: PASSWORD }, client), 'unauthorized_client');
      expect(s.oauth.authentications).to.deep.equal([]);
    });

    for (const loginStages of [[['PASSWORD'], ['TOTP']], [['FIDO2']]]) {
      it(`login stages ${JSON.stringify(loginStages)} → unauthorized_client (the grant would bypass them)`, async () => {
        const s = await setup();
        const err = await expectOAuthError(
          request(s, { username: 'alice', password: PASSWORD }, { ...APP, loginStages }),
          'unauthorized_client',
        );
        expect(err.message).to.equal('this client requires an interactive login; use authorization_code');
        expect(s.oauth.authentications).to.deep.equal([]);
      });
    }

    it('an excess scope → invalid_scope before the password is checked', async () => {
      const s = await setup();
      await expectOAuthError(
        request(s, { username: 'alice', password: PASSWORD, scope: 'openid admin' }),
        'invalid_scope',
      );
      expect(s.oauth.authentications).to.deep.equal([]);
    });
  });
});
