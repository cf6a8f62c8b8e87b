/**
 * Issue 12: CORS for apps that call the API from their own origin (apps[i].allowed_origins),
 * on the demo config with demo-spa allowing http://127.0.0.1:5173.
 */
import { expect } from 'chai';
import { parseConfig } from '@gatehouse-auth/core';
import { startDemoServer, type DemoServer } from './demo-server.js';

const SPA_ORIGIN = 'http://127.0.0.1:5173';
const STRANGER = 'https://evil.example';

describe('CORS for the apps’ own origins (issue 12)', function () {
  let server: DemoServer;

  before(async function () {
    server = await startDemoServer({
      configure(config) {
        config.apps.find((a) => a.client_id === 'demo-spa')!.allowed_origins = [SPA_ORIGIN];
      },
    });
  });
  after(() => server?.close());

  const preflight = (path: string, origin: string, headers = 'content-type, requestid, trackid') =>
    fetch(server.url(path), {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': headers },
    });

  for (const path of [
    '/verification-srv/authentication/PASSWORD/initiation',
    '/login-srv/verification/login',
    '/oauth/token',
    // A plugin's endpoint (api.cors): pushed authorization requests from a single-page app.
    '/oauth/par',
    '/userinfo',
    '/.well-known/openid-configuration',
    '/openapi.json',
  ]) {
    it(`preflight of ${path}: a listed origin is allowed with credentials, methods and the clients' headers`, async function () {
      const res = await preflight(path, SPA_ORIGIN);
      expect(res.status).to.equal(204);
      expect(res.headers.get('access-control-allow-origin')).to.equal(SPA_ORIGIN);
      expect(res.headers.get('access-control-allow-credentials')).to.equal('true');
      expect(res.headers.get('access-control-allow-methods')).to.equal('GET,POST,PUT');
      expect(res.headers.get('access-control-allow-headers')).to.include('requestid').and.include('trackid');
      expect(res.headers.get('vary')).to.match(/Origin/);
    });
  }

  it('an unlisted origin gets no CORS headers, on the preflight and on the request', async function () {
    const pre = await preflight('/verification-srv/authentication/PASSWORD/initiation', STRANGER);
    expect(pre.headers.get('access-control-allow-origin')).to.equal(null);
    expect(pre.headers.get('vary')).to.match(/Origin/);
    const res = await fetch(server.url('/verification-srv/authentication/PASSWORD/initiation'), {
      method: 'POST',
      headers: { Origin: STRANGER, 'Content-Type': 'application/json' },
      body: JSON.stringify({}),
    });
    expect(res.status).to.equal(400);
    expect(res.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('the JSON API answers a listed origin with its CORS headers (the fast path hands such calls to express)', async function () {
    const res = await fetch(server.url('/verification-srv/authentication/PASSWORD/initiation'), {
      method: 'POST',
      headers: { Origin: SPA_ORIGIN, 'Content-Type': 'application/json' },
      body: JSON.stringify({ request_id: 'nope', usage_type: 'INITIAL_AUTHENTICATION', identifier: 'alice' }),
    });
    expect(res.status).to.equal(404);
    expect(res.headers.get('access-control-allow-origin')).to.equal(SPA_ORIGIN);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('REQUEST_NOT_FOUND');
  });

  it('the API description reads from a listed origin (a developer portal renders it there)', async function () {
    const res = await fetch(server.url('/openapi.json'), { headers: { Origin: SPA_ORIGIN } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('access-control-allow-origin')).to.equal(SPA_ORIGIN);
    expect(((await res.json()) as { openapi: string }).openapi).to.match(/^3\./);
  });

  it('never on /authorize: it is a navigation, not an API', async function () {
    const res = await fetch(server.url('/api/oauth2/authorize/?client_id=demo-spa'), {
      headers: { Origin: SPA_ORIGIN },
      redirect: 'manual',
    });
    expect(res.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('allowed_origins must be origins: a path, a wildcard or a bare host is refused at start-up', function () {
    for (const bad of ['https://app.example/login', '*', 'app.example']) {
      const raw = { issuer: 'http://localhost:3000', apps: [{ client_id: 'x', allowed_origins: [bad] }] };
      expect(() => parseConfig(raw, {}), bad).to.throw(/allowed_origins/);
    }
    const ok = parseConfig(
      { issuer: 'http://localhost:3000', apps: [{ client_id: 'x', allowed_origins: [SPA_ORIGIN] }] },
      {},
    );
    expect(ok.apps[0]!.allowed_origins).to.deep.equal([SPA_ORIGIN]);
  });
});
