/**
 * Decision 40: the cidaas-style calls are the compat-cidaas plugin's. Left out of `plugins:`,
 * they answer 404 and leave /openapi.json, while the hosted login page (which continues through
 * the core's login flows from its own /login/finish, decision 76, as the core's /login/continue
 * does), the verification service and OAuth work as before. With the
 * plugin, its routes, its operations and its CORS prefixes are there; registered without a
 * server, the login flows and the setup API it uses say they need one.
 */
import { expect } from 'chai';
import { registerWithFakes } from '@gatehouse-auth/testing';
import compatCidaas from '@gatehouse-auth/compat-cidaas';
import type { RouteSpec } from '@gatehouse-auth/core';
import {
  Browser,
  WEB,
  WEB_CB,
  basic,
  locationOf,
  passwordStage,
  pkcePair,
  postForm,
  startServer,
  type OAuthServer,
  type TestUser,
} from '../../../test/oauth/support.js';

const CIDAAS_CALLS: [method: string, path: string][] = [
  ['POST', '/login-srv/login'],
  ['POST', '/login-srv/verification/login'],
  ['GET', '/public-srv/public/some-request'],
  ['POST', '/authz-srv/authrequest/authz/generate'],
  ['POST', '/verification-srv/public/graph/user/setup'],
  ['POST', '/verification-srv/v2/setup/public/configured/check/PASSWORD'],
  ['POST', '/verification-actions-srv/account/initiation'],
  ['POST', '/verification-actions-srv/account'],
  ['POST', '/verification-actions-srv/setup/TOTP/initiation/some-track'],
  ['GET', '/verification-actions-srv/config'],
  ['PUT', '/verification-actions-srv/setup/users/friendlyname/TOTP/some-credential'],
];

/** The paths of /openapi.json. */
async function documentedPaths(server: OAuthServer): Promise<string[]> {
  const doc = (await (await fetch(server.url('/openapi.json'))).json()) as { paths: Record<string, unknown> };
  return Object.keys(doc.paths);
}

describe('compat-cidaas left out of plugins: (decision 40)', function () {
  let server: OAuthServer;
  let user: TestUser;

  before(async function () {
    server = await startServer();
    user = await server.user('no-cidaas');
  });
  after(() => server?.close());

  for (const [method, path] of CIDAAS_CALLS) {
    it(`${method} ${path} answers 404`, async function () {
      const res = await fetch(server.url(path), {
        method,
        headers: { 'Content-Type': 'application/json', Origin: server.issuer },
        ...(method === 'GET' ? {} : { body: '{}' }),
      });
      expect(res.status).to.equal(404);
    });
  }

  it('its operations are not in /openapi.json; the hosted page’s continuation is', async function () {
    const paths = await documentedPaths(server);
    expect(
      paths.filter((p) => /login-srv|public-srv|authz-srv|graph\/user|account|friendlyname/.test(p)),
    ).to.deep.equal([]);
    expect(paths).to.include('/login/continue');
  });

  it('a preflight of /login-srv/ gets no CORS answer', async function () {
    const res = await fetch(server.url('/login-srv/login'), {
      method: 'OPTIONS',
      headers: { Origin: 'https://spa.example.test', 'Access-Control-Request-Method': 'POST' },
    });
    expect(res.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('the hosted login page signs in through /login/continue, to a code and tokens', async function () {
    const browser = new Browser(server);
    const { verifier, challenge } = pkcePair();
    const start = await browser.get(
      `/api/oauth2/authorize/?${new URLSearchParams({
        client_id: WEB.id,
        response_type: 'code',
        redirect_uri: WEB_CB,
        scope: 'openid',
        state: 's1',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      })}`,
    );
    const login = locationOf(start, server);
    expect(login.pathname).to.equal('/login');
    const page = await browser.get(login.pathname + login.search);
    expect(await page.text()).to.include('/login/finish');
    const resume = await passwordStage(browser, server, login.searchParams.get('request_id')!, user);
    const back = locationOf(await browser.get(resume.pathname + resume.search), server);
    const code = back.searchParams.get('code');
    expect(code, back.toString()).to.be.a('string');
    const token = await postForm(
      server,
      '/oauth/token',
      { grant_type: 'authorization_code', code: code!, redirect_uri: WEB_CB, code_verifier: verifier },
      basic(WEB.id, WEB.secret),
    );
    expect(token.status, JSON.stringify(token.body)).to.equal(200);
    expect(token.body.id_token).to.be.a('string');
  });
});

describe('compat-cidaas listed in plugins: (decision 40)', function () {
  let server: OAuthServer;

  before(async function () {
    server = await startServer({ plugins: [{ name: '@gatehouse-auth/compat-cidaas' }] });
  });
  after(() => server?.close());

  it('its operations are in /openapi.json', async function () {
    const paths = await documentedPaths(server);
    for (const path of ['/login-srv/login', '/login-srv/verification/login', '/authz-srv/authrequest/authz/generate']) {
      expect(paths).to.include(path);
    }
  });

  it('an unknown request at /public-srv/public is 404 REQUEST_NOT_FOUND, in the verification API’s envelope', async function () {
    const res = await fetch(server.url('/public-srv/public/nope'));
    expect(res.status).to.equal(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('REQUEST_NOT_FOUND');
  });
});

describe('compat-cidaas registered without a server (plugin API 1.3)', function () {
  it('adds one route group with its operations and the CORS prefixes of its XHR calls', async function () {
    const registered = await registerWithFakes(compatCidaas, { email_channel: 'capture' });
    expect(registered.routes).to.have.length(1);
    const operations = registered.routes[0]!.operations as readonly RouteSpec[];
    expect(operations.map((op) => op.path)).to.include.members([
      '/login-srv/login',
      '/login-srv/verification/login',
      '/public-srv/public/:requestId',
      '/authz-srv/authrequest/authz/generate',
      '/verification-actions-srv/setup/:method/initiation/:trackId',
    ]);
    expect(registered.cors).to.include.members([
      '/users-srv/register',
      '/registration-setup-srv/',
      '/useractions-srv/userexistence/',
      '/login-srv/',
      '/authz-srv/',
      '/public-srv/',
    ]);
    expect(registered.cors).to.include.members(['/users-srv/invite/', '/useractions-srv/invitations/']);
  });

  it('the login flows and the setup API say they need a running server', async function () {
    const { api } = await registerWithFakes(compatCidaas);
    expect(() => api.web.loginFlows.get('x')).to.throw(/api\.web\.loginFlows\.get needs a running server/);
    expect(() => api.web.setup.overview({} as never, 'TOTP', {} as never)).to.throw(/api\.web\.setup\.overview needs/);
  });

  it('refuses an option naming a delivery channel nobody registered', async function () {
    let failure: unknown = null;
    try {
      await registerWithFakes(compatCidaas, { sms_channel: 'nowhere' });
    } catch (err) {
      failure = err;
    }
    expect(String(failure)).to.include('options.sms_channel: no delivery channel "nowhere"');
  });
});
