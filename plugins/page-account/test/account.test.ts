/**
 * The account page over HTTP (decisions 27, 28, 39): any user signs in through a hosted login
 * for the page's app, sees their methods, devices and sessions, and manages them; each action is
 * an event; the last way through a stage of the page's own sign-in stays. The page in Chromium
 * is account-browser.test.ts.
 */
import { expect } from 'chai';
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server';
import { admin as demoAdmin, call } from '../../../test/devices/support.js';
import { SoftAuthenticator } from '../../../test/support/soft-authenticator.js';
import { startDemoServer } from '../../../test/oauth/demo-server.js';
import {
  csrfOf,
  signInDemo,
  signInToSite,
  startConsoleServer,
  userWithTotp,
} from '../../../test/oauth/console-support.js';
import { authorize, Browser, locationOf, WEB, WEB_CB, type OAuthServer } from '../../../test/oauth/support.js';

describe('@gatehouse-auth/page-account (HTTP)', function () {
  let server: OAuthServer;

  before(async () => {
    server = await startConsoleServer();
  });
  after(() => server.close());

  const events = (userId: string, type: string) =>
    server.gatehouse.container.cradle.events.recent({ userId, types: [type], limit: 10 });

  describe('the page', () => {
    it('any user signs in, sees their methods and sessions, signs out everywhere else', async () => {
      const member = await userWithTotp(server);
      const elsewhere = new Browser(server);
      await authorize(
        elsewhere,
        server,
        { response_type: 'code', client_id: WEB.id, redirect_uri: WEB_CB, scope: 'openid', state: 'st-1234567890' },
        member,
      );
      const mine = new Browser(server);
      const page = await signInToSite(mine, server, '/account', member);
      expect(page.status).to.equal(200);
      const html = await page.text();
      expect(html).to.contain('this browser').and.to.contain('Sign out everywhere else (1)');
      const token = csrfOf(html);
      expect((await mine.postForm('/account/sessions/end-others', {})).status).to.equal(403);
      const done = locationOf(await mine.postForm('/account/sessions/end-others', { csrf: token }), server);
      expect(done.searchParams.get('done')).to.equal('others_ended');
      const sessions = await server.gatehouse.container.cradle.sessions.ofUser(member.id);
      expect(sessions).to.have.length(1);
      expect((await mine.get('/account')).status).to.equal(200);
      // The account page is not the console.
      expect((await mine.get('/console/users')).status).to.equal(303);
      expect(await events(member.id, 'account.other_sessions_ended')).to.have.length(1);
    });

    it('makes new backup codes, shown once', async () => {
      const member = await userWithTotp(server);
      const mine = new Browser(server);
      const token = csrfOf(await (await signInToSite(mine, server, '/account', member)).text());
      const res = await mine.postForm('/account/methods/BACKUPCODE/renew', { csrf: token });
      expect(res.status).to.equal(200);
      const codes = [...(await res.text()).matchAll(/<li><code>([^<]+)<\/code><\/li>/g)].map((m) => m[1]);
      expect(codes).to.have.length(10);
      const page = await (await mine.get('/account')).text();
      expect(page).to.contain('10 of 10 unused');
      expect((await mine.postForm('/account/methods/TOTP/renew', { csrf: token })).status).to.equal(404);
      const gone = await mine.postForm('/account/credentials/remove', {
        csrf: token,
        method: 'TOTP',
        credential: 'no-such-credential',
      });
      expect(gone.status).to.equal(404);
      expect(await gone.text()).to.contain('There is no such credential.');
      expect(await events(member.id, 'account.method_renewed')).to.have.length(1);
    });

    it('keeps the last way through a stage: the password cannot be removed, TOTP can (backup codes remain)', async () => {
      const member = await userWithTotp(server);
      const cradle = server.gatehouse.container.cradle;
      const mine = new Browser(server);
      const page = await (await signInToSite(mine, server, '/account', member)).text();
      expect(page).to.contain('Needed to sign in');
      const token = csrfOf(page);
      const [password] = await cradle.services.credentials(member.id, 'PASSWORD').list();
      const refused = await mine.postForm('/account/credentials/remove', {
        csrf: token,
        method: 'PASSWORD',
        credential: password!.id,
      });
      expect(refused.status).to.equal(409);
      expect(await refused.text()).to.contain('last way through a step');
      expect(await cradle.services.credentials(member.id, 'PASSWORD').list()).to.have.length(1);
      // Without backup codes TOTP is the second stage's only method: kept too.
      const [seed] = await cradle.services.credentials(member.id, 'TOTP').list();
      const body = { csrf: token, method: 'TOTP', credential: seed!.id };
      expect((await mine.postForm('/account/credentials/remove', body)).status).to.equal(409);
      expect((await mine.postForm('/account/methods/BACKUPCODE/renew', { csrf: token })).status).to.equal(200);
      const removed = locationOf(await mine.postForm('/account/credentials/remove', body), server);
      expect(removed.search).to.equal('?done=credential_removed');
      expect(await cradle.services.credentials(member.id, 'TOTP').list()).to.have.length(0);
      // A removed way to sign in ends the user's sessions: this page's sign-in too.
      expect((await mine.get('/account')).status).to.equal(303);
      const [event] = await events(member.id, 'account.credential_removed');
      expect(event!.data).to.deep.equal({ actor: member.id, method: 'TOTP', credential: seed!.id });
    });
  });

  it('the demo config: alice removes one of her passkeys on her account page', async function () {
    this.timeout(20_000);
    // localhost: the passkeys' relying party id must be a domain name.
    const demo = await startDemoServer({ host: 'localhost' });
    try {
      const register = async (name: string) => {
        const key = new SoftAuthenticator({ origin: demo.issuer });
        const body = { sub: demo.alice.id, name };
        const started = await call(demo, '/verification-actions-srv/setup/FIDO2/initiation', body, demoAdmin);
        const options = started.data.fido2_options as unknown as PublicKeyCredentialCreationOptionsJSON;
        const response = JSON.stringify(await key.register(options));
        const done = await call(
          demo,
          '/verification-actions-srv/setup/FIDO2/verification',
          { sub: demo.alice.id, fido2_client_response: response },
          demoAdmin,
        );
        expect(done.status, JSON.stringify(done)).to.equal(200);
      };
      await register('Laptop key');
      await register('Phone key');
      const b = new Browser(demo);
      const html = await (await signInDemo(b, demo, '/account')).text();
      expect(html).to.contain('Laptop key').and.to.contain('Phone key');
      const passkeys = await demo.gatehouse.container.cradle.services.credentials(demo.alice.id, 'FIDO2').list();
      const laptop = passkeys.find((c) => c.label === 'Laptop key')!;
      const res = await b.postForm('/account/credentials/remove', {
        csrf: csrfOf(html),
        method: 'FIDO2',
        credential: laptop.id,
      });
      expect(locationOf(res, demo).search).to.equal('?done=credential_removed');
      const left = await demo.gatehouse.container.cradle.services.credentials(demo.alice.id, 'FIDO2').list();
      expect(left.map((c) => c.label)).to.deep.equal(['Phone key']);
      // Removing a way to sign in signed alice out everywhere, this page too.
      expect((await b.get('/account')).status).to.equal(303);
    } finally {
      await demo.close();
    }
  });
});
