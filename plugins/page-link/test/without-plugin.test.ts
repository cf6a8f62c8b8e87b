/**
 * Decision 66: the sign-in link page is the page-link plugin's, on the login-flow API. Left out
 * of `plugins:`, the link path answers 404 and no link is mailed (`processingType: LINK` is
 * refused); a code still works. A plugin that calls `answerLink` on a GET confirms nothing.
 */
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { GatehouseConfig } from '@gatehouse-auth/core';
import { DEMO_APP, outboxMessage, startAuthorization } from '../../../test/oauth/demo-server.js';
import { call, startDemoServer, type DemoServer } from '../../../test/devices/support.js';
import { Browser, loginRequestId } from '../../../test/oauth/support.js';

const CARELESS_PAGE = fileURLToPath(new URL('./fixtures/careless-link-page.js', import.meta.url));
const ALICE_EMAIL = 'alice@example.test';

/** The demo config with EMAIL at the demo app's first stage and `plugins` changed by `edit`. */
function emailFirst(edit: (plugins: GatehouseConfig['plugins']) => GatehouseConfig['plugins']) {
  return startDemoServer({
    configure(config) {
      const app = config.apps.find((a) => a.client_id === 'demo-app')!;
      app.login_stages = [[...app.login_stages[0]!, 'EMAIL'], app.login_stages[1]!];
      config.plugins = edit(config.plugins);
    },
  });
}

/** An EMAIL initiation of a fresh demo-app login for alice, with `processingType`: its status and JSON. */
async function initiate(server: DemoServer, processingType: 'LINK' | 'CODE') {
  const browser = new Browser(server);
  const requestId = loginRequestId((await startAuthorization(browser, server, DEMO_APP)).location);
  const res = await fetch(server.url('/verification-srv/authentication/EMAIL/initiation'), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      request_id: requestId,
      usage_type: 'PASSWORDLESS_AUTHENTICATION',
      email: ALICE_EMAIL,
      processingType,
    }),
  });
  const json = (await res.json()) as { data?: Record<string, unknown>; error?: { code: string; error: string } };
  return { status: res.status, error: json.error, data: json.data ?? {} };
}

describe('page-link left out of plugins: (decision 66)', function () {
  let server: DemoServer;

  before(async function () {
    server = await emailFirst((plugins) => plugins.filter((p) => p.name !== '@gatehouse-auth/page-link'));
  });
  after(() => server?.close());

  it('answers 404 at the link path, for a GET and a POST', async function () {
    const link = server.url('/verification-srv/authentication/EMAIL/link?exchange_id=abc&token=def');
    expect((await fetch(link)).status).to.equal(404);
    const post = await fetch(link, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'exchange_id=abc&token=def&decision=confirm',
    });
    expect(post.status).to.equal(404);
  });

  it('mails no link nobody serves: processingType LINK is refused, a code is still sent', async function () {
    const refused = await initiate(server, 'LINK');
    expect(refused.status).to.equal(400);
    expect(refused.error?.code).to.equal('INVALID_FIELD');
    expect(refused.error?.error).to.include('@gatehouse-auth/page-link');
    expect((await initiate(server, 'CODE')).status).to.equal(200);
  });
});

describe('answerLink on a GET (decision 66)', function () {
  let server: DemoServer;

  before(async function () {
    server = await emailFirst((plugins) => [...plugins, { path: CARELESS_PAGE, options: {} }]);
  });
  after(() => server?.close());

  it('is refused: a page that answers on a GET confirms nothing', async function () {
    const started = await initiate(server, 'LINK');
    expect(started.status, JSON.stringify(started)).to.equal(200);
    const exchangeId = (started.data.exchange_id as { exchange_id: string }).exchange_id;
    const message = await outboxMessage(server, ALICE_EMAIL, (text) => text.includes(exchangeId));
    const link = new URL(/https?:\/\/\S+/.exec(message.text)![0]);
    const answered = await fetch(server.url(`/careless-link/EMAIL${link.search}`));
    expect(await answered.json()).to.deep.equal({ outcome: 'refused', problem: 'invalid' });
    const status = await call(
      server,
      `/verification-srv/verificationstatus/${String(started.data.status_id)}`,
      {},
      {},
      'GET',
    );
    expect(status.data.status).to.equal('INITIATED');
  });
});
