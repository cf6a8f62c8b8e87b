/**
 * @gatehouse-auth/openapi (decision 59): left out of `plugins:`, /openapi.json and /openapi answer
 * 404 and are no CORS path; listed, the document validates as OpenAPI 3.1 and holds the routes of
 * the core and of other plugins, read from `api.web.routeSpecs()` after start-up; the reference
 * page escapes every text it takes from the declarations.
 */
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { registerWithFakes } from '@gatehouse-auth/testing';
import openapiPlugin from '@gatehouse-auth/openapi';
import { startServer, type OAuthServer } from '../../../test/oauth/support.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const OPENAPI = '@gatehouse-auth/openapi';
const MARKUP_ROUTE = fileURLToPath(new URL('./fixtures/markup-route.js', import.meta.url));
const SPA_ORIGIN = 'https://spa.example';
const SPA_APP = {
  client_id: 'openapi-spa',
  name: 'SPA',
  redirect_uris: [`${SPA_ORIGIN}/cb`],
  allowed_origins: [SPA_ORIGIN],
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code'],
};

describe('@gatehouse-auth/openapi left out of plugins:', function () {
  this.timeout(60_000);
  let server: OAuthServer;
  before(async () => {
    server = await startServer({ without: [OPENAPI], apps: [SPA_APP] });
  });
  after(() => server?.close());

  it('/openapi.json and /openapi answer 404 NOT_FOUND', async () => {
    for (const p of ['/openapi.json', '/openapi']) {
      const res = await fetch(server.url(p), { headers: { Accept: 'application/json' } });
      expect(res.status, p).to.equal(404);
      expect(((await res.json()) as Json).error.code, p).to.equal('NOT_FOUND');
    }
  });

  it('/openapi.json is no CORS path then', async () => {
    const res = await fetch(server.url('/openapi.json'), { headers: { Origin: SPA_ORIGIN } });
    expect(res.status).to.equal(404);
    expect(res.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('the rest of the server answers as before', async () => {
    expect((await fetch(server.url('/.well-known/openid-configuration'))).status).to.equal(200);
    expect((await fetch(server.url('/health/live'))).status).to.equal(200);
  });
});

describe('@gatehouse-auth/openapi listed in plugins:', function () {
  this.timeout(60_000);
  let server: OAuthServer;
  let doc: Json;
  before(async () => {
    // The suite's server lists it before these plugins: it reads their routes after start-up.
    server = await startServer({
      apps: [SPA_APP],
      plugins: [{ name: '@gatehouse-auth/oauth-par' }, { path: MARKUP_ROUTE }],
    });
    const res = await fetch(server.url('/openapi.json'));
    expect(res.status).to.equal(200);
    doc = (await res.json()) as Json;
  });
  after(() => server?.close());

  it('the document validates as OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('holds the core’s routes, other plugins’ (registered after it) and its own', () => {
    expect(doc.paths['/oauth/token'].post.operationId).to.be.a('string');
    expect(doc.paths['/oauth/par'].post.operationId).to.equal('pushedAuthorizationRequest');
    expect(doc.paths['/markup/probe'].get.operationId).to.equal('markupProbe');
    expect(doc.paths['/admin/users'].post).to.be.an('object');
    expect(doc.paths['/openapi.json'].get.operationId).to.equal('openApiDocument');
    expect(doc.info.version).to.match(/^\d+\.\d+\.\d+/);
    expect(doc.servers).to.deep.equal([{ url: server.issuer }]);
  });

  it('reads from a listed origin (its CORS prefix)', async () => {
    const res = await fetch(server.url('/openapi.json'), { headers: { Origin: SPA_ORIGIN } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('access-control-allow-origin')).to.equal(SPA_ORIGIN);
  });

  it('the reference page escapes every text of a declaration, under the pages’ CSP', async () => {
    const res = await fetch(server.url('/openapi'));
    expect(res.status).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('public, max-age=300');
    expect(res.headers.get('content-security-policy')).to.include("default-src 'none'");
    expect(res.headers.get('content-security-policy')).to.not.include('unsafe-inline');
    const page = await res.text();
    expect(page).to.not.include('<img');
    expect(page).to.not.include('<script');
    expect(page).to.include('Summary &lt;img src=x onerror=alert(1)&gt;');
    expect(page).to.include('Query &lt;img');
    expect(page).to.include('Closed &lt;img');
    expect(page).to.include('&quot;');
    expect(page).to.include('<code>GET /markup/probe</code>');
  });
});

describe('@gatehouse-auth/openapi without a server', () => {
  it('registers, and the route specs say they need a server', async () => {
    const registered = await registerWithFakes(openapiPlugin, {});
    expect(registered.routes.map((r) => r.path)).to.deep.equal(['/openapi.json', '/openapi']);
    expect(() => registered.api.web.routeSpecs()).to.throw(/server/);
  });
});
