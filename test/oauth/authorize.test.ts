/**
 * The authorization endpoint against checklist §1: redirect URI matching (byte-identical,
 * loopback ports), errors as pages or as redirects with state and iss, strict parameters,
 * PKCE, 303s, page headers, prompt and max_age, list B, response modes, implicit, consent and
 * the flow cookie binding.
 */
import { expect } from 'chai';
import {
  Browser,
  CONSENT,
  IMPLICIT,
  NATIVE,
  SPA,
  SPA_CB,
  STATE_ALWAYS,
  STATE_NEVER,
  WEB,
  WEB_CB,
  authorize,
  authorizePath,
  completeStage,
  decodeJwtParts,
  halfHash,
  locationOf,
  loginRequestId,
  loginWithPassword,
  obtainCode,
  PASSWORD,
  pkcePair,
  postForm,
  redeem,
  sleep,
  startServer,
  type OAuthServer,
  type TestUser,
} from './support.js';
import { FakeClock } from '@gatehouse-auth/testing';

/** An error shown as a page: never a redirect, with the page headers. */
async function expectErrorPage(res: Response, status = 400): Promise<string> {
  expect(res.status).to.equal(status);
  expect(res.headers.get('location')).to.equal(null);
  expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
  expectPageHeaders(res);
  return res.text();
}

/**
 * Checklist §1.9: no framing, no referrer to other sites, no CORS. The login page itself says
 * same-origin: under no-referrer its forms would carry `Origin: null`, which the login refuses.
 */
function expectPageHeaders(res: Response, referrer = 'no-referrer'): void {
  expect(res.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
  expect(res.headers.get('x-frame-options')).to.equal('DENY');
  expect(res.headers.get('referrer-policy')).to.equal(referrer);
  expect(res.headers.get('access-control-allow-origin')).to.equal(null);
}

/** The parameters of a redirect to the client: the query, or the fragment when there is one. */
function paramsOf(location: URL): URLSearchParams {
  return location.hash ? new URLSearchParams(location.hash.slice(1)) : location.searchParams;
}

/** A redirect to `redirectUri` carrying `error` with state and iss (RFC 9207). */
function expectErrorRedirect(
  res: Response,
  server: OAuthServer,
  redirectUri: string,
  error: string,
  state: string | null,
  mode: 'query' | 'fragment' = 'query',
): URLSearchParams {
  const location = locationOf(res, server);
  expect(location.href.split(/[?#]/)[0]).to.equal(redirectUri);
  if (mode === 'fragment') expect(location.search).to.equal('');
  else expect(location.hash).to.equal('');
  const params = paramsOf(location);
  expect(params.get('error'), location.href).to.equal(error);
  expect(params.get('state')).to.equal(state);
  expect(params.get('iss')).to.equal(server.issuer);
  expect(params.get('code')).to.equal(null);
  expect(params.get('error_description')).to.match(/^[\x20\x21\x23-\x5b\x5d-\x7e]+$/);
  return params;
}

describe('OAuth authorization endpoint (checklist §1)', function () {
  let server: OAuthServer;
  let user: TestUser;

  before(async function () {
    server = await startServer();
    user = await server.user('az');
  });
  after(() => server?.close());

  const pkce = pkcePair();
  const webParams = (extra: Record<string, string> = {}): Record<string, string> => ({
    response_type: 'code',
    client_id: WEB.id,
    redirect_uri: WEB_CB,
    scope: 'openid profile',
    state: 'st-1',
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
  const get = (params: Record<string, string> | [string, string][], headers: Record<string, string> = {}) =>
    new Browser(server).get(authorizePath(params), headers);

  describe('redirect_uri', function () {
    const variants: [string, string][] = [
      ['an extra query', `${WEB_CB}?x=1`],
      ['a trailing slash', `${WEB_CB}/`],
      ['a host case change', 'https://WEB.example.test/cb'],
      ['a path case change', 'https://web.example.test/CB'],
      ['a path suffix', `${WEB_CB}/more`],
      ['a longer last segment', `${WEB_CB}x`],
      ['a fragment', `${WEB_CB}#frag`],
      ['another scheme', 'http://web.example.test/cb'],
      ['a port', 'https://web.example.test:8443/cb'],
    ];
    for (const [what, uri] of variants) {
      it(`with ${what} is an error page, never a redirect`, async function () {
        const body = await expectErrorPage(await get(webParams({ redirect_uri: uri })));
        expect(body).to.include('invalid_request');
        expect(body).to.not.include('web.example.test');
      });
    }

    it('accepts any port for a registered loopback IP redirect URI (RFC 8252 §7.3), and the token request must repeat it', async function () {
      const redirectUri = 'http://127.0.0.1:51234/cb';
      const got = await obtainCode(server, user, { clientId: NATIVE.id, redirectUri, scope: 'openid' });
      expect(got.callback.port).to.equal('51234');
      const res = await redeem(server, got, NATIVE);
      expect(res.status, res.text).to.equal(200);
      const other = await obtainCode(server, user, { clientId: NATIVE.id, redirectUri, scope: 'openid' });
      const wrongPort = await redeem(server, other, NATIVE, { redirect_uri: 'http://127.0.0.1:51235/cb' });
      expect(wrongPort.status).to.equal(400);
      expect(wrongPort.body.error).to.equal('invalid_grant');
    });

    for (const uri of [
      'http://127.0.0.1:51234/other',
      'http://127.0.0.1:51234/cb?x=1',
      'http://localhost:51234/cb',
      'https://127.0.0.1:51234/cb',
      'http://127.0.0.1:51234/cb#x',
      'http://[::1]:51234/cb',
      // Non-canonical forms that normalise to the registered URI (found in review).
      'http://127.0.0.1:5@127.0.0.1/cb',
      'http://127.0.0.1:51234/x/../cb',
      'http://127.0.0.1:51234/cb?',
      // Ports outside 1-65535 (issue 8: 70000 made new URL() throw after sign-in).
      'http://127.0.0.1:70000/cb',
      'http://127.0.0.1:99999/cb',
      'http://127.0.0.1:0/cb',
      'http://127.0.0.1:/cb',
    ]) {
      it(`refuses ${uri} for the loopback client (only the port may differ)`, async function () {
        const { challenge } = pkcePair();
        await expectErrorPage(
          await get({
            response_type: 'code',
            client_id: NATIVE.id,
            redirect_uri: uri,
            code_challenge: challenge,
            code_challenge_method: 'S256',
          }),
        );
      });
    }

    it('is required when the client has several registered', async function () {
      const params = webParams();
      delete params.redirect_uri;
      await expectErrorPage(await get(params));
    });

    it('may be left out when exactly one is registered: that one is used, and the token request may leave it out too', async function () {
      const { verifier, challenge } = pkcePair();
      const res = await authorize(
        new Browser(server),
        server,
        {
          response_type: 'code',
          client_id: SPA.id,
          scope: 'openid',
          state: 's1',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        },
        user,
      );
      const location = locationOf(res, server);
      expect(location.href.split('?')[0]).to.equal(SPA_CB);
      expect(location.searchParams.get('state')).to.equal('s1');
      const code = location.searchParams.get('code')!;
      const token = await postForm(server, '/oauth/token', {
        grant_type: 'authorization_code',
        client_id: SPA.id,
        code,
        code_verifier: verifier,
      });
      expect(token.status, token.text).to.equal(200);
    });
  });

  describe('client_id', function () {
    it('unknown → error page', async function () {
      const body = await expectErrorPage(await get(webParams({ client_id: 'no-such-client' })));
      expect(body).to.include('invalid_client');
    });

    it('missing → error page', async function () {
      const params = webParams();
      delete params.client_id;
      await expectErrorPage(await get(params));
    });
  });

  describe('errors redirected to the client with state and iss', function () {
    it('an unknown scope → invalid_scope', async function () {
      expectErrorRedirect(await get(webParams({ scope: 'openid admin' })), server, WEB_CB, 'invalid_scope', 'st-1');
    });

    it('a scope the client does not have → invalid_scope', async function () {
      expectErrorRedirect(await get(webParams({ scope: 'reports.read' })), server, WEB_CB, 'invalid_scope', 'st-1');
    });

    it('a missing response_type → invalid_request', async function () {
      const params = webParams();
      delete params.response_type;
      expectErrorRedirect(await get(params), server, WEB_CB, 'invalid_request', 'st-1');
    });

    it('response_type=token for a client without it → unsupported_response_type (in the fragment)', async function () {
      expectErrorRedirect(
        await get(webParams({ response_type: 'token' })),
        server,
        WEB_CB,
        'unsupported_response_type',
        'st-1',
        'fragment',
      );
    });

    for (const responseType of ['code id_token', 'id_token', 'id_token token', 'code token']) {
      it(`response_type=${responseType} (hybrid or ID-token implicit, not supported) → unsupported_response_type`, async function () {
        expectErrorRedirect(
          await get(webParams({ response_type: responseType })),
          server,
          WEB_CB,
          'unsupported_response_type',
          'st-1',
        );
      });
    }

    it('a duplicated parameter → invalid_request', async function () {
      const params: [string, string][] = [...Object.entries(webParams()), ['scope', 'openid']];
      expectErrorRedirect(await get(params), server, WEB_CB, 'invalid_request', 'st-1');
    });

    it('a duplicated client_id, redirect_uri or state cannot be trusted: error page', async function () {
      for (const name of ['client_id', 'redirect_uri', 'state']) {
        const params: [string, string][] = [...Object.entries(webParams()), [name, webParams()[name]!]];
        await expectErrorPage(await get(params));
      }
    });

    it('a public client without code_challenge → invalid_request', async function () {
      expectErrorRedirect(
        await get({ response_type: 'code', client_id: SPA.id, redirect_uri: SPA_CB, state: 'p1' }),
        server,
        SPA_CB,
        'invalid_request',
        'p1',
      );
    });

    it('code_challenge_method=plain (or absent, which means plain) → invalid_request, also for a confidential client', async function () {
      const plain = { code_challenge: pkce.verifier, code_challenge_method: 'plain' };
      expectErrorRedirect(
        await get({ response_type: 'code', client_id: SPA.id, redirect_uri: SPA_CB, state: 'p2', ...plain }),
        server,
        SPA_CB,
        'invalid_request',
        'p2',
      );
      expectErrorRedirect(await get(webParams(plain)), server, WEB_CB, 'invalid_request', 'st-1');
      const absent = webParams();
      delete absent.code_challenge_method;
      expectErrorRedirect(await get(absent), server, WEB_CB, 'invalid_request', 'st-1');
    });

    it('a malformed code_challenge → invalid_request', async function () {
      expectErrorRedirect(await get(webParams({ code_challenge: 'short' })), server, WEB_CB, 'invalid_request', 'st-1');
    });

    it('an error without state carries no state, but still iss', async function () {
      const params = webParams({ scope: 'nope' });
      delete params.state;
      expectErrorRedirect(await get(params), server, WEB_CB, 'invalid_scope', null);
    });

    it('no state and no PKCE → invalid_request (RFC 6749 §10.12: nothing else binds the code to the browser)', async function () {
      const params = webParams();
      delete params.state;
      delete params.code_challenge;
      delete params.code_challenge_method;
      const body = expectErrorRedirect(await get(params), server, WEB_CB, 'invalid_request', null);
      expect(body.get('error_description')).to.equal('state is required for this app');
    });

    it('require_state: true asks for state even with PKCE; false accepts neither', async function () {
      const always = webParams({
        client_id: STATE_ALWAYS.id,
        redirect_uri: 'https://state-always.example.test/cb',
        scope: 'openid',
      });
      delete always.state;
      expectErrorRedirect(await get(always), server, 'https://state-always.example.test/cb', 'invalid_request', null);
      const never = webParams({
        client_id: STATE_NEVER.id,
        redirect_uri: 'https://state-never.example.test/cb',
        scope: 'openid',
      });
      for (const name of ['state', 'code_challenge', 'code_challenge_method']) delete never[name];
      const res = await get(never);
      expect(res.status).to.equal(303);
      expect(locationOf(res, server).pathname).to.equal('/login');
    });

    it('no state with PKCE is accepted by default: the code is bound by the verifier', async function () {
      const params = webParams();
      delete params.state;
      const res = await get(params);
      expect(res.status).to.equal(303);
      expect(locationOf(res, server).pathname).to.equal('/login');
    });

    it('prompt=none without a session → login_required', async function () {
      expectErrorRedirect(await get(webParams({ prompt: 'none' })), server, WEB_CB, 'login_required', 'st-1');
    });
  });

  describe('parameters', function () {
    it('an empty parameter counts as absent', async function () {
      const browser = new Browser(server);
      // Empty nonce, prompt, max_age and response_mode change nothing; an empty state is no state.
      const res = await authorize(
        browser,
        server,
        webParams({ nonce: '', prompt: '', max_age: '', response_mode: '', state: '' }),
        user,
      );
      const location = locationOf(res, server);
      expect(location.searchParams.get('code')).to.be.a('string');
      expect(location.searchParams.has('state')).to.equal(false);
      expect(location.searchParams.get('iss')).to.equal(server.issuer);
      // An empty redirect_uri is absent too: with two registered, that is the error page.
      await expectErrorPage(await get(webParams({ redirect_uri: '' })));
    });

    it('an unknown parameter is ignored and the flow succeeds', async function () {
      const got = await obtainCode(server, user, { extra: { foo: 'bar', claims_locales: 'de', 'x-custom': '1' } });
      expect((await redeem(server, got)).status).to.equal(200);
    });

    it('the code is at least 128 bits (base64url, ≥ 22 characters)', async function () {
      const { code } = await obtainCode(server, user);
      expect(code).to.match(/^[A-Za-z0-9_-]{22,}$/);
    });
  });

  describe('the login round trip', function () {
    it('sends the browser to /login with a flow cookie, takes the credential POST with a 303, and answers with a 303 carrying code, state and iss', async function () {
      const browser = new Browser(server);
      const first = await browser.get(authorizePath(webParams()), { Origin: 'https://evil.example' });
      expect(first.headers.get('access-control-allow-origin')).to.equal(null);
      const login = locationOf(first, server, 303);
      loginRequestId(login);
      // The hosted login page itself: framing, referrer and CORS headers.
      const page = await browser.get(login.pathname + login.search);
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expectPageHeaders(page, 'same-origin');
      const flowCookie = first.headers.getSetCookie().find((c) => c.startsWith('gh_flow_'));
      expect(flowCookie, 'flow cookie').to.be.a('string');
      expect(flowCookie)
        .to.match(/; HttpOnly/i)
        .and.match(/; SameSite=Lax/i)
        .and.match(/; Path=\//i);
      // Plain-http localhost: no Secure flag, no __Host- prefix.
      expect(flowCookie).to.not.match(/; Secure/i);
      const resumed = await loginWithPassword(browser, server, login, user);
      const sessionCookie = resumed.headers.getSetCookie().find((c) => c.startsWith('gh_session='));
      expect(sessionCookie)
        .to.match(/; HttpOnly/i)
        .and.match(/; SameSite=Lax/i);
      const callback = locationOf(resumed, server, 303);
      expect(callback.href.split('?')[0]).to.equal(WEB_CB);
      expect(callback.searchParams.get('state')).to.equal('st-1');
      expect(callback.searchParams.get('iss')).to.equal(server.issuer);
      expect(resumed.headers.get('access-control-allow-origin')).to.equal(null);
      expect(resumed.headers.get('cache-control')).to.equal('no-store');
    });

    it('a resume link opened without the flow cookie (another browser) → error page; the right browser still finishes', async function () {
      const browser = new Browser(server);
      const login = locationOf(await browser.get(authorizePath(webParams())), server);
      const requestId = loginRequestId(login);
      // Complete the login stage, but open the resume link in a browser without the cookie.
      const resume = await completeStage(
        browser,
        server,
        requestId,
        'PASSWORD',
        { identifier: user.username },
        { password: PASSWORD },
      );
      const stranger = new Browser(server);
      const body = await expectErrorPage(await stranger.get(resume.pathname + resume.search));
      expect(body).to.include('another browser');
      // A forged flow cookie does not help either.
      stranger.cookies.set(
        [...browser.cookies.keys()].find((k) => k.startsWith('gh_flow_'))!,
        'forged',
      );
      await expectErrorPage(await stranger.get(resume.pathname + resume.search));
      const own = locationOf(await browser.get(resume.pathname + resume.search), server);
      expect(own.searchParams.get('code')).to.be.a('string');
      // Once answered, the flow cannot be resumed again.
      await expectErrorPage(await browser.get(resume.pathname + resume.search));
    });
  });

  describe('no open redirects (§1.10)', function () {
    it('a next= parameter on the login or resume pages is never followed', async function () {
      const browser = new Browser(server);
      const login = locationOf(await browser.get(authorizePath(webParams())), server);
      const requestId = loginRequestId(login);
      const withNext = await browser.get(`/login?request_id=${requestId}&next=https%3A%2F%2Fevil.example%2F`);
      expect(withNext.status).to.equal(200);
      expect(withNext.headers.get('location')).to.equal(null);
      expect(await withNext.text()).to.not.include('evil.example');
      await expectErrorPage(
        await browser.get(`/api/oauth2/authorize/resume?request_id=${requestId}&next=https%3A%2F%2Fevil.example%2F`),
      );
      const unknown = await browser.get('/login?request_id=unknown&next=https%3A%2F%2Fevil.example%2F');
      expect(unknown.status).to.be.within(400, 499);
      expect(unknown.headers.get('location')).to.equal(null);
    });
  });

  describe('sessions, prompt and max_age', function () {
    it('prompt=none with a session → a code without a login (SSO)', async function () {
      const browser = new Browser(server);
      await obtainCode(server, user, { browser });
      const first = await browser.get(authorizePath(webParams({ prompt: 'none', state: 'sso' })));
      const resume = locationOf(first, server);
      expect(resume.pathname).to.equal('/api/oauth2/authorize/resume');
      const callback = locationOf(await browser.get(resume.pathname + resume.search), server);
      expect(callback.searchParams.get('code')).to.be.a('string');
      expect(callback.searchParams.get('state')).to.equal('sso');
      expect(callback.searchParams.get('iss')).to.equal(server.issuer);
    });

    it('id_token_hint: the signed-in user’s own ID token → SSO; another user’s → login_required with prompt=none, a fresh login without', async function () {
      const browser = new Browser(server);
      const mine = await redeem(server, await obtainCode(server, user, { browser }));
      const other = await server.user('hint');
      const theirs = await redeem(server, await obtainCode(server, other));
      const hinted = (hint: string, extra: Record<string, string> = {}) =>
        browser.get(authorizePath(webParams({ id_token_hint: hint, ...extra })));

      const sso = locationOf(await hinted(mine.body.id_token as string, { prompt: 'none' }), server);
      expect(sso.pathname).to.equal('/api/oauth2/authorize/resume');
      const refused = await hinted(theirs.body.id_token as string, { prompt: 'none' });
      expectErrorRedirect(refused, server, WEB_CB, 'login_required', 'st-1');
      const fresh = locationOf(await hinted(theirs.body.id_token as string), server);
      expect(fresh.pathname).to.equal('/login');
      const bogus = await hinted('eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.');
      expectErrorRedirect(bogus, server, WEB_CB, 'invalid_request', 'st-1');
      // The user's own access token (typ at+jwt, aud the app, signed by the same keys) is no ID token.
      expect(decodeJwtParts(mine.body.access_token as string).header.typ).to.equal('at+jwt');
      const access = await hinted(mine.body.access_token as string, { prompt: 'none' });
      const error = expectErrorRedirect(access, server, WEB_CB, 'invalid_request', 'st-1');
      expect(error.get('error_description')).to.equal('id_token_hint is not an ID token of this server');
    });

    it('prompt=login forces a login despite the session', async function () {
      const browser = new Browser(server);
      await obtainCode(server, user, { browser });
      const login = locationOf(await browser.get(authorizePath(webParams({ prompt: 'login' }))), server);
      expect(login.pathname).to.equal('/login');
      // Without prompt the session is used.
      const sso = locationOf(await browser.get(authorizePath(webParams())), server);
      expect(sso.pathname).to.equal('/api/oauth2/authorize/resume');
    });

    it('max_age=1 after more than a second → a fresh login, and auth_time in the ID token', async function () {
      const browser = new Browser(server);
      const first = await obtainCode(server, user, { browser, extra: { max_age: '3600' } });
      const firstTokens = await redeem(server, first);
      const firstAuthTime = decodeJwtParts(firstTokens.body.id_token as string).payload.auth_time as number;
      expect(firstAuthTime).to.be.a('number');
      await sleep(1100);
      const before = Math.floor(Date.now() / 1000);
      const login = locationOf(await browser.get(authorizePath(webParams({ max_age: '1' }))), server);
      expect(login.pathname).to.equal('/login');
      const second = await obtainCode(server, user, { browser, extra: { max_age: '1' } });
      const tokens = await redeem(server, second);
      const authTime = decodeJwtParts(tokens.body.id_token as string).payload.auth_time as number;
      expect(authTime).to.be.at.least(before).and.greaterThan(firstAuthTime);
      // Within max_age the session is reused, with its auth_time.
      const sso = locationOf(await browser.get(authorizePath(webParams({ max_age: '3600' }))), server);
      expect(sso.pathname).to.equal('/api/oauth2/authorize/resume');
    });

    it('max_age=0 always asks for a login', async function () {
      const browser = new Browser(server);
      await obtainCode(server, user, { browser });
      await sleep(5);
      const login = locationOf(await browser.get(authorizePath(webParams({ max_age: '0' }))), server);
      expect(login.pathname).to.equal('/login');
    });

    it('a malformed max_age or prompt → invalid_request', async function () {
      expectErrorRedirect(await get(webParams({ max_age: '-1' })), server, WEB_CB, 'invalid_request', 'st-1');
      expectErrorRedirect(await get(webParams({ prompt: 'none login' })), server, WEB_CB, 'invalid_request', 'st-1');
      expectErrorRedirect(await get(webParams({ prompt: 'bogus' })), server, WEB_CB, 'invalid_request', 'st-1');
    });
  });

  describe('list B parameters', function () {
    it('resource_type=Code, comma-separated scope, no redirect_uri with one registered', async function () {
      const { verifier, challenge } = pkcePair();
      const res = await authorize(
        new Browser(server),
        server,
        {
          client_id: SPA.id,
          resource_type: 'Code',
          scope: 'openid,profile',
          state: 'list-b',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        },
        user,
      );
      const location = locationOf(res, server);
      expect(location.href.split('?')[0]).to.equal(SPA_CB);
      expect(location.searchParams.get('state')).to.equal('list-b');
      expect(location.searchParams.get('iss')).to.equal(server.issuer);
      const token = await postForm(server, '/oauth/token', {
        grant_type: 'authorization_code',
        client_id: SPA.id,
        code: location.searchParams.get('code')!,
        code_verifier: verifier,
      });
      expect(token.status, token.text).to.equal(200);
      expect(token.body.scope).to.equal('openid profile');
    });

    it('without scope, every scope configured for the app', async function () {
      const { verifier, challenge } = pkcePair();
      const res = await authorize(
        new Browser(server),
        server,
        { client_id: SPA.id, resource_type: 'Code', code_challenge: challenge, code_challenge_method: 'S256' },
        user,
      );
      const location = locationOf(res, server);
      expect(location.searchParams.has('state')).to.equal(false);
      const token = await postForm(server, '/oauth/token', {
        grant_type: 'authorization_code',
        client_id: SPA.id,
        code: location.searchParams.get('code')!,
        redirect_uri: SPA_CB,
        code_verifier: verifier,
      });
      expect(token.status, token.text).to.equal(200);
      expect(token.body.scope).to.equal('openid profile offline_access');
    });

    it('resource_type other than Code → unsupported_response_type', async function () {
      expectErrorRedirect(
        await get({ client_id: SPA.id, resource_type: 'Token', state: 'b2' }),
        server,
        SPA_CB,
        'unsupported_response_type',
        'b2',
      );
    });
  });

  describe('response modes', function () {
    it('fragment: the answer is in the fragment only', async function () {
      const res = await authorize(new Browser(server), server, webParams({ response_mode: 'fragment' }), user);
      const location = locationOf(res, server);
      expect(location.search).to.equal('');
      const params = new URLSearchParams(location.hash.slice(1));
      expect(params.get('code')).to.be.a('string');
      expect(params.get('state')).to.equal('st-1');
      expect(params.get('iss')).to.equal(server.issuer);
    });

    it('form_post: a form to the redirect URI submitted by a served script; no inline script, form-action narrowed', async function () {
      const res = await authorize(new Browser(server), server, webParams({ response_mode: 'form_post' }), user);
      expect(res.status).to.equal(200);
      expect(res.headers.get('location')).to.equal(null);
      expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expectPageHeaders(res);
      const html = await res.text();
      expect(html).to.include(`<form method="post" action="${WEB_CB}">`);
      const fields = Object.fromEntries(
        [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g)].map((m) => [m[1], m[2]]),
      );
      expect(Object.keys(fields)).to.have.members(['code', 'state', 'iss']);
      expect(fields.code).to.match(/^[A-Za-z0-9_-]{22,}$/);
      expect(fields.state).to.equal('st-1');
      expect(fields.iss).to.equal(server.issuer);
      // Every script is a same-origin file; none is inline, and the policy allows only 'self'.
      const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts).to.have.length(1);
      expect(scripts[0]![2]!.trim()).to.equal('');
      const src = /src="([^"]+)"/.exec(scripts[0]![1]!)![1]!;
      expect(src).to.match(/^\/login\/assets\/form-post\.js/);
      const script = await fetch(server.url(src));
      expect(script.status).to.equal(200);
      expect(script.headers.get('content-type')).to.match(/javascript/);
      const directives = res.headers
        .get('content-security-policy')!
        .split(';')
        .map((d) => d.trim());
      expect(directives).to.include("default-src 'none'");
      expect(directives).to.include("script-src 'self'");
      expect(directives.join(';')).to.not.include('unsafe-inline');
      expect(directives.find((d) => d.startsWith('form-action'))).to.equal(
        "form-action 'self' https://web.example.test",
      );
    });

    it('an unknown response_mode → invalid_request', async function () {
      expectErrorRedirect(await get(webParams({ response_mode: 'jwt' })), server, WEB_CB, 'invalid_request', 'st-1');
    });
  });

  describe('implicit (response_type=token, enabled for one app only)', function () {
    const implicitCb = 'https://implicit.example.test/cb';

    it('returns the access token in the fragment with token_type, expires_in, state and iss', async function () {
      const res = await authorize(
        new Browser(server),
        server,
        {
          response_type: 'token',
          client_id: IMPLICIT.id,
          redirect_uri: implicitCb,
          scope: 'openid profile',
          state: 'imp',
          nonce: 'n-imp',
        },
        user,
      );
      const location = locationOf(res, server);
      expect(location.href.split('#')[0]).to.equal(implicitCb);
      expect(location.search).to.equal('');
      const params = new URLSearchParams(location.hash.slice(1));
      expect(params.get('token_type')).to.equal('bearer');
      expect(params.get('expires_in')).to.equal('3600');
      expect(params.get('state')).to.equal('imp');
      expect(params.get('iss')).to.equal(server.issuer);
      expect(params.get('scope')).to.equal('openid profile');
      expect(params.get('code')).to.equal(null);
      expect(params.get('refresh_token')).to.equal(null);
      const accessToken = params.get('access_token')!;
      expect(accessToken).to.be.a('string');
      const idToken = decodeJwtParts(params.get('id_token')!).payload;
      expect(idToken).to.include({ nonce: 'n-imp', aud: IMPLICIT.id, sub: user.id, at_hash: halfHash(accessToken) });
      const info = await fetch(server.url('/userinfo'), { headers: { Authorization: `Bearer ${accessToken}` } });
      expect(info.status).to.equal(200);
    });

    it('with openid but no nonce → invalid_request; in the query → invalid_request', async function () {
      const base = { response_type: 'token', client_id: IMPLICIT.id, redirect_uri: implicitCb, state: 'i2' };
      expectErrorRedirect(await get(base), server, implicitCb, 'invalid_request', 'i2', 'fragment');
      expectErrorRedirect(
        await get({ ...base, nonce: 'n', response_mode: 'query' }),
        server,
        implicitCb,
        'invalid_request',
        'i2',
      );
    });
  });

  describe('consent', function () {
    const consentCb = 'https://consent.example.test/cb';
    const consentParams = (extra: Record<string, string> = {}) => ({
      response_type: 'code',
      client_id: CONSENT.id,
      redirect_uri: consentCb,
      scope: 'openid profile',
      state: 'c-1',
      ...extra,
    });

    /** Logs in and stops at the consent page; returns the page's request id and CSRF token. */
    async function toConsentPage(browser: Browser, who: TestUser, extra: Record<string, string> = {}) {
      const res = await authorize(browser, server, consentParams(extra), who);
      const page = locationOf(res, server);
      expect(page.pathname).to.equal('/login/consent');
      const shown = await browser.get(page.pathname + page.search);
      expect(shown.status).to.equal(200);
      expect(shown.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expectPageHeaders(shown);
      const html = await shown.text();
      expect(html).to.include('Consent App').and.include('<code>openid</code>').and.include('<code>profile</code>');
      const requestId = /name="request_id" value="([^"]+)"/.exec(html)![1]!;
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
      return { requestId, csrf };
    }

    it('names the standard scopes in words, in the page’s language, and an app’s own scope by its name', async function () {
      const who = await server.user('words');
      for (const [locale, openid, email] of [
        ['en', 'Know who you are', 'Your email address'],
        ['de', 'Wissen, wer Sie sind', 'Ihre E-Mail-Adresse'],
      ] as const) {
        const browser = new Browser(server);
        const scope = 'openid email orders:read';
        const res = await authorize(browser, server, consentParams({ scope, ui_locales: locale }), who);
        const page = locationOf(res, server);
        const html = await (await browser.get(page.pathname + page.search)).text();
        expect(html).to.include(`<li>${openid} (`).and.include(`<li>${email} <code>email</code></li>`);
        expect(html, 'a scope the core has no words for').to.include('<li><code>orders:read</code></li>');
      }
    });

    it('deny → access_denied with the state', async function () {
      const who = await server.user('deny');
      const browser = new Browser(server);
      const { requestId, csrf } = await toConsentPage(browser, who);
      const res = await browser.postForm('/login/consent', { request_id: requestId, csrf, decision: 'deny' });
      expectErrorRedirect(res, server, consentCb, 'access_denied', 'c-1');
      // The flow is over: allowing afterwards changes nothing.
      await expectErrorPage(
        await browser.postForm('/login/consent', { request_id: requestId, csrf, decision: 'allow' }),
      );
    });

    it('allow → a code; the consent is remembered on the next authorize', async function () {
      const who = await server.user('allow');
      const browser = new Browser(server);
      const { requestId, csrf } = await toConsentPage(browser, who);
      const res = await browser.postForm('/login/consent', { request_id: requestId, csrf, decision: 'allow' });
      const callback = locationOf(res, server);
      expect(callback.href.split('?')[0]).to.equal(consentCb);
      expect(callback.searchParams.get('code')).to.be.a('string');
      expect(callback.searchParams.get('state')).to.equal('c-1');
      expect(callback.searchParams.get('iss')).to.equal(server.issuer);
      // Next time: no consent page (SSO and remembered consent).
      const again = locationOf(await authorize(browser, server, consentParams({ state: 'c-2' }), who), server);
      expect(again.href.split('?')[0]).to.equal(consentCb);
      expect(again.searchParams.get('state')).to.equal('c-2');
      expect(again.searchParams.get('code')).to.be.a('string');
      // A wider scope than consented asks again; prompt=consent always asks.
      const wider = locationOf(await authorize(browser, server, consentParams({ scope: 'openid email' }), who), server);
      expect(wider.pathname).to.equal('/login/consent');
      const forced = locationOf(await authorize(browser, server, consentParams({ prompt: 'consent' }), who), server);
      expect(forced.pathname).to.equal('/login/consent');
    });

    it('a consent POST without the right CSRF token → 403 error page', async function () {
      const who = await server.user('csrf');
      const browser = new Browser(server);
      const { requestId } = await toConsentPage(browser, who);
      await expectErrorPage(
        await browser.postForm('/login/consent', { request_id: requestId, csrf: 'x'.repeat(64), decision: 'allow' }),
        403,
      );
      // Another browser (no flow cookie) cannot decide either.
      await expectErrorPage(
        await new Browser(server).postForm('/login/consent', { request_id: requestId, csrf: 'x', decision: 'allow' }),
      );
    });

    it('single use and per flow: a second Allow is the error page; another flow’s token does not answer this one (403)', async function () {
      const who = await server.user('once');
      const browser = new Browser(server);
      const first = await toConsentPage(browser, who);
      // A second sign-in of the same browser waits for consent too, with a token of its own.
      const resume = locationOf(await browser.get(authorizePath(consentParams({ state: 'c-2' }))), server);
      const second = locationOf(await browser.get(resume.pathname + resume.search), server);
      expect(second.pathname).to.equal('/login/consent');
      const secondId = second.searchParams.get('request_id')!;
      await expectErrorPage(
        await browser.postForm('/login/consent', { request_id: secondId, csrf: first.csrf, decision: 'allow' }),
        403,
      );
      const allow = { request_id: first.requestId, csrf: first.csrf, decision: 'allow' };
      expect(locationOf(await browser.postForm('/login/consent', allow), server).searchParams.get('code')).to.be.a(
        'string',
      );
      // The answer dropped the flow's cookie; the flow is spent either way.
      await expectErrorPage(await browser.postForm('/login/consent', allow), 400);
    });

    it('form_post: Deny and Allow answer with a form to the redirect URI (access_denied; a code)', async function () {
      const who = await server.user('fpost');
      const fieldsOf = async (res: Response) => {
        expect([res.status, res.headers.get('location')]).to.deep.equal([200, null]);
        const html = await res.text();
        expect(html).to.include(`<form method="post" action="${consentCb}">`);
        return Object.fromEntries(
          [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g)].map((m) => [m[1], m[2]]),
        );
      };
      for (const decision of ['deny', 'allow']) {
        const browser = new Browser(server);
        const { requestId, csrf } = await toConsentPage(browser, who, { response_mode: 'form_post' });
        const fields = await fieldsOf(
          await browser.postForm('/login/consent', { request_id: requestId, csrf, decision }),
        );
        expect(fields.state).to.equal('c-1');
        if (decision === 'deny') expect(fields.error).to.equal('access_denied');
        else expect(fields.code).to.match(/^[A-Za-z0-9_-]{22,}$/);
      }
    });

    it('prompt=none with a session but no consent → consent_required', async function () {
      const who = await server.user('pnone');
      const browser = new Browser(server);
      await obtainCode(server, who, { browser });
      expectErrorRedirect(
        await browser.get(authorizePath(consentParams({ prompt: 'none' }))),
        server,
        consentCb,
        'consent_required',
        'c-1',
      );
    });
  });

  describe('an idle session (oauth.session_idle_ttl, NIST 800-63B-4 §2.2.3)', function () {
    const clock = new FakeClock();
    let idle: OAuthServer;
    before(async function () {
      idle = await startServer({ clock });
    });
    after(() => idle?.close());

    it('each sign-in through it renews it; unused past the idle time it signs no one in, and logout still ends it', async function () {
      const who = await idle.user('idle');
      const browser = new Browser(idle);
      await obtainCode(idle, who, { browser });
      const silent = () => browser.get(authorizePath(webParams({ prompt: 'none' })));
      // 50 minutes, then 50 more: each silent sign-in is within the hour since the last one.
      for (const _ of [1, 2]) {
        clock.advance(50 * 60);
        const resume = locationOf(await silent(), idle);
        expect(resume.pathname).to.equal('/api/oauth2/authorize/resume');
        const callback = locationOf(await browser.get(resume.pathname + resume.search), idle);
        expect(callback.searchParams.get('code')).to.be.a('string');
      }
      // An hour and a second without one: a new sign-in is needed.
      clock.advance(3601);
      expectErrorRedirect(await silent(), idle, WEB_CB, 'login_required', 'st-1');
      const login = locationOf(await browser.get(authorizePath(webParams())), idle);
      expect(login.pathname).to.equal('/login');
      // The idle session is still the one logout ends (its apps are told): the cookie finds it.
      const cookie = browser.cookies.get('gh_session')!;
      expect(await idle.gatehouse.container.cradle.sessions.get(cookie)).to.not.equal(null);
    });
  });

  describe('on an https issuer', function () {
    // The server still listens on plain http here; what matters is what its cookies ask of a browser.
    let secure: OAuthServer;
    before(async function () {
      secure = await startServer({ config: { issuer: 'https://id.gatehouse.test' } });
    });
    after(() => secure?.close());

    it('flow and session cookies are __Host- and Secure: no Domain, Path=/, not readable by scripts (RFC 6265bis §4.1.3.2)', async function () {
      const who = await secure.user('https');
      // The hosted page is on the issuer's origin: its forms say so.
      const browser = new Browser(secure, 'https://id.gatehouse.test');
      const first = await browser.get(authorizePath(webParams()));
      const login = locationOf(first, secure, 303);
      const resumed = await loginWithPassword(browser, secure, login, who);
      const cookies = [...first.headers.getSetCookie(), ...resumed.headers.getSetCookie()].filter(
        (c) => !/Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(c),
      );
      const flow = cookies.find((c) => c.startsWith('__Host-gh_flow_'));
      const session = cookies.find((c) => c.startsWith('__Host-gh_session='));
      for (const [name, cookie] of [
        ['flow', flow],
        ['session', session],
      ] as const) {
        expect(cookie, name).to.be.a('string');
        expect(cookie, name)
          .to.match(/; Secure/i)
          .and.match(/; HttpOnly/i)
          .and.match(/; Path=\/(;|$)/i)
          .and.not.match(/; Domain=/i);
      }
      // None of them goes without the prefix on https.
      expect(cookies.filter((c) => /^gh_(flow|session)/.test(c))).to.deep.equal([]);
    });
  });
});
