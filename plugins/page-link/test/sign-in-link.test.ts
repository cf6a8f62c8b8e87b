/**
 * Issue 12: EMAIL with `processingType: LINK` sends a sign-in link. Opened in the browser doing
 * the login it verifies and the login goes on; anywhere else it asks first (a mail scanner's GET
 * signs nobody in), then the login goes on where it started; "it was not me" cancels.
 */
import { expect } from 'chai';
import {
  DEMO_APP,
  aliceTotp,
  codeFrom,
  outboxMessage,
  redeemDemo,
  startAuthorization,
} from '../../../test/oauth/demo-server.js';
import { call, startDemoServer, type DemoServer } from '../../../test/devices/support.js';
import { Browser, completeStage, locationOf, loginRequestId } from '../../../test/oauth/support.js';

const ALICE_EMAIL = 'alice@example.test';
/**
 * The fields of a first-stage link initiation's answer, for a real address and an unknown one
 * alike (`resend_after`: the demo config's resend interval, issue 29).
 */
const FIRST_STAGE_LINK_ANSWER = ['exchange_id', 'link_number', 'resend_after', 'status_id'];
/** The browser that starts the login: Firefox on Windows. */
const FIREFOX_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';

describe('EMAIL sign-in links (processingType: LINK, issue 12)', function () {
  let server: DemoServer;

  before(async function () {
    server = await startDemoServer({
      configure(config) {
        const app = config.apps.find((a) => a.client_id === 'demo-app')!;
        app.login_stages = [[...app.login_stages[0]!, 'EMAIL'], app.login_stages[1]!];
      },
    });
  });
  after(() => server?.close());

  /** A demo-app login whose first stage is an EMAIL link to alice: the browser, the ids and the link. */
  async function linkSent(extra: Record<string, string> = {}) {
    const browser = new Browser(server);
    const auth = await startAuthorization(browser, server, DEMO_APP);
    const requestId = loginRequestId(auth.location);
    const started = await call(
      server,
      '/verification-srv/authentication/EMAIL/initiation',
      {
        request_id: requestId,
        usage_type: 'PASSWORDLESS_AUTHENTICATION',
        email: ALICE_EMAIL,
        processingType: 'LINK',
        ...extra,
      },
      { 'User-Agent': FIREFOX_WINDOWS },
    );
    expect(started.status, JSON.stringify(started)).to.equal(200);
    const exchangeId = (started.data.exchange_id as { exchange_id: string }).exchange_id;
    const message = await outboxMessage(server, ALICE_EMAIL, (text) => text.includes(exchangeId));
    const link = new URL(/https?:\/\/\S+/.exec(message.text)![0]);
    const statusId = started.data.status_id as string;
    // What the starting browser's waiting screen shows beside "check your email".
    const number = started.data.link_number as number;
    const keys = Object.keys(started.data).sort();
    return { browser, auth, requestId, exchangeId, statusId, link, message, number, keys };
  }

  const status = async (statusId: string) =>
    (await call(server, `/verification-srv/verificationstatus/${statusId}`, {}, {}, 'GET')).data.status;

  it('the email carries a link with a long token and no code', async function () {
    const { link, message } = await linkSent();
    expect(link.origin + link.pathname).to.equal(server.url('/verification-srv/authentication/EMAIL/link'));
    expect(link.searchParams.get('token')).to.match(/^[\w-]{43}$/);
    expect(message.text).to.not.match(/\b\d{6}\b/);
  });

  it('opened in the browser doing the login, it verifies and the login goes on to a code', async function () {
    const sent = await linkSent();
    expect(sent.number, 'the starting screen has its number').to.be.within(10, 99);
    const next = locationOf(await sent.browser.get(sent.link.pathname + sent.link.search), server);
    expect(next.pathname).to.equal('/login');
    expect(await status(sent.statusId)).to.equal('CONSUMED');
    const resume = await completeStage(
      sent.browser,
      server,
      sent.requestId,
      'TOTP',
      { sub: server.alice.id },
      { pass_code: await aliceTotp(server) },
    );
    const tokens = await redeemDemo(
      server,
      DEMO_APP,
      await codeFrom(sent.browser, server, resume, sent.auth, DEMO_APP),
      sent.auth.verifier,
    );
    expect(tokens.id_token).to.be.a('string');
    // Used: opening it again says so.
    const again = await sent.browser.get(sent.link.pathname + sent.link.search);
    expect(again.status).to.equal(400);
    expect(await again.text()).to.include('used already');
  });

  it("opened elsewhere it only asks, showing the browser that started, when, and the starting screen's number; confirmed, the login goes on where it started", async function () {
    const sent = await linkSent();
    const startedAt = server.clock.now().toISOString().slice(11, 16);
    server.clock.advance(3 * 60);
    const phone = new Browser(server);
    const ask = await phone.get(sent.link.pathname + sent.link.search);
    expect(ask.status).to.equal(200);
    const page = await ask.text();
    expect(page).to.include('Sign in to Gatehouse demo app?');
    expect(page).to.include('<dt>Started in</dt>\n      <dd>Firefox on Windows</dd>');
    expect(page).to.include(`<dd>${startedAt} UTC, about 3 min ago</dd>`);
    expect(sent.number).to.be.a('number').within(10, 99);
    expect(sent.keys).to.deep.equal(FIRST_STAGE_LINK_ANSWER);
    expect(/id="gh-link-number">(\d+)</.exec(page)?.[1]).to.equal(String(sent.number));
    expect(ask.headers.get('referrer-policy')).to.equal('no-referrer');
    expect(await status(sent.statusId), 'a GET signs nobody in').to.equal('INITIATED');
    const confirmed = await phone.postForm(sent.link.pathname, {
      exchange_id: sent.exchangeId,
      token: sent.link.searchParams.get('token')!,
      decision: 'confirm',
    });
    expect(confirmed.status).to.equal(200);
    expect(await confirmed.text()).to.include('continues there');
    expect(await status(sent.statusId)).to.equal('AUTHENTICATED');
    // The browser that started continues with its status, as for any method.
    const next = locationOf(
      await sent.browser.postForm('/login/continue', {
        requestId: sent.requestId,
        status_id: sent.statusId,
        verificationType: 'EMAIL',
      }),
      server,
    );
    expect(next.pathname).to.equal('/login');
  });

  it('"it was not me" cancels: the status is CANCELLED and the link no longer works', async function () {
    const sent = await linkSent();
    const phone = new Browser(server);
    const denied = await phone.postForm(sent.link.pathname, {
      exchange_id: sent.exchangeId,
      token: sent.link.searchParams.get('token')!,
      decision: 'deny',
    });
    expect(denied.status).to.equal(200);
    expect(await status(sent.statusId)).to.equal('CANCELLED');
    const after = await sent.browser.get(sent.link.pathname + sent.link.search);
    expect(after.status).to.equal(400);
    expect(await after.text()).to.include('cancelled');
  });

  it('a wrong token or an unknown exchange gets a page, not a sign-in; a wrong token spends an attempt', async function () {
    const sent = await linkSent();
    const wrong = new URL(sent.link);
    wrong.searchParams.set('token', 'A'.repeat(43));
    const refused = await sent.browser.get(wrong.pathname + wrong.search);
    expect(refused.status).to.equal(400);
    expect(await refused.text()).to.include('This link does not work');
    expect(await status(sent.statusId)).to.equal('INITIATED');
    const unknown = new URL(sent.link);
    unknown.searchParams.set('exchange_id', 'nope');
    expect((await sent.browser.get(unknown.pathname + unknown.search)).status).to.equal(400);
    // The right link still works (one attempt of five was spent).
    const next = locationOf(await sent.browser.get(sent.link.pathname + sent.link.search), server);
    expect(next.pathname).to.equal('/login');
  });

  it('at the first stage an unknown address gets a number too: the answer has the fields it has for alice', async function () {
    const browser = new Browser(server);
    const answer = async (email: string) => {
      const requestId = loginRequestId((await startAuthorization(browser, server, DEMO_APP)).location);
      const res = await call(server, '/verification-srv/authentication/EMAIL/initiation', {
        request_id: requestId,
        usage_type: 'PASSWORDLESS_AUTHENTICATION',
        email,
        processingType: 'LINK',
      });
      expect(res.status).to.equal(200);
      return res.data;
    };
    const unknown = await answer('nobody@example.test');
    expect(unknown.link_number).to.be.within(10, 99);
    expect(Object.keys(unknown).sort()).to.deep.equal(FIRST_STAGE_LINK_ANSWER);
  });

  it('processingType LINK for a method that sends no links, or an unknown processingType: 400 INVALID_FIELD', async function () {
    const browser = new Browser(server);
    const requestId = loginRequestId((await startAuthorization(browser, server, DEMO_APP)).location);
    for (const [method, kind] of [
      ['PASSWORD', 'LINK'],
      ['EMAIL', 'CARRIER_PIGEON'],
    ] as const) {
      const res = await call(server, `/verification-srv/authentication/${method}/initiation`, {
        request_id: requestId,
        usage_type: 'INITIAL_AUTHENTICATION',
        identifier: 'alice',
        processingType: kind,
      });
      expect(res, `${method} ${kind}`).to.include({ status: 400, code: 'INVALID_FIELD' });
    }
  });
});
