/**
 * The end-session endpoint as a plugin (issue 26): discovery names it only when the plugin is
 * loaded, and without it `/session/end_session` answers 404 while the hosted login page shows
 * who is signed in without a sign-out form it could not post. With it: the endpoint's own
 * refusals with their status, its pages in English and German (the plugin's catalogs), the
 * confirmation bound to the session cookie, and "Not you? Sign out" from the hosted page.
 * test/oauth/logout.test.ts covers the endpoint with back-channel logout (the core's).
 */
import { expect } from 'chai';
import { registerWithFakes } from '@gatehouse-auth/testing';
import plugin from '../src/index.js';
import {
  Browser,
  MFA,
  WEB,
  authorizePath,
  enrolTotp,
  locationOf,
  obtainCode,
  passwordStage,
  pkcePair,
  redeem,
  startServer,
  loginRequestId,
  type OAuthServer,
} from '../../../test/oauth/support.js';

const PLUGIN = '@gatehouse-auth/oauth-end-session';
const BYE = { id: 'bye', secret: 'bye-secret-0123456789abcdef0123456789abcdef' };
const BYE_CB = 'https://bye.example.test/cb';
const BYE_OUT = 'https://bye.example.test/signed-out';
const byeApp = {
  client_id: BYE.id,
  name: 'Bye App',
  client_secret: BYE.secret,
  redirect_uris: [BYE_CB],
  post_logout_redirect_uris: [BYE_OUT],
  grant_types: ['authorization_code'],
  scopes: ['openid'],
  login_stages: [['PASSWORD']],
};

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? null;
const titleOf = (page: string) => /<title>([^<]*)<\/title>/.exec(page)?.[1] ?? null;

/** The MFA app's second stage on the hosted page, for a user a first stage named. */
async function secondStage(server: OAuthServer, browser: Browser, signedIn: boolean) {
  const params = {
    client_id: MFA.id,
    response_type: 'code',
    scope: 'openid',
    redirect_uri: 'https://mfa.example.test/cb',
    state: 'keep-me',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  };
  const login = locationOf(await browser.get(authorizePath(params)), server);
  const requestId = loginRequestId(login);
  if (!signedIn) {
    const user = await server.user('stranger');
    await enrolTotp(server, user);
    const next = await passwordStage(browser, server, requestId, user);
    expect(next.pathname).to.equal('/login');
  }
  const page = await browser.get(`/login?request_id=${requestId}`);
  expect(page.status).to.equal(200);
  return { requestId, html: await page.text() };
}

/** A browser whose session is a user's (signed in to the web app), the user's TOTP set up. */
async function signedInBrowser(server: OAuthServer) {
  const user = await server.user('leaver');
  await enrolTotp(server, user);
  const browser = new Browser(server);
  await obtainCode(server, user, { browser });
  return { user, browser };
}

describe('oauth-end-session: what it registers', function () {
  it('the endpoint under /session, discovery’s end_session_endpoint, and English and German with the same keys and placeholders', async () => {
    const registered = await registerWithFakes(plugin);
    expect(registered.routes.map((r) => r.path)).to.deep.equal(['/session']);
    expect([...registered.metadata]).to.deep.equal([
      ['end_session_endpoint', `${registered.api.web.issuer}/session/end_session`],
    ]);
    const { en, de } = registered.catalogs;
    expect(Object.keys(de!).sort()).to.deep.equal(Object.keys(en!).sort());
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const key of Object.keys(en!)) expect(placeholders(de![key]!), key).to.deep.equal(placeholders(en![key]!));
  });
});

describe('oauth-end-session left out of plugins:', function () {
  let server: OAuthServer;
  before(async () => {
    server = await startServer({ without: [PLUGIN] });
  });
  after(() => server?.close());

  it('/session/end_session answers 404 (GET and POST); discovery names no end_session_endpoint', async () => {
    const browser = new Browser(server);
    expect((await browser.get(`/session/end_session?client_id=${WEB.id}`)).status).to.equal(404);
    expect((await browser.postForm('/session/end_session', { confirm: 'yes', csrf: 'x' })).status).to.equal(404);
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const meta = (await (await fetch(server.url(path))).json()) as Record<string, unknown>;
      expect(meta, path).to.not.have.property('end_session_endpoint');
      // Back-channel logout is its own plugin's (decision 71): sessions still end elsewhere, and apps are told.
      expect(meta.backchannel_logout_supported, path).to.equal(true);
    }
  });

  it('the hosted page shows who is signed in, without a sign-out form or a "Not you?" that signs them in again', async () => {
    const { user, browser } = await signedInBrowser(server);
    const { html } = await secondStage(server, browser, true);
    expect(html).to.include(`Signing in as <strong>${user.username}</strong>`);
    expect(html).to.not.include('id="gh-sign-out"');
    expect(html).to.not.include('/session/end_session');
    expect(html).to.not.include('id="gh-not-you"');
  });

  it('a login no session of theirs carries keeps "Not you?": the same request without its login_hint', async () => {
    const { html } = await secondStage(server, new Browser(server), false);
    expect(html).to.include('Signing in as <strong>stranger');
    const link = /<a href="([^"]+)" id="gh-not-you"/.exec(html)?.[1];
    expect(link).to.be.a('string');
    const restart = new URL(link!.replaceAll('&amp;', '&'), server.issuer);
    expect(restart.pathname).to.equal('/api/oauth2/authorize/');
    expect(restart.searchParams.get('state')).to.equal('keep-me');
  });
});

describe('oauth-end-session: the endpoint and its pages', function () {
  let server: OAuthServer;
  before(async () => {
    server = await startServer({ apps: [byeApp] });
  });
  after(() => server?.close());

  it('discovery names the endpoint (both documents)', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const meta = (await (await fetch(server.url(path))).json()) as Record<string, unknown>;
      expect(meta.end_session_endpoint, path).to.equal(`${server.issuer}/session/end_session`);
    }
  });

  it('a repeated parameter, an unknown app, a client_id the hint does not name, a foreign hint → 400 pages', async () => {
    const browser = new Browser(server);
    const repeated = await browser.get(`/session/end_session?client_id=${WEB.id}&client_id=${BYE.id}`);
    expect(repeated.status).to.equal(400);
    expect(await repeated.text()).to.include('A parameter appears more than once or is malformed. (invalid_request)');

    const unknown = await browser.get('/session/end_session?client_id=nobody');
    expect(unknown.status).to.equal(400);
    const page = await unknown.text();
    expect(titleOf(page)).to.equal('This sign-out request cannot be completed');
    expect(page).to.include('The app (client_id) is not registered. (invalid_request)');
    expect(unknown.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");

    const user = await server.user('hinted');
    const got = await obtainCode(server, user, { clientId: BYE.id, redirectUri: BYE_CB, scope: 'openid' });
    const idToken = (await redeem(server, got, BYE)).body.id_token as string;
    const mismatch = await browser.get(`/session/end_session?id_token_hint=${idToken}&client_id=${WEB.id}`);
    expect(mismatch.status).to.equal(400);
    expect(await mismatch.text()).to.include('The client_id does not match the id_token_hint.');
    const [h, p] = idToken.split('.');
    const foreign = await browser.get(`/session/end_session?id_token_hint=${h}.${p}.${'A'.repeat(43)}`);
    expect(foreign.status).to.equal(400);
    expect(await foreign.text()).to.include('The id_token_hint is not an ID token of this server.');
  });

  it('German pages by ui_locales: the error, the confirmation and "signed out" (the plugin’s catalogs)', async () => {
    const stranger = new Browser(server);
    const refused = await stranger.get(
      `/session/end_session?client_id=${BYE.id}&post_logout_redirect_uri=${encodeURIComponent(BYE_CB)}&ui_locales=de`,
    );
    expect(refused.status).to.equal(400);
    const errorPage = await refused.text();
    expect(errorPage).to.include('<html lang="de"');
    expect(titleOf(errorPage)).to.equal('Diese Abmeldeanfrage kann nicht abgeschlossen werden');
    expect(errorPage).to.include('(invalid_request)');

    // No session: nothing to confirm, the user is told they are signed out.
    const none = await stranger.get(`/session/end_session?client_id=${BYE.id}&ui_locales=de`);
    expect(none.status).to.equal(200);
    const done = await none.text();
    expect(titleOf(done)).to.equal('Abgemeldet');
    expect(done).to.include('Sie sind von Bye App und allen Apps abgemeldet');

    const { browser } = await signedInBrowser(server);
    const asked = await browser.get(`/session/end_session?client_id=${BYE.id}&ui_locales=de&state=s1`);
    expect(asked.status).to.equal(200);
    const confirm = await asked.text();
    expect(titleOf(confirm)).to.equal('Abmelden?');
    expect(confirm).to.include('Bye App möchte Sie abmelden.');
    expect(confirm).to.include('name="ui_locales" value="de"');
    expect(confirm).to.include('name="state" value="s1"');
    // The confirmation's redirect goes to the app: its post-logout origin is a form target.
    expect(asked.headers.get('content-security-policy'))
      .to.include('form-action')
      .and.include('https://bye.example.test');
  });

  it('the confirmation: a stale token → 403 and still signed in; the right one signs out and goes back with state', async () => {
    const { user, browser } = await signedInBrowser(server);
    const q = `client_id=${BYE.id}&post_logout_redirect_uri=${encodeURIComponent(BYE_OUT)}&state=s2`;
    const csrf = csrfOf(await (await browser.get(`/session/end_session?${q}`)).text());
    expect(csrf).to.be.a('string');
    const forged = await browser.postForm('/session/end_session', { confirm: 'yes', csrf: 'x'.repeat(43) });
    expect(forged.status).to.equal(403);
    expect(await forged.text()).to.include('The form has expired. Sign out again.');
    expect(browser.cookies.get('gh_session')).to.be.a('string');

    const out = await browser.postForm('/session/end_session', {
      confirm: 'yes',
      csrf: csrf!,
      client_id: BYE.id,
      post_logout_redirect_uri: BYE_OUT,
      state: 's2',
    });
    expect(locationOf(out, server).href).to.equal(`${BYE_OUT}?state=s2`);
    expect(out.headers.get('referrer-policy')).to.equal('no-referrer');
    expect(browser.cookies.get('gh_session')).to.equal(undefined);
    const ended = await server.gatehouse.container.cradle.events.recent({ types: ['session.ended'], userId: user.id });
    expect(ended.map((e) => e.reason)).to.deep.equal(['user']);
  });

  it("a hint for this browser's user signs out at once (reason rp_initiated), to the registered address", async () => {
    const user = await server.user('hinted');
    const got = await obtainCode(server, user, { clientId: BYE.id, redirectUri: BYE_CB, scope: 'openid' });
    const idToken = (await redeem(server, got, BYE)).body.id_token as string;
    const q = new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: BYE_OUT, state: 's3' });
    const out = await got.browser.get(`/session/end_session?${q.toString()}`);
    expect(locationOf(out, server).href).to.equal(`${BYE_OUT}?state=s3`);
    expect(got.browser.cookies.get('gh_session')).to.equal(undefined);
    const ended = await server.gatehouse.container.cradle.events.recent({ types: ['session.ended'], userId: user.id });
    expect(ended.map((e) => e.reason)).to.deep.equal(['rp_initiated']);
  });

  it('"Not you? Sign out" on the hosted page ends the session and starts the login again from its first stage', async () => {
    const { user, browser } = await signedInBrowser(server);
    const { requestId, html } = await secondStage(server, browser, true);
    expect(html).to.include(`Signed in as <strong>${user.username}</strong>`);
    expect(html).to.include('id="gh-sign-out"');
    const out = await browser.postForm('/session/end_session', {
      csrf: csrfOf(html)!,
      request_id: requestId,
      confirm: 'yes',
    });
    const restart = locationOf(out, server);
    expect(restart.pathname).to.equal('/api/oauth2/authorize/');
    expect(restart.searchParams.get('state')).to.equal('keep-me');
    const fresh = locationOf(await browser.get(restart.pathname + restart.search), server);
    const again = await (await browser.get(fresh.pathname + fresh.search)).text();
    expect(again).to.include('id="gh-identifier"');
    expect(again).to.not.include('Signed in as');
  });
});
