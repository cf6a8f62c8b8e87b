import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { fakeServices, registerWithFakes } from '@gatehouse-auth/testing';
import plugin from '../index.js';

/** A provider on a free port that answers each request with the next status of `statuses`. */
async function provider(statuses) {
  const received = [];
  const server = createServer((req, res) => {
    if (req.method === 'HEAD') return void res.end(); // the dependency check
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push(JSON.parse(body));
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/send`, received, close: () => server.close() };
}

test('POSTs the message; a provider error rejects', async () => {
  const sink = await provider([200, 503]);
  try {
    const { channels } = await registerWithFakes(plugin, { url: sink.url }, fakeServices());
    const message = { kind: 'sms', to: '+15551230000', text: 'Your code is 123456' };
    await channels[0].send(message);
    assert.deepEqual(sink.received, [message]);
    await assert.rejects(channels[0].send(message), /503/);
  } finally {
    sink.close();
  }
});

test('the dependency check: up while the provider answers, down once it is gone', async () => {
  const sink = await provider([]);
  const { dependencies } = await registerWithFakes(plugin, { url: sink.url }, fakeServices());
  const check = dependencies.get('__CHANNEL_ID__');
  await check();
  assert.deepEqual(sink.received, []);
  sink.close();
  await assert.rejects(check());
});
