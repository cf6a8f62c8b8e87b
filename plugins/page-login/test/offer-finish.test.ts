/**
 * Decision 76: the offer of a method after a login is page-login's. The page's form ends a stage
 * at the plugin's `POST /login/finish` (the core's continuation through `web.loginFlows`), which
 * sends a completed login to `/login/offer` when the core has a method to offer
 * (`web.loginFlows.offer`: FIDO2's `page.offer` after an emailed code, never after a password
 * alone). The core's own `/login/continue` offers nothing: an `offer` field is ignored, so a
 * login continued anywhere else (an app's own login UI, no page-login) simply completes.
 */
import { expect } from 'chai';
import { Browser, locationOf } from '../../../test/oauth/support.js';
import {
  DEMO_ADMIN_TOKEN,
  DEMO_SPA,
  outboxCode,
  outboxLatestText,
  startAuthorization,
  startDemoServer,
  type DemoServer,
} from '../../../test/oauth/demo-server.js';

const PASSWORD = 'a long enough password 42';

describe('page-login: the offer after a login starts at its /login/finish (decision 76)', function () {
  this.timeout(30_000);
  let server: DemoServer;

  before(async () => {
    server = await startDemoServer({
      configure(config) {
        // An emailed code may sign in: a login that proves more than a password may add a passkey.
        config.apps.find((a) => a.client_id === DEMO_SPA.id)!.login_stages = [['PASSWORD', 'FIDO2', 'EMAIL']];
      },
    });
  });
  after(() => server?.close());

  /** A user with a password and an email address. */
  async function user(username: string): Promise<void> {
    const { id } = await server.gatehouse.container.cradle.users.create({
      username,
      email: `${username}@example.test`,
    });
    const res = await fetch(server.url('/verification-actions-srv/setup/PASSWORD/initiation'), {
      method: 'POST',
      headers: { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sub: id, password: PASSWORD }),
    });
    expect(res.status).to.equal(200);
  }

  async function call(path: string, body: Record<string, string>): Promise<Record<string, unknown>> {
    const res = await fetch(server.url(path), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { data: Record<string, unknown> };
    expect(res.status, `${path}: ${JSON.stringify(json)}`).to.equal(200);
    return json.data;
  }

  /** A login of demo-spa in `browser` whose one stage is proven with `method`: the form's fields. */
  async function provenStage(browser: Browser, username: string, method: 'EMAIL' | 'PASSWORD') {
    const auth = await startAuthorization(browser, server, DEMO_SPA);
    const requestId = auth.location.searchParams.get('request_id')!;
    const address = `${username}@example.test`;
    const before = await outboxLatestText(server, address);
    const started = await call(`/verification-srv/authentication/${method}/initiation`, {
      request_id: requestId,
      usage_type: 'INITIAL_AUTHENTICATION',
      identifier: username,
    });
    const proof: Record<string, string> =
      method === 'EMAIL'
        ? { pass_code: await outboxCode(server, address, (text) => text !== before) }
        : { password: PASSWORD };
    const exchangeId = (started.exchange_id as { exchange_id: string }).exchange_id;
    const verified = await call(`/verification-srv/authentication/${method}/verification`, {
      exchange_id: exchangeId,
      ...proof,
    });
    return { requestId, status_id: String(verified.status_id), verificationType: method };
  }

  it('after an emailed code, /login/finish sends the browser to the offer page, which offers a passkey', async () => {
    await user('olga-offer');
    const browser = new Browser(server);
    const fields = await provenStage(browser, 'olga-offer', 'EMAIL');
    const next = locationOf(await browser.postForm('/login/finish', fields), server);
    expect(next.pathname).to.equal('/login/offer');
    expect(next.searchParams.get('request_id')).to.equal(fields.requestId);
    const page = await browser.get(next.pathname + next.search);
    expect(page.status).to.equal(200);
    expect(await page.text()).to.include('id="gh-offer"');
  });

  it("the core's /login/continue offers nothing: the same login goes back to the app, an offer field ignored", async () => {
    await user('paul-offer');
    const browser = new Browser(server);
    const fields = await provenStage(browser, 'paul-offer', 'EMAIL');
    const next = locationOf(await browser.postForm('/login/continue', { ...fields, offer: 'yes' }), server);
    expect(next.pathname).to.equal('/api/oauth2/authorize/resume');
  });

  it('after a password alone, /login/finish goes back to the app (a passkey would sign in by itself)', async () => {
    await user('rita-offer');
    const browser = new Browser(server);
    const fields = await provenStage(browser, 'rita-offer', 'PASSWORD');
    const next = locationOf(await browser.postForm('/login/finish', fields), server);
    expect(next.pathname).to.equal('/api/oauth2/authorize/resume');
  });

  it("keeps the core's checks: another browser's POST is refused (403 FLOW_NOT_BOUND), as at /login/continue", async () => {
    await user('sven-offer');
    const fields = await provenStage(new Browser(server), 'sven-offer', 'EMAIL');
    const res = await new Browser(server).request('/login/finish', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: new URLSearchParams(fields).toString(),
    });
    expect(res.status).to.equal(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('FLOW_NOT_BOUND');
  });
});
