/**
 * The walkthrough as the README gives it (`npm run demo`): the demo signs alice in through its
 * own client — password, then a backup code — and shows the verified ID token's claims.
 */
import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Browser, completeStage, locationOf, loginRequestId } from '../../../test/oauth/support.js';
import { ALICE, startDemo, type RunningDemo } from '../src/index.js';

describe('gatehouse-demo: the walkthrough in one command', function () {
  this.timeout(30_000);
  let demo: RunningDemo;

  before(async function () {
    demo = await startDemo({ port: 0, clientPort: 0, dataDir: mkdtempSync(path.join(tmpdir(), 'gh-demo-')) });
  });
  after(() => demo?.close());

  it('creates alice with a password, TOTP and ten backup codes', function () {
    expect(demo.alice.backupCodes).to.have.length(10);
    expect(demo.alice.otpauthUri).to.match(/^otpauth:\/\/totp\/.*secret=/);
    expect(demo.adminToken).to.have.length.of.at.least(32);
  });

  it('signs alice in from the demo client: password, a backup code, then the verified claims', async function () {
    const site = { issuer: demo.issuer, url: (p: string) => `${demo.issuer}${p}` };
    const browser = new Browser(site);
    const toGatehouse = locationOf(await browser.get(demo.clientUrl), site);
    expect(toGatehouse.origin).to.equal(demo.issuer);
    const login = locationOf(await browser.get(toGatehouse.href), site);
    const requestId = loginRequestId(login);
    const second = await completeStage(
      browser,
      site,
      requestId,
      'PASSWORD',
      { identifier: ALICE.username },
      {
        password: ALICE.password,
      },
    );
    expect(loginRequestId(second)).to.equal(requestId);
    const resume = await completeStage(
      browser,
      site,
      requestId,
      'BACKUPCODE',
      { sub: demo.alice.id },
      {
        pass_code: demo.alice.backupCodes[0]!,
      },
    );
    // The resume step may offer a passkey first ("Not now" goes on); the app gets the code.
    let next = locationOf(await browser.get(resume.href), site);
    for (let hops = 0; next.origin === demo.issuer && hops < 3; hops++) {
      next = locationOf(await browser.get(next.href), site);
    }
    expect(next.pathname).to.equal('/callback');
    const shown = await browser.get(next.href);
    const page = (await shown.text()).replaceAll('&quot;', '"');
    expect(shown.status, page).to.equal(200);
    expect(page).to.include('Signed in as alice');
    expect(page).to.match(/"sub": "[0-9a-f-]{36}"/);
    expect(page).to.include(`"email": "${ALICE.email}"`);
    expect(page).to.match(/id="amr">pwd, [a-z]+</);

    // Sign out goes through Gatehouse's end-session endpoint: the session ends, the browser comes
    // back to the client, and the next sign-in asks again (issue 29: it used to sign in silently).
    const signOut = new URL(/id="sign-out" href="([^"]+)"/.exec(page)![1]!.replaceAll('&amp;', '&'));
    expect(signOut.origin + signOut.pathname).to.equal(`${demo.issuer}/session/end_session`);
    const back = locationOf(await browser.get(signOut.pathname + signOut.search), site);
    expect(back.href).to.equal(new URL('/signed-out', demo.clientUrl).href);
    const again = locationOf(await browser.get(locationOf(await browser.get(demo.clientUrl), site).href), site);
    expect(again.pathname).to.equal('/login');
  });

  it('a callback it did not start (a forged state) is refused', async function () {
    const res = await fetch(`${demo.clientUrl}callback?state=forged&code=x&iss=${encodeURIComponent(demo.issuer)}`);
    expect(res.status).to.equal(400);
    expect(await res.text()).to.include('Unknown sign-in');
  });

  it('a port in use stops a second demo with EADDRINUSE before it touches anything', async function () {
    const port = Number(new URL(demo.issuer).port);
    const err = await startDemo({ port, clientPort: 0, dataDir: mkdtempSync(path.join(tmpdir(), 'gh-demo-')) }).then(
      () => null,
      (e: NodeJS.ErrnoException) => e,
    );
    expect(err?.code).to.equal('EADDRINUSE');
  });
});
