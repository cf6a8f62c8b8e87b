import { expect } from 'chai';
import { Browser, obtainCode, startServer, type OAuthServer } from './support.js';

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
});
