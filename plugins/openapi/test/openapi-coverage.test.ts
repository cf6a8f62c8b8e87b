/**
 * /openapi.json covers the server (decision 26): every route express and the fast path answer
 * has an operation, or is listed below as a page or redirect; every error code the code can
 * answer with, the tests assert and the specs' failure rows name is documented; a third-party
 * plugin's endpoint shows up and validates with its declaration.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { DEMO_ADMIN_TOKEN, startDemoServer, type DemoServer } from '../../../test/oauth/demo-server.js';
import { ADMIN_TOKEN, startServer, type OAuthServer } from '../../../test/oauth/support.js';
import { fixturePlugin, REPO_ROOT } from '../../../test/support/paths.js';
import { documentedCodes, VERIFICATION_ERRORS } from '../../../test/support/openapi.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const VERIFY = '/verification-srv/authentication/{method}/verification';

/** Routes that answer no JSON: pages, redirects, static assets. Each says why. */
const NOT_JSON: Record<string, string> = {
  'get /api/oauth2/authorize': 'redirects the browser (to the login page or back to the client)',
  'get /api/oauth2/authorize/': 'redirects the browser (to the login page or back to the client)',
  'get /api/oauth2/authorize/resume': 'redirects the browser after a login',
  'get /login/consent': 'HTML consent page',
  'post /login/consent': 'form post answered with a redirect',
  'post /login/cancel': 'form post answered with a redirect',
  'get /login/account': 'HTML account choice page',
  'post /login/account': 'form post answered with a redirect',
  // @gatehouse-auth/page-login, mounted at /login: its '/' is GET /login.
  'get /login/': 'HTML login page',
  'get /login/assets/login.js': 'static script',
  'get /login/assets/login.css': 'static style sheet',
  'get /login/assets/form-post.js': 'static script',
  'get /favicon.ico': 'static icon (SVG)',
  // @gatehouse-auth/page-landing, loaded by the first suite below.
  'get /': 'HTML landing page for a browser (API clients get the JSON 404 NOT_FOUND)',
  // @gatehouse-auth/branding, loaded by the first suite below.
  'get /branding/logo': 'the configured logo file (static image)',
  'get /branding/apps/{clientId}/logo': "an app's configured logo file (static image)",
  'get /branding/color/{file}': "the primary color's style sheet, made from its path",
  'get /login/assets/offer.js': 'static script',
  'get /login/assets/messages.js': 'static script',
  'get /login/methods/{id}/{version}/{file}': "a method's page module (static script)",
  'get /login/offer': 'HTML page offering a method after the login',
  'post /login/offer/done': 'form post answered with a redirect',
  'post /login/finish': 'form post answered with a redirect (the next stage, the offer page or the app)',
  'get /login/assets/enroll.js': 'static script',
  'get /login/assets/resend.js': 'static script',
  'get /login/assets/password-reveal.js': 'static script',
  'get /login/enroll': 'HTML page: a method to set up during a login',
  'post /login/enroll/start': 'form post answered with an HTML page',
  'post /login/enroll/verify': 'form post answered with a redirect or the page again',
  'get /login/required': 'HTML page of what an admin required at the next sign-in, or a redirect',
  'post /login/required/password': 'form post answered with a redirect or the page again',
  // @gatehouse-auth/invitations, loaded by the first suite below.
  'get /invitations/accept': 'HTML page of an invitation link',
  'get /invitations/assets/accept-page.js': 'static script',
  'post /invitations/accept/open': 'form post answered with an HTML page',
  'post /invitations/accept': 'form post answered with an HTML page',
  // @gatehouse-auth/page-link, loaded by the first suite below.
  'get /verification-srv/authentication/{method}/link': 'HTML page of a sign-in link',
  'post /verification-srv/authentication/{method}/link': 'HTML page of a sign-in link',
  // @gatehouse-auth/devices-api, loaded by the first suite below.
  'get /devices/bind': 'HTML notice for the QR code link opened in a browser',
  'get /session/end_session': 'HTML logout page or redirect',
  'post /session/end_session': 'HTML logout page or redirect',
  'get /openapi': 'the HTML reference page of this document',
  // @gatehouse-auth/grant-device-code, loaded by the first suite below.
  'get /device/': 'HTML page to enter a device’s user code (also without the slash)',
  'post /device/': 'form post answered with the login redirect or the page again',
  'get /device/continue': 'HTML confirmation page after the login',
  'post /device/confirm': 'form post answered with an HTML page',
};

/** `/a/:x{/:y}` → the OpenAPI spellings of the paths it matches. */
function openApiPaths(expressPath: string): string[] {
  const convert = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  const optional = /\{\/:([A-Za-z0-9_]+)\}$/.exec(expressPath);
  if (!optional) return [convert(expressPath)];
  const base = expressPath.slice(0, optional.index);
  return [convert(base), convert(`${base}/:${optional[1]}`)];
}

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** Every (method, path) express routes, plugin routers under their mount paths. */
function expressRoutes(app: { router: { stack: Layer[] } }, mounts: Map<unknown, string>): [string, string][] {
  const out: [string, string][] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const method of Object.keys(layer.route.methods)) for (const p of paths) out.push([method, prefix + p]);
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack, prefix + (mounts.get(layer.handle) ?? '').replace(/\/$/, ''));
      }
    }
  };
  walk(app.router.stack, '');
  return out;
}

function allCodes(doc: Json): Set<string> {
  const codes = new Set<string>();
  for (const [p, item] of Object.entries(doc.paths as Json))
    for (const [method, op] of Object.entries(item as Json))
      for (const status of Object.keys((op as Json).responses))
        for (const code of documentedCodes(doc, method, p, Number(status))) codes.add(code);
  return codes;
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

/**
 * Each operation of `doc` called with made-up parameters (a registered method and an unknown
 * one) and bodies that break or miss its schema, with and without credentials: whatever it
 * answers, the status must be documented, and an error's code among those documented for it.
 */
async function undocumentedAnswers(
  url: (path: string) => string,
  doc: Json,
  adminToken: string,
): Promise<{ requests: number; problems: string[] }> {
  const BODIES: [string, string][] = [
    ['application/json', '[1, 2]'],
    ['application/json', '{}'],
    ['application/json', '{"name": {"a": 1}, "sub": [], "exchange_id": 5, "request_id": null}'],
    ['application/x-www-form-urlencoded', 'token=&grant_type=&x=1'],
  ];
  // Wrong tokens come from an address of their own (the servers trust X-Forwarded-For): they block
  // it after 20 (429, documented too), and the admin token keeps reaching the handlers.
  const AUTHS: [string | undefined, Record<string, string>][] = [
    [undefined, {}],
    [`Bearer ${adminToken}`, {}],
    ['Bearer not-a-token', { 'X-Forwarded-For': '192.0.2.1' }],
  ];
  const problems: string[] = [];
  let requests = 0;
  for (const [p, item] of Object.entries(doc.paths as Json)) {
    for (const method of Object.keys(item as Json)) {
      const urls = [...new Set(['PASSWORD', 'NOPE'].map((m) => p.replace(/\{method\}/g, m)))].map((u) =>
        u.replace(/\{[A-Za-z]+\}/g, 'x'),
      );
      const hasBody = method !== 'get' && method !== 'delete';
      for (const target of urls)
        for (const [type, body] of hasBody ? BODIES : [['', ''] as [string, string]])
          for (const [auth, from] of AUTHS) {
            const headers: Record<string, string> = { Accept: 'application/json', ...from };
            if (type) headers['Content-Type'] = type;
            if (auth) headers.Authorization = auth;
            const res = await fetch(url(target), {
              method: method.toUpperCase(),
              headers,
              redirect: 'manual',
              ...(hasBody ? { body } : {}),
            });
            requests += 1;
            const what = `${method.toUpperCase()} ${target} (${type || 'no body'}, ${auth ?? 'no auth'}) → ${res.status}`;
            const text = await res.text();
            if (!(item as Json)[method].responses[res.status]) {
              problems.push(`${what}: status not documented`);
              continue;
            }
            // An operation documented as needing a bearer refuses a call without one.
            const security = ((item as Json)[method].security as Json[]).flatMap((alt) => Object.keys(alt));
            const bearerOnly =
              (item as Json)[method].security.length > 0 &&
              security.length === (item as Json)[method].security.length &&
              security.every((name) => name === 'adminToken' || name === 'accessToken');
            if (bearerOnly && !auth && res.status !== 401 && res.status !== 403)
              problems.push(`${what}: documented as needing a bearer, answered without one`);
            if (res.status < 400 || !text) continue;
            const answer = JSON.parse(text) as Json;
            const code = answer.error?.code ?? answer.error;
            if (!documentedCodes(doc, method, p, res.status).includes(code))
              problems.push(`${what}: ${code} not documented`);
          }
    }
  }
  return { requests, problems };
}

describe('OpenAPI coverage', function () {
  this.timeout(60_000);
  let server: OAuthServer;
  let doc: Json;
  before(async () => {
    server = await startServer({
      trustProxy: true,
      plugins: [
        { name: '@gatehouse-auth/channel-outbox', options: { expose_route: true } },
        // A code method's own codes (TOO_MANY_SENDS) are documented on the steps that run it.
        { name: '@gatehouse-auth/method-sms', options: { channel: 'outbox' } },
        { path: fixturePlugin('documented-route.js') },
        { path: path.join(REPO_ROOT, 'plugins', 'grant-device-code') },
        // The token binding's codes (DPoP) are documented when a plugin registers one.
        { path: path.join(REPO_ROOT, 'plugins', 'oauth-dpop') },
        { path: path.join(REPO_ROOT, 'plugins', 'oauth-par') },
        { path: path.join(REPO_ROOT, 'plugins', 'oauth-dcr') },
        { path: path.join(REPO_ROOT, 'plugins', 'invitations'), options: { email_channel: 'outbox' } },
        // Its calls document codes the core's login flows throw for it (generate, setup during a login).
        { path: path.join(REPO_ROOT, 'plugins', 'compat-cidaas') },
        // Its logo and color routes are pages listed in NOT_JSON.
        { path: path.join(REPO_ROOT, 'plugins', 'branding') },
        { name: '@gatehouse-auth/page-link' },
        { name: '@gatehouse-auth/devices-api' },
        { name: '@gatehouse-auth/page-landing' },
      ],
    });
    doc = (await (await fetch(server.url('/openapi.json'))).json()) as Json;
  });
  after(() => server.close());

  const documented = (method: string, p: string) => Boolean(doc.paths[p]?.[method]);

  it('every express route has an operation, or is a page or redirect listed with its reason', () => {
    const { gatehouse } = server;
    const mounts = new Map<unknown, string>(
      [...gatehouse.container.cradle.extensions.routes.values()].map((r) => [r.router, r.path]),
    );
    const routes = expressRoutes(gatehouse.express as never, mounts);
    expect(routes.length).to.be.above(60);
    const missing: string[] = [];
    for (const [method, expressPath] of routes) {
      for (const p of openApiPaths(expressPath)) {
        // router.all on the token paths: 405 for every other method, documented on their POST.
        if (method === '_all') {
          if (!documented('post', p)) missing.push(`ALL ${p}`);
          continue;
        }
        if (!documented(method, p) && !NOT_JSON[`${method} ${p}`]) missing.push(`${method.toUpperCase()} ${p}`);
      }
    }
    expect(missing, 'routes with neither an operation nor a NOT_JSON reason').to.deep.equal([]);
  });

  it('no page or redirect listed as such is documented as JSON too, and each still exists', () => {
    const { gatehouse } = server;
    const mounts = new Map<unknown, string>(
      [...gatehouse.container.cradle.extensions.routes.values()].map((r) => [r.router, r.path]),
    );
    const routes = new Set(
      expressRoutes(gatehouse.express as never, mounts).flatMap(([m, p]) => openApiPaths(p).map((q) => `${m} ${q}`)),
    );
    for (const key of Object.keys(NOT_JSON)) {
      expect(routes.has(key), `${key} is no route any more`).to.equal(true);
      const [method, p] = key.split(' ') as [string, string];
      expect(documented(method, p), `${key} is listed as a page but documented`).to.equal(false);
    }
  });

  it('every fast-path route has an operation', () => {
    const missing = server.gatehouse.fastRoutes
      .flatMap((r) => openApiPaths(r.path).map((p) => [r.method, p] as const))
      .filter(([method, p]) => !documented(method === '*' ? 'post' : method.toLowerCase(), p));
    expect(missing).to.deep.equal([]);
    expect(server.gatehouse.fastRoutes.length).to.be.above(5);
  });

  it('a third-party plugin’s endpoint is documented under its mount path, with its own codes', () => {
    const op = doc.paths['/acme/echo'].post;
    expect(op.tags).to.deep.equal(['acme']);
    expect(op.requestBody.content['application/json'].schema.properties.message.maxLength).to.equal(100);
    expect(documentedCodes(doc, 'post', '/acme/echo', 409)).to.deep.equal(['ACME_CLOSED']);
    expect(doc.paths['/dev/outbox/latest'].get.parameters[0]).to.include({ name: 'to', in: 'query', required: true });
  });

  describe('every error code is documented', () => {
    it('each code the sources throw or a method outcome carries', () => {
      // Codes of the authorization endpoint's redirects and pages are not JSON answers.
      const redirects = /core\/src\/oauth\/(authorize\/|acr\.ts)|core\/src\/cli\//;
      const files = [
        ...sourceFiles(path.join(REPO_ROOT, 'core/src')),
        // The contract's package throws some too (its request readers, decision 84).
        ...sourceFiles(path.join(REPO_ROOT, 'core/plugin-api/src')),
        ...readdirSync(path.join(REPO_ROOT, 'plugins')).flatMap((p) =>
          sourceFiles(path.join(REPO_ROOT, 'plugins', p, 'src')),
        ),
      ].filter((f) => !redirects.test(f));
      const patterns = [
        /verificationError(?:WithStatus)?\('([A-Z_]+)'/g,
        /new ApiError\(\d+, '([A-Z_]+)'/g,
        /ok: false, code: '([A-Z_]+)'/g,
        /(?:OAuthError|oauthError)\('([a-z_]+)'/g,
      ];
      const thrown = new Set<string>();
      for (const file of files) {
        const text = readFileSync(file, 'utf8');
        for (const re of patterns) for (const m of text.matchAll(re)) thrown.add(m[1]!);
      }
      // Only for a path no route answers.
      thrown.delete('NOT_FOUND');
      expect(thrown.size).to.be.above(40);
      const codes = allCodes(doc);
      expect([...thrown].filter((c) => !codes.has(c)).sort()).to.deep.equal([]);
    });

    it('each code of the verification catalogue', () => {
      const codes = allCodes(doc);
      expect(Object.keys(VERIFICATION_ERRORS).filter((c) => !codes.has(c))).to.deep.equal([]);
    });

    it('each code a test asserts on an HTTP answer', () => {
      const assertion =
        /(?:expectError\(\w+, \d+, |expectOAuthError\([^,]+, \d+, |code\)\.to\.equal\(|error\)\.to\.equal\()'([A-Za-z_]+)'/g;
      // Start-up failures and the authorization endpoint's redirect errors are no JSON answers.
      const notHttp = /^(PLUGIN_|CONFIG_|ERR_|API_SPEC_)|^request_(uri_)?not_supported$/;
      const files = [
        ...sourceFiles(path.join(REPO_ROOT, 'test')),
        ...readdirSync(path.join(REPO_ROOT, 'plugins')).flatMap((p) =>
          sourceFiles(path.join(REPO_ROOT, 'plugins', p, 'test')),
        ),
      ].filter((f) => f.endsWith('.test.ts'));
      const asserted = new Set<string>();
      for (const file of files)
        for (const m of readFileSync(file, 'utf8').matchAll(assertion)) if (!notHttp.test(m[1]!)) asserted.add(m[1]!);
      expect(asserted.size).to.be.above(20);
      const codes = allCodes(doc);
      expect([...asserted].filter((c) => !codes.has(c)).sort()).to.deep.equal([]);
    });

    // The failure rows of /work/shared/spec (verification-srv.md §7, oauth2.md §7), on their operation.
    const SPEC_ROWS: [string, string, string, number, string[]][] = [
      ['exchange_id expired, invalid or already used', 'post', VERIFY, 400, ['EXCHANGE_INVALID']],
      ['exchange_id expired', 'post', VERIFY, 410, ['EXCHANGE_EXPIRED']],
      ['exchange_id already used', 'post', VERIFY, 409, ['EXCHANGE_USED']],
      ['a method-specific field is missing', 'post', VERIFY, 400, ['FIELD_MISSING']],
      ['fields of different methods are mixed', 'post', VERIFY, 400, ['FIELDS_MIXED']],
      ['the method is not enabled for the app or user', 'post', VERIFY, 403, ['METHOD_NOT_ENABLED']],
      ['the exchange_id belongs to a different flow stage', 'post', VERIFY, 400, ['WRONG_FLOW_STAGE']],
      ['single_factor_auth with another method than FACE', 'post', VERIFY, 400, ['SINGLE_FACTOR_NOT_ALLOWED']],
      ['the method-specific check fails', 'post', VERIFY, 401, ['VERIFICATION_FAILED']],
      ['the FDS check flags suspicious activity', 'post', VERIFY, 403, ['FDS_BLOCKED']],
      ['token: a scope the subject token does not hold', 'post', '/oauth/token', 401, ['invalid_scope']],
      ['token, refresh: invalid credentials', 'post', '/oauth2/token/', 401, ['invalid_client']],
      ['token, refresh: invalid refresh token', 'post', '/oauth2/token/', 400, ['invalid_grant']],
      ['introspection: invalid client credentials', 'post', '/token/introspect', 401, ['invalid_client']],
      ['introspection: bearer token insufficient or invalid', 'post', '/token/introspect', 401, ['invalid_token']],
      ['revocation: malformed request', 'post', '/oauth2/revoke/', 400, ['invalid_request']],
      ['revocation: missing or invalid client authentication', 'post', '/token/revoke', 401, ['invalid_client']],
      ['revocation: server fault', 'post', '/oauth2/revoke/', 500, ['server_error']],
    ];
    for (const [row, method, p, status, codes] of SPEC_ROWS) {
      it(`spec failure row: ${row} → ${status} ${codes.join(', ')} on ${method.toUpperCase()} ${p}`, () => {
        expect(documentedCodes(doc, method, p, status)).to.include.members(codes);
      });
    }
  });

  it('every answer to a wrong request is documented', async function () {
    this.timeout(120_000);
    const { requests, problems } = await undocumentedAnswers(server.url, doc, ADMIN_TOKEN);
    expect(requests).to.be.above(300);
    expect(problems).to.deep.equal([]);
  });

  describe('a request that breaks a schema gets the documented error', () => {
    const send = async (method: string, p: string, body: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(server.url(p), {
        method,
        headers: { 'Content-Type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Json };
    };

    it('a plugin’s body: 400 INVALID_FIELD naming the field', async () => {
      const res = await send('POST', '/acme/echo', { message: '' });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_FIELD');
      expect(res.body.error.details).to.deep.equal({ fields: ['message'] });
      expect(documentedCodes(doc, 'post', '/acme/echo', 400)).to.include('INVALID_FIELD');
      const fine = await send('POST', '/acme/echo', { message: 'hi' });
      expect(fine).to.deep.equal({ status: 200, body: { success: true, status: 200, data: { echo: 'hi' } } });
    });

    it('a plugin’s query: its own code, documented', async () => {
      const res = await fetch(server.url('/dev/outbox/latest'));
      expect(res.status).to.equal(400);
      const body = (await res.json()) as Json;
      expect(body.error.code).to.equal('FIELD_MISSING');
      expect(documentedCodes(doc, 'get', '/dev/outbox/latest', 400)).to.include('FIELD_MISSING');
    });

    it('verification on the fast path: a body that is no object → 400 INVALID_FIELD', async () => {
      const res = await send('POST', '/verification-srv/authentication/PASSWORD/initiation', [1, 2]);
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_FIELD');
      expect(documentedCodes(doc, 'post', '/verification-srv/authentication/{method}/initiation', 400)).to.include(
        'INVALID_FIELD',
      );
    });

    it('setup: an empty credential name → 400 INVALID_FIELD', async () => {
      const user = await server.user('oas');
      const res = await send(
        'PATCH',
        `/verification-actions-srv/setup/users/${user.id}/devices/some-device`,
        { name: '  ' },
        { Authorization: `Bearer ${ADMIN_TOKEN}` },
      );
      expect(res.status).to.equal(400);
      expect(res.body.error).to.include({ code: 'INVALID_FIELD', error: 'name must be 1 to 64 characters' });
      expect(
        documentedCodes(doc, 'patch', '/verification-actions-srv/setup/users/{sub}/devices/{deviceId}', 400),
      ).to.include('INVALID_FIELD');
    });

    it('token without grant_type → 400 invalid_request (form body, OAuth error)', async () => {
      const res = await fetch(server.url('/oauth/token'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'client_id=web',
      });
      expect(res.status).to.equal(400);
      expect(await res.json()).to.deep.equal({ error: 'invalid_request', error_description: 'grant_type is required' });
      const op = doc.paths['/oauth/token'].post;
      expect(Object.keys(op.requestBody.content)).to.deep.equal(['application/x-www-form-urlencoded']);
      expect(op.requestBody.content['application/x-www-form-urlencoded'].schema.required).to.deep.equal(['grant_type']);
      expect(documentedCodes(doc, 'post', '/oauth/token', 400)).to.include('invalid_request');
    });
  });
});

describe('OpenAPI on the demo config (every bundled method and grant, and FACE)', function () {
  this.timeout(180_000);
  let server: DemoServer;
  let doc: Json;
  before(async () => {
    server = await startDemoServer({
      trustProxy: true,
      configure(config) {
        config.plugins.push({ name: '@gatehouse-auth/method-face', options: { channel: 'outbox' } });
      },
    });
    doc = (await (await fetch(server.url('/openapi.json'))).json()) as Json;
  });
  after(() => server.close());

  it('validates as OpenAPI 3.1', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).to.deep.equal([]);
    expect(result.valid).to.equal(true);
  });

  it('documents the registered grants’ parameters and methods’ fields and files', () => {
    const token = doc.paths['/oauth/token'].post.requestBody.content['application/x-www-form-urlencoded'].schema;
    expect(token.properties).to.include.keys('code_verifier', 'refresh_token', 'assertion', 'subject_token');
    const verify = doc.paths[VERIFY].post.requestBody.content;
    expect(Object.keys(verify)).to.include('multipart/form-data');
    expect(verify['application/json'].schema.properties).to.include.keys(
      'pass_code',
      'password',
      'push_id',
      'fido2_client_response',
    );
    expect(doc.paths[VERIFY].post.description).to.match(/FACE: .*photo \(file\)/);
  });

  it('every answer to a wrong request is documented', async () => {
    const { requests, problems } = await undocumentedAnswers(server.url, doc, DEMO_ADMIN_TOKEN);
    expect(requests).to.be.above(300);
    expect(problems).to.deep.equal([]);
  });
});
