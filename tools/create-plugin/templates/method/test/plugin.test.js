import assert from 'node:assert/strict';
import { test } from 'node:test';
import { enrollmentContext, fakeServices, fakeUser, registerWithFakes, verifyContext } from '@gatehouse-auth/testing';
import plugin, { METHOD_ID } from '../index.js';

const cheap = { memory_cost: 1024, time_cost: 1 };

test('sets up an answer, then accepts it (any case) and refuses another', async () => {
  const services = fakeServices();
  const { methods } = await registerWithFakes(plugin, cheap, services);
  const method = methods[0];
  const user = fakeUser();
  const setUp = await method.enrollment.initiate(
    enrollmentContext({ services, user, method: METHOD_ID, body: { answer: 'Blue Whale' } }),
  );
  assert.equal(setUp.ok, true);
  const verify = (answer) => method.verify(verifyContext({ services, user, method: METHOD_ID, fields: { answer } }));
  assert.deepEqual(await verify(' blue whale '), { ok: true });
  assert.deepEqual(await verify('orca'), { ok: false, reason: 'mismatch' });
});

test('a user without an answer is refused, and a short answer is not set up', async () => {
  const services = fakeServices();
  const { methods } = await registerWithFakes(plugin, cheap, services);
  const user = fakeUser();
  const verify = await methods[0].verify(verifyContext({ services, user, method: METHOD_ID, fields: { answer: 'x' } }));
  assert.deepEqual(verify, { ok: false, reason: 'not_enrolled' });
  const short = await methods[0].enrollment.initiate(
    enrollmentContext({ services, user, method: METHOD_ID, body: { answer: 'ab' } }),
  );
  assert.equal(short.ok, false);
});
