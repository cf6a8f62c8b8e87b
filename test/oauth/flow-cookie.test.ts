import { expect } from 'chai';
import { parseConfig } from '@gatehouse-auth/core';
import { MAX_FLOW_COOKIES } from '../../core/dist/oauth/authorize/index.js';
import { Browser, WEB, WEB_CB, authorizePath, obtainCode, pkcePair, startServer, type OAuthServer } from './support.js';

/** An authorization request of the web client (a new PKCE challenge each time). */
const webAuthorize = (extra: Record<string, string> = {}) =>
  authorizePath({
    response_type: 'code',
    client_id: WEB.id,
    redirect_uri: WEB_CB,
    scope: 'openid',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...extra,
  });

/** A finished sign-in leaves no flow cookie behind (busy browsers would hit the header limit). */
describe('OAuth: flow cookies', () => {
  let server: OAuthServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('the flow cookie is cleared when the client gets its answer; the session cookie stays', async () => {
    const user = await server.user('cookies');
    const browser = new Browser(server);
    for (let i = 0; i < 3; i++) await obtainCode(server, user, { browser, extra: { prompt: 'login' } });
    expect(browser.cookieNames().filter((n) => n.includes('gh_flow_'))).to.deep.equal([]);
    expect(browser.cookieNames().filter((n) => n.includes('gh_session'))).to.have.length(1);
  });

  it(`abandoned sign-ins keep at most ${MAX_FLOW_COOKIES} flow cookies: the oldest go, the newest still continue`, async () => {
    const browser = new Browser(server);
    const started: string[] = [];
    for (let i = 0; i < MAX_FLOW_COOKIES + 5; i++) {
      const res = await browser.get(webAuthorize({ state: `s${i}` }));
      expect(res.status).to.equal(303);
      started.push(new URL(res.headers.get('location')!, server.url('/')).searchParams.get('request_id')!);
    }
    const flowCookies = browser.cookieNames().filter((n) => n.includes('gh_flow_'));
    expect(flowCookies).to.have.length(MAX_FLOW_COOKIES);
    // The newest sign-in's page still opens (its cookie binds it); the oldest one's does not.
    expect((await browser.get(`/login?request_id=${encodeURIComponent(started.at(-1)!)}`)).status).to.equal(200);
    expect((await browser.get(`/login?request_id=${encodeURIComponent(started[0]!)}`)).status).to.equal(403);
  });

  it('flow cookies with invalid names are ignored, and 300 of them get a bounded number of clears', async () => {
    const params = webAuthorize();
    const invalid = Array.from({ length: 12 }, (_, i) => `gh_flow_a b${i}=x`).join('; ');
    const many = Array.from({ length: 300 }, (_, i) => `gh_flow_${i.toString(16).padStart(16, '0')}=v`).join('; ');
    for (const cookie of [invalid, many, `${many}; ${invalid}`]) {
      const res = await fetch(server.url(params), { headers: { Cookie: cookie }, redirect: 'manual' });
      expect(res.status).to.equal(303);
      const setCookies = res.headers.getSetCookie();
      // The new flow's cookie plus at most MAX_FLOW_COOKIES clears; never an invalid name.
      expect(setCookies.length).to.be.at.most(MAX_FLOW_COOKIES + 1);
      expect(setCookies.join('\n')).to.not.include('gh_flow_a b');
      expect(setCookies.join('\n').length).to.be.below(4096);
    }
  });

  it('one address may start oauth.authorize_per_ip_per_minute requests a minute; the next gets a 429 page', async () => {
    const limit = parseConfig({}, {}).oauth.authorize_per_ip_per_minute;
    expect(limit).to.equal(300);
    const limited = await startServer({ minimal: true });
    try {
      const start = () => fetch(limited.url(webAuthorize()), { redirect: 'manual' });
      const statuses: number[] = [];
      for (let i = 0; i < limit; i++) statuses.push((await start()).status);
      expect(new Set(statuses)).to.deep.equal(new Set([303]));
      const refused = await start();
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
      expect(refused.headers.get('content-type')).to.match(/^text\/html/);
      expect(await refused.text()).to.include('temporarily_unavailable');
      // Without server.trust_proxy, a made-up X-Forwarded-For is not an address of its own.
      for (const forwarded of ['203.0.113.7', '198.51.100.1, 203.0.113.8']) {
        const rotated = await fetch(limited.url(webAuthorize()), {
          redirect: 'manual',
          headers: { 'X-Forwarded-For': forwarded },
        });
        expect(rotated.status, forwarded).to.equal(429);
      }
    } finally {
      await limited.close();
    }
  });
});
