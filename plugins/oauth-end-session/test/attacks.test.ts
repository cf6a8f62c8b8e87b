/**
 * The end-session endpoint attacked from outside (security review, decision 61): where
 * `post_logout_redirect_uri` may send the browser, which tokens count as an `id_token_hint`, the
 * confirmation's binding to the session, what its pages echo and the headers they carry, and
 * "Not you?" with another browser's login. Every refusal with its status and text; the session
 * is checked alive after each one.
 */
import { expect } from 'chai';
import { exportSPKI, SignJWT, generateKeyPair, decodeProtectedHeader, type JWTPayload } from 'jose';
import { logoutToken as backchannelLogoutToken } from '@gatehouse-auth/oauth-backchannel-logout';
import {
  Browser,
  MFA,
  WEB,
  authorizePath,
  decodeJwtParts,
  enrolTotp,
  locationOf,
  loginRequestId,
  obtainCode,
  pkcePair,
  redeem,
  startServer,
  type OAuthServer,
  type TestUser,
} from '../../../test/oauth/support.js';

const BYE = { id: 'bye', secret: 'bye-secret-0123456789abcdef0123456789abcdef' };
const BYE_CB = 'https://bye.example.test/cb';
const BYE_OUT = 'https://bye.example.test/signed-out';
const ALSO_OUT = 'https://bye-also.example.test/out';
const byeApp = {
  client_id: BYE.id,
  name: 'Bye App',
  client_secret: BYE.secret,
  redirect_uris: [BYE_CB],
  post_logout_redirect_uris: [BYE_OUT, ALSO_OUT],
  grant_types: ['authorization_code'],
  scopes: ['openid'],
  login_stages: [['PASSWORD']],
};
const NOT_OURS = 'The id_token_hint is not an ID token of this server.';
const MISMATCH = 'The client_id does not match the id_token_hint.';
const UNREGISTERED = 'The post_logout_redirect_uri is not registered for this app.';
const EXPIRED_FORM = 'The form has expired. Sign out again.';
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const XSS = '"><script>alert(1)</script>';

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? null;
const b64 = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');

describe('oauth-end-session under attack (security review)', function () {
  let server: OAuthServer;
  before(async () => {
    server = await startServer({ apps: [byeApp] });
  });
  after(() => server?.close());

  const end = (browser: Browser, params: Record<string, string>) =>
    browser.get(`/session/end_session?${new URLSearchParams(params).toString()}`);

  /** Whether the session a browser's cookie names is still alive (not ended). */
  async function alive(browser: Browser): Promise<boolean> {
    const cookie = browser.cookies.get('gh_session');
    return cookie !== undefined && (await server.gatehouse.container.cradle.sessions.get(cookie)) !== null;
  }

  /** A browser signed in to Bye App, with the tokens it got. */
  async function signedIn(prefix = 'leaver') {
    const user = await server.user(prefix);
    const got = await obtainCode(server, user, { clientId: BYE.id, redirectUri: BYE_CB, scope: 'openid' });
    const tokens = (await redeem(server, got, BYE)).body as { id_token: string; access_token: string };
    return { user, browser: got.browser, tokens };
  }

  /** A token signed by this server's current key, with the header and claims given. */
  async function ours(claims: JWTPayload, header: Record<string, unknown> = { typ: 'JWT' }): Promise<string> {
    const signer = await server.gatehouse.container.cradle.keys.signer();
    return new SignJWT(claims)
      .setProtectedHeader({ ...header, alg: signer.alg, kid: signer.kid })
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(signer.key);
  }

  /** A refused request: the status, the error text, no redirect, the session alive. */
  async function refused(res: Response, browser: Browser, status: number, text: string) {
    expect(res.status).to.equal(status);
    expect(res.headers.get('location')).to.equal(null);
    expect(await res.text()).to.include(`${text} (invalid_request)`);
    expect(await alive(browser)).to.equal(true);
  }

  describe('the id_token_hint: only ID tokens of this server', function () {
    let user: TestUser;
    let browser: Browser;
    let tokens: { id_token: string; access_token: string };
    before(async () => {
      ({ user, browser, tokens } = await signedIn());
    });

    it('our ID tokens: typ JWT, aud the one app, azp that app', () => {
      const { header, payload } = decodeJwtParts(tokens.id_token);
      expect(header.typ).to.equal('JWT');
      expect(payload.aud).to.equal(BYE.id);
      expect(payload.azp).to.equal(BYE.id);
    });

    it('another issuer, an unknown kid, alg none, HS256 keyed with our public key, another key → 400, still signed in', async () => {
      const good = { sub: user.id, aud: BYE.id, azp: BYE.id };
      const { kid } = decodeProtectedHeader(tokens.id_token);
      const jwk = (
        (await (await fetch(server.url('/.well-known/jwks.json'))).json()) as { keys: { kid: string }[] }
      ).keys.find((k) => k.kid === kid)!;
      const other = await generateKeyPair('RS256');
      const hs = (secret: Uint8Array) =>
        new SignJWT({ ...good, iss: server.issuer })
          .setProtectedHeader({ alg: 'HS256', kid: kid!, typ: 'JWT' })
          .setIssuedAt()
          .sign(secret);
      const hints = {
        issuer: await ours({ ...good, iss: 'https://evil.example' }),
        // Our signature under a header naming a key we never had.
        kid: (await ours({ ...good, iss: server.issuer })).replace(/^[^.]+/, b64({ alg: 'RS256', kid: 'gone' })),
        none: `${b64({ alg: 'none', typ: 'JWT', kid })}.${b64({ ...good, iss: server.issuer })}.`,
        hsJwk: await hs(new TextEncoder().encode(JSON.stringify(jwk))),
        hsPem: await hs(
          new TextEncoder().encode(
            await exportSPKI((await import('node:crypto')).createPublicKey({ key: jwk as never, format: 'jwk' })),
          ),
        ),
        otherKey: await new SignJWT({ ...good, iss: server.issuer })
          .setProtectedHeader({ alg: 'RS256', kid: kid!, typ: 'JWT' })
          .setIssuedAt()
          .sign(other.privateKey),
      };
      for (const [name, hint] of Object.entries(hints)) {
        const res = await end(browser, { id_token_hint: hint, post_logout_redirect_uri: BYE_OUT });
        expect(res.status, name).to.equal(400);
        expect(await res.text(), name).to.include(`${NOT_OURS} (invalid_request)`);
        expect(res.headers.get('location'), name).to.equal(null);
      }
      expect(await alive(browser)).to.equal(true);
    });

    it('our access token (typ at+jwt, aud the app) is no hint → 400, still signed in', async () => {
      expect(decodeJwtParts(tokens.access_token).header.typ).to.equal('at+jwt');
      expect(decodeJwtParts(tokens.access_token).payload.aud).to.equal(BYE.id);
      const res = await end(browser, { id_token_hint: tokens.access_token, post_logout_redirect_uri: BYE_OUT });
      await refused(res, browser, 400, NOT_OURS);
    });

    it('our back-channel logout token (typ logout+jwt) is no hint → 400, still signed in', async () => {
      const sid = decodeJwtParts(tokens.id_token).payload.sid as string;
      const { services, clients } = server.gatehouse.container.cradle;
      const logoutToken = await backchannelLogoutToken(services, clients.get(BYE.id)!, user.id, sid);
      expect(decodeJwtParts(logoutToken).header.typ).to.equal('logout+jwt');
      const res = await end(browser, { id_token_hint: logoutToken, post_logout_redirect_uri: BYE_OUT });
      await refused(res, browser, 400, NOT_OURS);
    });

    it('an ID token without typ and an expired one are still hints (RP-Initiated Logout §2)', async () => {
      const past = Math.floor(Date.now() / 1000) - 7200;
      const claims = { iss: server.issuer, sub: user.id, aud: BYE.id, iat: past, exp: past + 60 };
      const untyped = await ours(claims, {});
      expect(decodeJwtParts(untyped).header).to.not.have.property('typ');
      const res = await end(browser, { id_token_hint: untyped, post_logout_redirect_uri: BYE_OUT, state: 'x' });
      expect(locationOf(res, server).href).to.equal(`${BYE_OUT}?state=x`);
      expect(await alive(browser)).to.equal(false);
    });
  });

  describe('post_logout_redirect_uri: exactly one of the app’s', function () {
    it('neither client_id nor hint, another app’s client_id → 400, no redirect, still signed in', async () => {
      const { browser } = await signedIn();
      await refused(await end(browser, { post_logout_redirect_uri: BYE_OUT }), browser, 400, UNREGISTERED);
      await refused(
        await end(browser, { client_id: WEB.id, post_logout_redirect_uri: BYE_OUT }),
        browser,
        400,
        UNREGISTERED,
      );
      await refused(
        await end(browser, { client_id: BYE.id, post_logout_redirect_uri: `${BYE_OUT}?next=https://evil.example` }),
        browser,
        400,
        UNREGISTERED,
      );
    });

    it('a hint with several audiences is the app of its azp: client_id must be that one, its URIs only', async () => {
      const { user, browser } = await signedIn();
      const both = { iss: server.issuer, sub: user.id, aud: [WEB.id, BYE.id], azp: BYE.id };
      const hint = await ours(both);
      await refused(
        await end(browser, { id_token_hint: hint, client_id: WEB.id, post_logout_redirect_uri: BYE_OUT }),
        browser,
        400,
        MISMATCH,
      );
      // Without azp a token of several audiences names no app.
      const { azp: _azp, ...unnamed } = both;
      await refused(
        await end(browser, { id_token_hint: await ours(unnamed), post_logout_redirect_uri: BYE_OUT }),
        browser,
        400,
        NOT_OURS,
      );
      // An azp outside the audience is no token of ours either.
      await refused(
        await end(browser, { id_token_hint: await ours({ ...both, azp: 'other' }), post_logout_redirect_uri: BYE_OUT }),
        browser,
        400,
        NOT_OURS,
      );
      const out = await end(browser, { id_token_hint: hint, client_id: BYE.id, post_logout_redirect_uri: BYE_OUT });
      expect(locationOf(out, server).href).to.equal(BYE_OUT);
      expect(await alive(browser)).to.equal(false);
    });

    it('state goes back as one parameter: no other parameter can be injected', async () => {
      const { browser, tokens } = await signedIn();
      const state = 'a&state=b&code=evil#frag';
      const out = await end(browser, { id_token_hint: tokens.id_token, post_logout_redirect_uri: BYE_OUT, state });
      const back = locationOf(out, server);
      expect(back.origin + back.pathname).to.equal(BYE_OUT);
      expect([...back.searchParams]).to.deep.equal([['state', state]]);
      expect(back.hash).to.equal('');
    });
  });

  describe('the confirmation: bound to the session', function () {
    it('another session’s token, none, a GET, a POST without confirm → no sign-out; 403 with its text', async () => {
      const alice = await signedIn('alice');
      const mallory = await signedIn('mallory');
      const page = await end(mallory.browser, { client_id: BYE.id });
      expect(page.status).to.equal(200);
      const malloryCsrf = csrfOf(await page.text())!;
      expect(malloryCsrf).to.be.a('string');

      const foreign = await alice.browser.postForm('/session/end_session', { confirm: 'yes', csrf: malloryCsrf });
      await refused(foreign, alice.browser, 403, EXPIRED_FORM);
      const missing = await alice.browser.postForm('/session/end_session', { confirm: 'yes', client_id: BYE.id });
      await refused(missing, alice.browser, 403, EXPIRED_FORM);

      // A GET without a hint only asks; so does a POST that does not say confirm=yes.
      const asked = await end(alice.browser, { client_id: BYE.id, post_logout_redirect_uri: BYE_OUT });
      expect(asked.status).to.equal(200);
      expect(await asked.text()).to.include('Sign out?');
      const unconfirmed = await alice.browser.postForm('/session/end_session', {
        csrf: csrfOf(await (await end(alice.browser, {})).text())!,
        post_logout_redirect_uri: BYE_OUT,
        client_id: BYE.id,
      });
      expect(unconfirmed.status).to.equal(200);
      expect(await unconfirmed.text()).to.include('Sign out?');
      expect(await alive(alice.browser)).to.equal(true);
      expect(await alive(mallory.browser)).to.equal(true);
    });

    it("a hint of the user's earlier session (its sid ended) asks first: an old token signs no new session out", async () => {
      const { user, browser, tokens } = await signedIn('again');
      const out = await end(browser, { id_token_hint: tokens.id_token });
      expect(out.status).to.equal(200);
      expect(await alive(browser)).to.equal(false);
      // Signed in again in the same browser: a new session, a new sid.
      const got = await obtainCode(server, user, { clientId: BYE.id, redirectUri: BYE_CB, scope: 'openid', browser });
      const fresh = (await redeem(server, got, BYE)).body.id_token as string;
      expect(decodeJwtParts(fresh).payload.sid).to.not.equal(decodeJwtParts(tokens.id_token).payload.sid);
      const stale = await end(browser, { id_token_hint: tokens.id_token, post_logout_redirect_uri: BYE_OUT });
      expect(stale.status).to.equal(200);
      expect(await stale.text()).to.include('Sign out?');
      expect(await alive(browser)).to.equal(true);
      // The token of this session still signs out at once.
      const now = await end(browser, { id_token_hint: fresh, post_logout_redirect_uri: BYE_OUT });
      expect(locationOf(now, server).href).to.equal(BYE_OUT);
      expect(await alive(browser)).to.equal(false);
    });

    it("a hint for another user than the browser's asks first; the other user stays signed in too", async () => {
      const alice = await signedIn('alice');
      const bob = await signedIn('bob');
      const res = await end(alice.browser, { id_token_hint: bob.tokens.id_token, post_logout_redirect_uri: BYE_OUT });
      expect(res.status).to.equal(200);
      expect(await res.text()).to.include('Sign out?');
      expect(await alive(alice.browser)).to.equal(true);
      expect(await alive(bob.browser)).to.equal(true);
    });
  });

  describe('the pages: escaped echoes, headers', function () {
    it('the confirmation escapes every echoed parameter; no-store, the CSP with the app’s post-logout origins, no-referrer', async () => {
      const { browser } = await signedIn();
      const res = await end(browser, {
        client_id: BYE.id,
        state: XSS,
        ui_locales: XSS,
        logout_hint: XSS,
        post_logout_redirect_uri: BYE_OUT,
      });
      expect(res.status).to.equal(200);
      const body = await res.text();
      expect(body).to.not.include('<script>alert');
      expect(body).to.not.include('"><');
      for (const name of ['state', 'ui_locales', 'logout_hint']) {
        expect(body).to.include(`name="${name}" value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`);
      }
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('referrer-policy')).to.equal('no-referrer');
      expect(res.headers.get('content-security-policy')).to.equal(
        CSP.replace("form-action 'self'", "form-action 'self' https://bye.example.test https://bye-also.example.test"),
      );
    });

    it('error and signed-out pages: escaped, no-store, the hosted pages’ CSP (form-action self), no-referrer', async () => {
      const stranger = new Browser(server);
      const unknown = await end(stranger, { client_id: XSS, state: XSS, ui_locales: XSS });
      expect(unknown.status).to.equal(400);
      const malformed = await stranger.get(
        `/session/end_session?state=1&state=2&ui_locales=${encodeURIComponent(XSS)}`,
      );
      expect(malformed.status).to.equal(400);
      const done = await end(stranger, { client_id: BYE.id, state: XSS, ui_locales: XSS });
      expect(done.status).to.equal(200);
      for (const [name, res, text] of [
        ['unknown app', unknown, 'The app (client_id) is not registered. (invalid_request)'],
        ['malformed', malformed, 'A parameter appears more than once or is malformed. (invalid_request)'],
        ['signed out', done, 'You are signed out of Bye App'],
      ] as const) {
        const body = await res.text();
        expect(body, name).to.include(text);
        expect(body, name).to.not.include('<script>alert');
        expect(res.headers.get('cache-control'), name).to.equal('no-store');
        expect(res.headers.get('referrer-policy'), name).to.equal('no-referrer');
        expect(res.headers.get('content-security-policy'), name).to.equal(CSP);
      }
    });
  });

  describe('"Not you?" with a login of another browser', function () {
    it('signs out only this browser and restarts nothing: the other browser’s login goes on', async () => {
      // The victim's browser: a login of the MFA app on its second stage.
      const victim = await signedIn('victim');
      await enrolTotp(server, victim.user);
      const login = locationOf(
        await victim.browser.get(
          authorizePath({
            client_id: MFA.id,
            response_type: 'code',
            scope: 'openid',
            redirect_uri: 'https://mfa.example.test/cb',
            state: 'victim-state',
            code_challenge: pkcePair().challenge,
            code_challenge_method: 'S256',
          }),
        ),
        server,
      );
      const requestId = loginRequestId(login);

      // The attacker, signed in in their own browser, posts their own form with the victim's request_id.
      const attacker = await signedIn('attacker');
      const csrf = csrfOf(await (await end(attacker.browser, {})).text())!;
      const out = await attacker.browser.postForm('/session/end_session', {
        csrf,
        request_id: requestId,
        confirm: 'yes',
      });
      expect(out.status).to.equal(200);
      expect(out.headers.get('location')).to.equal(null);
      expect(await out.text()).to.include('You are signed out');
      expect(await alive(attacker.browser)).to.equal(false);

      // And without any session: the same.
      const bare = await new Browser(server).postForm('/session/end_session', {
        request_id: requestId,
        confirm: 'yes',
      });
      expect(bare.status).to.equal(200);
      expect(bare.headers.get('location')).to.equal(null);

      expect((await server.gatehouse.container.cradle.flows.get(requestId))!.status).to.equal('active');
      expect(await alive(victim.browser)).to.equal(true);
      const page = await victim.browser.get(`/login?request_id=${requestId}`);
      expect(page.status).to.equal(200);
      expect(await page.text()).to.include(`Signed in as <strong>${victim.user.username}</strong>`);
    });
  });
});
