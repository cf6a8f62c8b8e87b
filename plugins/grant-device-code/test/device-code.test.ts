/**
 * RFC 8628 end to end on a real server: the device endpoint, the user code page with the hosted
 * login (single sign-on for a signed-in browser), and the polling answers of the token endpoint,
 * each with its exact status and code. One device is driven by openid-client 6.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import * as oidc from 'openid-client';
import { FakeClock } from '@gatehouse-auth/testing';
import {
  Browser,
  WEB,
  basic,
  passwordStage,
  decodeJwtParts,
  expectOAuthError,
  locationOf,
  postForm,
  sleep,
  startServer,
  type JsonResponse,
  type OAuthServer,
  type TestUser,
} from '../../../test/oauth/support.js';

const PLUGIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

const TV = { id: 'tv' };
const BOX = { id: 'box', secret: 'box-secret-0123456789abcdef0123456789abcdef' };
const APPS = [
  {
    client_id: TV.id,
    name: 'Living Room TV',
    token_endpoint_auth_method: 'none',
    grant_types: [DEVICE_GRANT, 'refresh_token'],
    scopes: ['openid', 'profile', 'offline_access'],
    login_stages: [['PASSWORD']],
  },
  {
    client_id: BOX.id,
    name: 'Set-top Box',
    client_secret: BOX.secret,
    grant_types: [DEVICE_GRANT],
    scopes: ['openid', 'profile'],
    login_stages: [['PASSWORD']],
  },
];

interface DeviceAnswer {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

function startDevice(server: OAuthServer, fields: Record<string, string>, auth?: string): Promise<JsonResponse> {
  return postForm(server, '/oauth/device_authorization', fields, auth);
}

async function device(server: OAuthServer, fields: Record<string, string> = { client_id: TV.id }) {
  const res = await startDevice(server, fields);
  expect(res.status, res.text).to.equal(200);
  return res.body as unknown as DeviceAnswer;
}

const poll = (server: OAuthServer, deviceCode: string, client: { id: string; secret?: string } = TV) =>
  postForm(
    server,
    '/oauth/token',
    { grant_type: DEVICE_GRANT, device_code: deviceCode, ...(client.secret ? {} : { client_id: client.id }) },
    client.secret ? basic(client.id, client.secret) : undefined,
  );

const csrfOf = (text: string) => /name="csrf" value="([^"]+)"/.exec(text)![1]!;
const confirmOf = (text: string) => /name="confirm" value="([^"]+)"/.exec(text)![1]!;

/** Opens the code page (verification_uri_complete) and submits the code; the response to the POST. */
async function submitCode(browser: Browser, answer: DeviceAnswer, code = answer.user_code): Promise<Response> {
  const page = await browser.get(answer.verification_uri_complete);
  expect(page.status).to.equal(200);
  const text = await page.text();
  expect(text).to.include(`value="${answer.user_code}"`);
  return browser.postForm('/device', { csrf: csrfOf(text), user_code: code });
}

/** From the code page to the confirmation page, signing in with the password when asked. */
async function toConfirmation(
  server: OAuthServer,
  browser: Browser,
  answer: DeviceAnswer,
  user: TestUser | null,
): Promise<string> {
  let next = locationOf(await submitCode(browser, answer), server, 303);
  if (user) {
    expect(next.pathname).to.equal('/login');
    next = await passwordStage(browser, server, next.searchParams.get('request_id')!, user);
  }
  expect(next.pathname).to.equal('/device/continue');
  const confirm = await browser.get(next.pathname + next.search);
  expect(confirm.status).to.equal(200);
  return confirm.text();
}

async function decide(browser: Browser, confirmPage: string, decision: 'allow' | 'deny'): Promise<Response> {
  return browser.postForm('/device/confirm', { csrf: csrfOf(confirmPage), confirm: confirmOf(confirmPage), decision });
}

describe('@gatehouse-auth/grant-device-code (RFC 8628)', function () {
  describe('a device on openid-client, a user in a browser', function () {
    let server: OAuthServer;
    let user: TestUser;

    before(async function () {
      server = await startServer({ plugins: [{ path: PLUGIN, options: { interval: 1 } }], apps: APPS });
      user = await server.user('device');
    });
    after(() => server?.close());

    it('announces device_authorization_endpoint in discovery', async function () {
      for (const p of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        const doc = (await (await fetch(server.url(p))).json()) as Record<string, unknown>;
        expect(doc.device_authorization_endpoint).to.equal(server.url('/oauth/device_authorization'));
      }
    });

    it('the device gets tokens once the user signed in and allowed it; the ID token names the user', async function () {
      const config = await oidc.discovery(new URL(server.issuer), TV.id, undefined, oidc.None(), {
        execute: [oidc.allowInsecureRequests],
      });
      const answer = await oidc.initiateDeviceAuthorization(config, { scope: 'openid profile offline_access' });
      expect(answer.user_code).to.match(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      expect(answer.verification_uri).to.equal(server.url('/device'));
      expect(answer.verification_uri_complete).to.equal(server.url(`/device?user_code=${answer.user_code}`));
      expect(answer.expires_in).to.equal(600);
      expect(answer.interval).to.equal(1);
      // The device polls (authorization_pending until the user answers) while the user goes through the page.
      const errors: string[] = [];
      config[oidc.customFetch] = async (url, options) => {
        const res = await fetch(url, options as RequestInit);
        if (res.status === 400) errors.push(((await res.clone().json()) as { error: string }).error);
        return res;
      };
      const polling = oidc.pollDeviceAuthorizationGrant(config, answer);
      await sleep(1500);
      const browser = new Browser(server);
      const confirm = await toConfirmation(server, browser, answer as unknown as DeviceAnswer, user);
      expect(confirm).to.include('Connect Living Room TV to your account?');
      const allowed = await decide(browser, confirm, 'allow');
      expect(allowed.status).to.equal(200);
      expect(await allowed.text()).to.include('Device connected');
      const tokens = await polling;
      expect(errors[0]).to.equal('authorization_pending');
      expect(errors).to.not.include('slow_down');
      expect(tokens.access_token).to.be.a('string');
      expect(tokens.refresh_token).to.be.a('string');
      expect(tokens.scope).to.equal('openid profile offline_access');
      const claims = tokens.claims()!;
      expect(claims.sub).to.equal(user.id);
      expect(claims.amr).to.deep.equal(['pwd']);
      // The device's grant is not the approving browser's session.
      expect(claims.sid).to.equal(undefined);
      expect(claims.auth_time).to.be.a('number');
      // The device code is spent.
      expectOAuthError(await poll(server, answer.device_code), 400, 'invalid_grant');
    });

    it('a signed-in browser is not asked to sign in again (single sign-on), only to confirm', async function () {
      const browser = new Browser(server);
      await toConfirmation(server, browser, await device(server), user);
      // The same browser, another device: straight from the code to the confirmation.
      const second = await device(server);
      const confirm = await toConfirmation(server, browser, second, null);
      expect(confirm).to.include('Living Room TV');
      expect((await decide(browser, confirm, 'allow')).status).to.equal(200);
      const tokens = await poll(server, second.device_code);
      expect(tokens.status, tokens.text).to.equal(200);
      expect(decodeJwtParts(tokens.body.id_token as string).payload.sub).to.equal(user.id);
    });

    it('a confidential client authenticates at the device endpoint; no refresh token without the grant', async function () {
      const answer = (await startDevice(server, { scope: 'openid' }, basic(BOX.id, BOX.secret)))
        .body as unknown as DeviceAnswer;
      const browser = new Browser(server);
      const confirm = await toConfirmation(server, browser, answer, user);
      expect(confirm).to.include('Connect Set-top Box to your account?');
      await decide(browser, confirm, 'allow');
      const tokens = await poll(server, answer.device_code, BOX);
      expect(tokens.status, tokens.text).to.equal(200);
      expect(tokens.body.scope).to.equal('openid');
      expect(tokens.body).to.not.have.property('refresh_token');
      expect(tokens.body.id_token).to.be.a('string');
    });

    it('the page speaks German to a German browser', async function () {
      const page = await new Browser(server).get('/device', { 'Accept-Language': 'de' });
      const text = await page.text();
      expect(text).to.include('<html lang="de">');
      expect(text).to.include('Gerät verbinden');
    });
  });

  describe('every error, on the server’s clock', function () {
    let server: OAuthServer;
    let user: TestUser;
    const clock = new FakeClock(new Date());

    before(async function () {
      server = await startServer({
        plugins: [{ path: PLUGIN, options: { code_attempts: { max: 20, window_seconds: 900 } } }],
        apps: APPS,
        clock,
        trustProxy: true,
      });
      user = await server.user('device-errors');
    });
    after(() => server?.close());

    describe('the device endpoint', function () {
      it('unauthorized_client: the client lacks the device_code grant type', async function () {
        expectOAuthError(await startDevice(server, {}, basic(WEB.id, WEB.secret)), 400, 'unauthorized_client');
      });

      it('invalid_scope: a scope the client does not have', async function () {
        expectOAuthError(await startDevice(server, { client_id: TV.id, scope: 'openid email' }), 400, 'invalid_scope');
      });

      it('invalid_client: a wrong secret, an unknown client, no client at all', async function () {
        expectOAuthError(await startDevice(server, {}, basic(BOX.id, 'wrong')), 401, 'invalid_client');
        expectOAuthError(await startDevice(server, { client_id: 'nobody' }), 401, 'invalid_client');
        expectOAuthError(await startDevice(server, {}), 401, 'invalid_client');
      });

      it('invalid_request: a repeated parameter', async function () {
        expectOAuthError(
          await startDevice(server, [
            ['client_id', TV.id],
            ['scope', 'openid'],
            ['scope', 'profile'],
          ] as never),
          400,
          'invalid_request',
        );
      });

      it('answers the codes with no-store; without scope, all of the client’s', async function () {
        const res = await startDevice(server, { client_id: TV.id });
        expect(res.headers.get('cache-control')).to.equal('no-store');
        const answer = res.body as unknown as DeviceAnswer;
        expect(answer.interval).to.equal(5);
        expect(answer.device_code).to.have.length.of.at.least(43);
      });
    });

    describe('polling', function () {
      it('authorization_pending, then slow_down with the interval raised by 5 s', async function () {
        const answer = await device(server);
        expectOAuthError(await poll(server, answer.device_code), 400, 'authorization_pending');
        clock.advance(2);
        const slow = expectOAuthError(await poll(server, answer.device_code), 400, 'slow_down');
        expect(slow.error_description).to.include('10 seconds');
        // 6 s later is within the raised interval (10 s): slow_down again (now 15 s).
        clock.advance(6);
        expectOAuthError(await poll(server, answer.device_code), 400, 'slow_down');
        clock.advance(15);
        expectOAuthError(await poll(server, answer.device_code), 400, 'authorization_pending');
      });

      it('access_denied after the user denied, and the page says so', async function () {
        const answer = await device(server);
        const browser = new Browser(server);
        const denied = await decide(browser, await toConfirmation(server, browser, answer, user), 'deny');
        expect(denied.status).to.equal(200);
        expect(await denied.text()).to.include('Not connected');
        expectOAuthError(await poll(server, answer.device_code), 400, 'access_denied');
        clock.advance(6);
        expectOAuthError(await poll(server, answer.device_code), 400, 'access_denied');
      });

      it('expired_token after expires_in, and the user code is gone from the page', async function () {
        const answer = await device(server);
        clock.advance(601);
        expectOAuthError(await poll(server, answer.device_code), 400, 'expired_token');
        const browser = new Browser(server);
        const res = await submitCode(browser, answer);
        expect(res.status).to.equal(400);
        expect(await res.text()).to.include('This code is wrong or has expired');
      });

      it('invalid_grant: an unknown device_code, another client’s, one used already', async function () {
        expectOAuthError(await poll(server, 'not-a-device-code'), 400, 'invalid_grant');
        const answer = await device(server);
        expectOAuthError(await poll(server, answer.device_code, BOX), 400, 'invalid_grant');
        const browser = new Browser(server);
        await decide(browser, await toConfirmation(server, browser, answer, user), 'allow');
        expect((await poll(server, answer.device_code)).status).to.equal(200);
        expectOAuthError(await poll(server, answer.device_code), 400, 'invalid_grant');
      });

      it('invalid_request without device_code', async function () {
        const res = await postForm(server, '/oauth/token', { grant_type: DEVICE_GRANT, client_id: TV.id });
        expectOAuthError(res, 400, 'invalid_request');
      });

      it('unauthorized_client: a client without the grant type polls', async function () {
        const res = await postForm(
          server,
          '/oauth/token',
          { grant_type: DEVICE_GRANT, device_code: 'x' },
          basic(WEB.id, WEB.secret),
        );
        expectOAuthError(res, 400, 'unauthorized_client');
      });
    });

    describe('the user code page', function () {
      it('a code typed in lower case, without the dash, is the same code', async function () {
        const answer = await device(server);
        const res = await submitCode(new Browser(server), answer, answer.user_code.replace('-', '').toLowerCase());
        expect(locationOf(res, server, 303).pathname).to.equal('/login');
      });

      it('a wrong code: 400 and the form again, nothing to sign in to', async function () {
        const answer = await device(server);
        const res = await submitCode(new Browser(server), answer, 'BBBB-BBBB');
        expect(res.status).to.equal(400);
        const text = await res.text();
        expect(text).to.include('This code is wrong or has expired');
        expect(text).to.include('name="user_code"');
      });

      it('a form without its CSRF token, or from another site: 403', async function () {
        const answer = await device(server);
        const browser = new Browser(server);
        const page = await (await browser.get('/device')).text();
        expect((await browser.postForm('/device', { csrf: 'forged', user_code: answer.user_code })).status).to.equal(
          403,
        );
        const crossSite = await browser.request('/device', {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://evil.example' },
          body: new URLSearchParams({ csrf: csrfOf(page), user_code: answer.user_code }).toString(),
        });
        expect(crossSite.status).to.equal(403);
        // Another browser (no cookie) with this one's token.
        expect(
          (await new Browser(server).postForm('/device', { csrf: csrfOf(page), user_code: answer.user_code })).status,
        ).to.equal(403);
        // The confirmation's form too.
        const confirm = await toConfirmation(server, browser, answer, user);
        const forged = await browser.postForm('/device/confirm', {
          csrf: 'x',
          confirm: confirmOf(confirm),
          decision: 'allow',
        });
        expect(forged.status).to.equal(403);
        expectOAuthError(await poll(server, answer.device_code), 400, 'authorization_pending');
      });

      it('a confirmation is answered once, and only for a login of this browser', async function () {
        const answer = await device(server);
        const browser = new Browser(server);
        let next = locationOf(await submitCode(browser, answer), server, 303);
        next = await passwordStage(browser, server, next.searchParams.get('request_id')!, user);
        // Another browser with the same link gets no confirmation.
        expect((await new Browser(server).get(next.pathname + next.search)).status).to.equal(400);
        const confirm = await (await browser.get(next.pathname + next.search)).text();
        expect((await decide(browser, confirm, 'allow')).status).to.equal(200);
        expect((await decide(browser, confirm, 'deny')).status).to.equal(410);
        clock.advance(6);
        expect((await poll(server, answer.device_code)).status).to.equal(200);
      });

      it('too many codes from one address: 429 with Retry-After, even for the right code', async function () {
        const answer = await device(server);
        const browser = new Browser(server);
        const from = { 'X-Forwarded-For': '198.51.100.7' };
        const page = await (await browser.get('/device')).text();
        const send = (code: string) =>
          browser.request('/device', {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...from },
            body: new URLSearchParams({ csrf: csrfOf(page), user_code: code }).toString(),
          });
        const statuses = [];
        for (let i = 0; i < 20; i++) statuses.push((await send('BBBB-BBBB')).status);
        const blocked = await send(answer.user_code);
        expect([...statuses, blocked.status]).to.deep.equal([...Array<number>(20).fill(400), 429]);
        expect(Number(blocked.headers.get('retry-after'))).to.be.above(0);
        expect(await blocked.text()).to.include('Too many attempts');
      });
    });
  });
});
