/**
 * The context of a sign-in completed on a phone is the browser that started it. The device's
 * own call (the authenticator app's user agent and address) is not a new sign-in context: before,
 * fds-new-context judged it, so a user's first PUSH ended in an unexplained extra stage and a false
 * "needed an extra check" notice, and the phone's call, once known, hid a browser never seen before.
 */
import { expect } from 'chai';
import type { Authenticator } from '@gatehouse-auth/authenticator';
import { Browser, loginRequestId } from '../oauth/support.js';
import { ALICE_PASSWORD, startAuthorization } from '../oauth/demo-server.js';
import { DEMO_APP, boundDevice, onlyPush, startDemoServer, type DemoServer } from './support.js';

const UA = {
  chromeLinux: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
  firefoxWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0',
};

/** A browser that names itself in every request, as real ones do. */
class NamedBrowser extends Browser {
  constructor(
    server: DemoServer,
    private readonly userAgent: string,
  ) {
    super(server);
  }

  override request(pathOrUrl: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('User-Agent', this.userAgent);
    return super.request(pathOrUrl, { ...init, headers });
  }
}

describe('a push is judged in the context of the browser that started the login', function () {
  let server: DemoServer;
  let device: Authenticator;

  before(async function () {
    server = await startDemoServer({
      // PUSH may also complete the first stage, so a browser can start a login with it.
      configure: (config) => {
        const app = config.apps.find((a) => a.client_id === DEMO_APP.id)!;
        app.login_stages = [['PASSWORD', 'PUSH'], ...(app.login_stages ?? []).slice(1)];
      },
    });
    device = await boundDevice(server, { name: "Alice's phone" });
    // Alice signs in from Chrome on Linux: enough successes (fds-new-context's min_history, 3) to
    // compare a new context with.
    for (let i = 0; i < 3; i++) {
      const browser = new NamedBrowser(server, UA.chromeLinux);
      expect((await passwordStage(browser, await loginOf(browser))).pathname).to.equal('/login');
    }
  });
  after(() => server?.close());

  const cradle = () => server.gatehouse.container.cradle;

  /** A JSON call the browser makes (the hosted page's fetch), asserted 200: the data. */
  async function fromBrowser(browser: Browser, path: string, body: Record<string, string>) {
    const res = await browser.request(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { data: Record<string, unknown> };
    expect(res.status, JSON.stringify(json)).to.equal(200);
    return json.data as {
      exchange_id: { exchange_id: string };
      status_id: string;
      push_selected_number: number;
    };
  }

  /** A demo-app login started in `browser`: its request_id. */
  async function loginOf(browser: Browser): Promise<string> {
    return loginRequestId((await startAuthorization(browser, server, DEMO_APP)).location);
  }

  /** Continues the login with the status, as the page does: where the browser goes next. */
  async function continueWith(browser: Browser, requestId: string, statusId: string, method: string) {
    // Each proof a second apart: the history's order is the order of the sign-ins.
    server.clock.advance(1);
    const res = await browser.postForm('/login/continue', {
      requestId,
      status_id: statusId,
      verificationType: method,
    });
    expect(res.status).to.equal(303);
    return new URL(res.headers.get('location')!, server.issuer);
  }

  /** Alice's password, all of it from `browser`: where the browser goes next. */
  async function passwordStage(browser: Browser, requestId: string) {
    const path = '/verification-srv/authentication/PASSWORD';
    const started = await fromBrowser(browser, `${path}/initiation`, {
      request_id: requestId,
      usage_type: 'INITIAL_AUTHENTICATION',
      identifier: 'alice',
    });
    const verified = await fromBrowser(browser, `${path}/verification`, {
      exchange_id: started.exchange_id.exchange_id,
      password: ALICE_PASSWORD,
    });
    return continueWith(browser, requestId, verified.status_id, 'PASSWORD');
  }

  /** The security notices alice was sent (or that were recorded as failed or skipped). */
  async function notices(): Promise<(string | null)[]> {
    await cradle().securityEvents.drain();
    const events = await cradle().events.recent({
      types: ['notification.sent', 'notification.failed', 'notification.skipped'],
      userId: server.alice.id,
      limit: 20,
    });
    return events.map((e) => e.outcome);
  }

  /** The push's verification as history keeps it: the user agent of the sign-in it records. */
  async function lastPushSuccess() {
    const [success] = await cradle().events.recent({
      types: ['verification.success'],
      userId: server.alice.id,
      method: 'PUSH',
      limit: 1,
    });
    return success!;
  }

  it("the first PUSH from a known browser completes the login: no extra stage, no notice, though the phone's app is new", async function () {
    const browser = new NamedBrowser(server, UA.chromeLinux);
    const requestId = await loginOf(browser);
    expect((await passwordStage(browser, requestId)).pathname).to.equal('/login');
    const started = await fromBrowser(browser, '/verification-srv/authentication/PUSH/initiation', {
      request_id: requestId,
      usage_type: 'MULTIFACTOR_AUTHENTICATION',
      sub: server.alice.id,
    });
    await device.approve(await onlyPush(device), { number: started.push_selected_number });

    const next = await continueWith(browser, requestId, started.status_id, 'PUSH');
    expect(next.pathname).to.equal('/api/oauth2/authorize/resume');
    const flow = (await cradle().flows.get(requestId))!;
    expect(flow.status).to.equal('completed');
    expect(flow.stages).to.have.length(DEMO_APP_STAGES);
    expect(await notices()).to.deep.equal([]);
    // The history learns the browser, not the phone: the next sign-in is compared with Chrome.
    const success = await lastPushSuccess();
    expect([success.reason, success.data.userAgent]).to.deep.equal([null, UA.chromeLinux]);
  });

  it('a browser never seen before is still stepped up when the phone approves its push, and alice is told', async function () {
    const browser = new NamedBrowser(server, UA.firefoxWindows);
    const requestId = await loginOf(browser);
    const started = await fromBrowser(browser, '/verification-srv/authentication/PUSH/initiation', {
      request_id: requestId,
      usage_type: 'PASSWORDLESS_AUTHENTICATION',
      identifier: 'alice',
    });
    // The first stage starts the push after its answer (an unknown identifier must look the same).
    await cradle().verification.idle();
    await device.approve(await onlyPush(device), { number: started.push_selected_number });

    // One more stage than the app asks for: the step-up, judged on Firefox, not on the phone
    // (whose app the first test made known).
    expect((await continueWith(browser, requestId, started.status_id, 'PUSH')).pathname).to.equal('/login');
    const flow = (await cradle().flows.get(requestId))!;
    expect(flow.stages).to.have.length(DEMO_APP_STAGES + 1);
    expect(await notices()).to.deep.equal(['sign_in_challenged']);
    const success = await lastPushSuccess();
    expect([success.reason, success.data.userAgent]).to.deep.equal(['step_up', UA.firefoxWindows]);
  });
});

/** The demo app's login: a first stage, then a second factor. */
const DEMO_APP_STAGES = 2;
