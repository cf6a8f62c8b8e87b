import { expect } from 'chai';
import {
  ADMIN_TOKEN,
  authorizePath,
  Browser,
  locationOf,
  obtainCode,
  pkcePair,
  postForm,
  SPA,
  startServer,
  WEB,
  WEB_CB,
  type OAuthServer,
} from './support.js';

/** Regressions of the security review: lockout by others, sessions that outlive a password. */
describe('OAuth: review regressions', () => {
  let server: OAuthServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('nobody can lock a public client out by sending it secrets', async () => {
    for (let i = 0; i < 25; i++) {
      const res = await postForm(server, '/oauth/token', {
        grant_type: 'client_credentials',
        client_id: SPA.id,
        client_secret: 'guess',
      });
      expect(res.status).to.equal(401);
    }
    const normal = await postForm(server, '/oauth/token', {
      grant_type: 'refresh_token',
      client_id: SPA.id,
      refresh_token: 'x',
    });
    expect(normal.status).to.not.equal(429);
  });

  it("a new password ends the user's browser sessions: the next authorize asks for a login again", async () => {
    const user = await server.user('session');
    const browser = new Browser(server);
    await obtainCode(server, user, { browser });
    const change = await fetch(server.url('/verification-actions-srv/setup/PASSWORD/initiation'), {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sub: user.id, password: 'an entirely new passphrase 77' }),
    });
    expect(change.status).to.equal(200);
    const { challenge } = pkcePair();
    const again = await browser.get(
      authorizePath({
        response_type: 'code',
        client_id: WEB.id,
        redirect_uri: WEB_CB,
        scope: 'openid',
        state: 's',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    );
    expect(locationOf(again, server).pathname).to.equal('/login');
  });
});

describe('OAuth: silent sign-on re-checks the user', () => {
  let server: OAuthServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it("a disabled user's session no longer signs anyone in: the login page is shown", async () => {
    const user = await server.user('disabled');
    const browser = new Browser(server);
    await obtainCode(server, user, { browser });
    await server.gatehouse.container.cradle.sql.exec(`UPDATE users SET status = 'disabled' WHERE id = :id`, {
      id: user.id,
    });
    const { challenge } = pkcePair();
    const again = await browser.get(
      authorizePath({
        response_type: 'code',
        client_id: WEB.id,
        redirect_uri: WEB_CB,
        scope: 'openid',
        state: 's',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    );
    expect(locationOf(again, server).pathname).to.equal('/login');
  });
});
