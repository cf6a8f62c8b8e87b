import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakeServices, fakeUser, fdsContext, registerWithFakes } from '@gatehouse-auth/testing';
import plugin from '../index.js';

test('denies a listed client, allows the others', async () => {
  const services = fakeServices();
  const { fdsRules } = await registerWithFakes(plugin, { deny_clients: ['suspect-app'] }, services);
  const evaluate = (clientId) =>
    fdsRules[0].evaluate(fdsContext({ services, user: fakeUser(), method: 'ANY', clientId }));
  assert.equal((await evaluate('suspect-app')).action, 'deny');
  assert.deepEqual(await evaluate('good-app'), { action: 'allow' });
});
