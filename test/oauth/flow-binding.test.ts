import { expect } from 'chai';
import {
  authorizePath,
  Browser,
  locationOf,
  loginRequestId,
  PASSWORD,
  pkcePair,
  startServer,
  WEB,
  WEB_CB,
  type OAuthServer,
} from './support.js';

/**
 * A login flow belongs to the browser that started it at /authorize. A victim sent an
 * attacker's login link must not sign in for the attacker's browser (login-flow hijack).
 */
describe('OAuth: the login flow is bound to its browser', () => {
  let server: OAuthServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  async function attackerLink(): Promise<{ attacker: Browser; requestId: string; loginPath: string }> {
    const attacker = new Browser(server);
    const { challenge } = pkcePair();
    const res = await attacker.get(
      authorizePath({
        response_type: 'code',
        client_id: WEB.id,
        redirect_uri: WEB_CB,
        scope: 'openid',
        state: 'attacker',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    );
    const location = locationOf(res, server);
    return { attacker, requestId: loginRequestId(location), loginPath: location.pathname + location.search };
  }

  it("another browser opening the link gets an error page, not the attacker's login form", async () => {
    const { loginPath } = await attackerLink();
    const victim = new Browser(server);
    const page = await victim.get(loginPath);
    expect(page.status).to.equal(403);
    expect(page.headers.get('location')).to.equal(null);
    expect(await page.text()).to.include('started in another browser');
  });

  it('a proof made in another browser cannot continue the flow: 403 FLOW_NOT_BOUND, and the attacker gets nothing', async () => {
    const { attacker, requestId } = await attackerLink();
    const user = await server.user('victim');
    const post = (path: string, body: Record<string, string>) =>
      fetch(server.url(path), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<{ data: Record<string, { exchange_id: string } & string> }>);
    const initiated = await post('/verification-srv/authentication/PASSWORD/initiation', {
      request_id: requestId,
      usage_type: 'INITIAL_AUTHENTICATION',
      identifier: user.username,
    });
    const verified = await post('/verification-srv/authentication/PASSWORD/verification', {
      exchange_id: initiated.data.exchange_id!.exchange_id,
      password: PASSWORD,
    });
    const victim = new Browser(server);
    const cont = await victim.request('/login/continue', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: new URLSearchParams({
        requestId,
        status_id: String(verified.data.status_id),
        verificationType: 'PASSWORD',
      }).toString(),
    });
    expect(cont.status).to.equal(403);
    expect(((await cont.json()) as { error: { code: string } }).error.code).to.equal('FLOW_NOT_BOUND');
    // The flow did not advance, so the attacker's resume finds nothing to take.
    const resume = await attacker.get(`/api/oauth2/authorize/resume?request_id=${encodeURIComponent(requestId)}`);
    expect(resume.status).to.equal(400);
    expect(resume.headers.get('location')).to.equal(null);
  });
});
