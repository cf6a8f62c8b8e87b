import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  expectOAuthError,
  fakeClient,
  fakeOAuth,
  fakeServices,
  grantContext,
  registerWithFakes,
} from '@gatehouse-auth/testing';
import plugin, { GRANT_TYPE } from '../index.js';

test('issues a token for the client with the scope asked; a public client is refused', async () => {
  const services = fakeServices();
  const { grants } = await registerWithFakes(plugin, {}, services);
  const oauth = fakeOAuth({ clock: services.clock });
  const client = fakeClient({ grantTypes: [GRANT_TYPE], scopes: ['reports.read', 'reports.write'] });
  const response = await grants[0].handle(grantContext({ client, oauth, params: { scope: 'reports.read' } }));
  assert.equal(response.scope, 'reports.read');
  assert.equal(typeof response.access_token, 'string');
  const publicClient = fakeClient({ authMethod: 'none', isPublic: true, grantTypes: [GRANT_TYPE] });
  await expectOAuthError(
    grants[0].handle(grantContext({ client: publicClient, oauth, params: {} })),
    'unauthorized_client',
  );
});
