import { expect } from 'chai';
import { type GrantHandler, type OAuthClient } from '@gatehouse-auth/core';
import {
  fakeClient,
  fakeOAuth,
  fakeServices,
  grantContext,
  registerWithFakes,
  type FakeOAuth,
  expectOAuthError,
} from '@gatehouse-auth/testing';
import plugin from '../src/index.js';

const SERVICE_CLIENT = fakeClient({
  clientId: 'service-a',
  grantTypes: ['client_credentials', 'refresh_token'],
  scopes: ['openid', 'read', 'offline_access', 'write'],
  settings: { service_subjects: { enterprise: ['ent-1'], user: true } },
});

interface Setup {
  oauth: FakeOAuth;
  handler: GrantHandler;
}

async function setup(): Promise<Setup> {
  const services = fakeServices();
  const { grants } = await registerWithFakes(plugin, {}, services);
  const users = [{ identifier: 'someone', userId: 'user-42', password: 'unused' }];
  return { oauth: fakeOAuth({ clock: services.clock, users }), handler: grants[0]! };
}

function request(s: Setup, params: Record<string, string | undefined>, client: OAuthClient = SERVICE_CLIENT) {
  return s.handler.handle(grantContext({ client, oauth: s.oauth, params }));
}

describe('@gatehouse-auth/grant-client-credentials', () => {
  it('registers one handler for client_credentials with its parameters', async () => {
    const { handler } = await setup();
    expect(handler.grantType).to.equal('client_credentials');
    expect(handler.parameters).to.deep.equal(['scope', 'service_subject_type', 'service_subject_id']);
  });

  describe('success', () => {
    it('without scope: every client scope except openid and offline_access, for the client itself', async () => {
      const s = await setup();
      const response = await request(s, {});
      expect(s.oauth.issued).to.deep.equal([
        {
          client: SERVICE_CLIENT,
          subject: null,
          scope: ['read', 'write'],
          grantType: 'client_credentials',
          refreshToken: false,
        },
      ]);
      expect(response.scope).to.equal('read write');
      expect(response).to.not.have.property('refresh_token');
      expect(response).to.not.have.property('id_token');
      expect(s.oauth.tokenRow(response.access_token)!.subject).to.equal(null);
    });

    it('a requested subset of scopes', async () => {
      const s = await setup();
      await request(s, { scope: 'write' });
      expect(s.oauth.issued[0]!.scope).to.deep.equal(['write']);
    });

    it('for a permitted enterprise: sub stays the client, the enterprise goes into claims', async () => {
      const s = await setup();
      await request(s, { service_subject_type: 'enterprise', service_subject_id: 'ent-1' });
      expect(s.oauth.issued[0]).to.deep.equal({
        client: SERVICE_CLIENT,
        subject: null,
        scope: ['read', 'write'],
        grantType: 'client_credentials',
        refreshToken: false,
        claims: { service_subject_type: 'enterprise', service_subject_id: 'ent-1' },
      });
    });

    it('for a user, when the client may act for users: the user is the subject', async () => {
      const s = await setup();
      await request(s, { scope: 'read', service_subject_type: 'user', service_subject_id: 'user-42' });
      expect(s.oauth.issued[0]).to.deep.equal({
        client: SERVICE_CLIENT,
        subject: 'user-42',
        scope: ['read'],
        grantType: 'client_credentials',
        refreshToken: false,
        claims: { service_subject_type: 'user', service_subject_id: 'user-42' },
      });
    });
  });

  describe('failures', () => {
    it('a public client → unauthorized_client', async () => {
      const s = await setup();
      const publicClient = fakeClient({ authMethod: 'none', grantTypes: ['client_credentials'] });
      await expectOAuthError(request(s, {}, publicClient), 'unauthorized_client');
      expect(s.oauth.issued).to.deep.equal([]);
    });

    for (const scope of ['openid', 'offline_access', 'read admin', 'read\\x']) {
      it(`scope "${scope}" → invalid_scope`, async () => {
        const s = await setup();
        await expectOAuthError(request(s, { scope }), 'invalid_scope');
        expect(s.oauth.issued).to.deep.equal([]);
      });
    }

    const malformed: [string, Record<string, string>, string][] = [
      [
        'an unknown type',
        { service_subject_type: 'group', service_subject_id: 'g' },
        'service_subject_type must be enterprise or user',
      ],
      ['a type without an id', { service_subject_type: 'user' }, 'service_subject_id is required'],
      ['an id without a type', { service_subject_id: 'ent-1' }, 'service_subject_id requires service_subject_type'],
      [
        'an id with a space',
        { service_subject_type: 'user', service_subject_id: 'a b' },
        'service_subject_id is malformed',
      ],
      [
        'an id of 256 characters',
        { service_subject_type: 'user', service_subject_id: 'u'.repeat(256) },
        'service_subject_id is malformed',
      ],
    ];
    for (const [name, params, message] of malformed) {
      it(`${name} → invalid_request`, async () => {
        const s = await setup();
        const err = await expectOAuthError(request(s, params), 'invalid_request');
        expect(err.message).to.equal(message);
        expect(s.oauth.issued).to.deep.equal([]);
      });
    }

    it('an enterprise the client is not configured for → unauthorized_client', async () => {
      const s = await setup();
      const err = await expectOAuthError(
        request(s, { service_subject_type: 'enterprise', service_subject_id: 'ent-2' }),
        'unauthorized_client',
      );
      expect(err.message).to.equal('client may not act for this enterprise');
    });

    it('a user subject for a client without service_subjects.user → unauthorized_client', async () => {
      const s = await setup();
      const client = fakeClient({
        grantTypes: ['client_credentials'],
        settings: { service_subjects: { enterprise: ['ent-1'], user: false } },
      });
      const err = await expectOAuthError(
        request(s, { service_subject_type: 'user', service_subject_id: 'user-42' }, client),
        'unauthorized_client',
      );
      expect(err.message).to.equal('client may not act for users');
      expect(s.oauth.issued).to.deep.equal([]);
    });
  });
});
