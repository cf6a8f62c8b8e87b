/**
 * Apps at run time (decision 0051): `/admin/apps` creates, changes, rotates the secret of and
 * deletes apps stored in the database, which sign in at once; config apps are listed read-only
 * (409 APP_READ_ONLY); a rotated secret keeps working for its overlap and not after (the server's
 * FakeClock); deleting an app revokes its tokens; two nodes on one PostgreSQL database (the peer
 * bus) and two on one SQLite file (the poll) see a change without a restart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { FakeClock } from '@gatehouse-auth/testing';
import { withPostgresDatabase } from '../../../test/support/postgres.js';
import {
  ADMIN_TOKEN,
  MACHINE,
  basic,
  obtainCode,
  postForm,
  clientKey,
  expectOAuthError,
  introspect,
  machineToken,
  startServer,
  type OAuthServer,
} from '../../../test/oauth/support.js';

interface Answer {
  status: number;
  body: {
    success: boolean;
    data: Record<string, unknown> & { app: Record<string, unknown> };
    error?: { code: string };
  };
  text: string;
}

async function admin(
  server: OAuthServer,
  method: string,
  p: string,
  body?: unknown,
  token = ADMIN_TOKEN,
): Promise<Answer> {
  const res = await fetch(server.url(`/admin${p}`), {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {}, text };
}

function expectRefusal(res: Answer, status: number, code: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body.error?.code, res.text).to.equal(code);
}

/** A service app as an operator would create one. */
const serviceApp = (id: string, extra: Record<string, unknown> = {}) => ({
  client_id: id,
  name: `Service ${id}`,
  grant_types: ['client_credentials'],
  scopes: ['reports.read'],
  token_format: 'opaque',
  ...extra,
});

async function createApp(server: OAuthServer, entry: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const res = await admin(server, 'POST', '/apps', entry);
  expect(res.status, res.text).to.equal(201);
  return { id: res.body.data.app.client_id as string, secret: res.body.data.client_secret as string };
}

describe('@gatehouse-auth/admin-api: apps at run time', function () {
  const clock = new FakeClock(new Date());
  let server: OAuthServer;
  before(async () => {
    // The FAPI 2.0 profile's checks are its plugin's (decision 80).
    server = await startServer({ clock, plugins: [{ name: '@gatehouse-auth/oauth-fapi' }] });
  });
  after(() => server?.close());

  it('an app created through the API signs in at once; its secret is shown once, never again', async function () {
    const res = await admin(server, 'POST', '/apps', serviceApp('svc-new'));
    expect(res.status, res.text).to.equal(201);
    const { app, client_secret } = res.body.data as unknown as { app: Record<string, unknown>; client_secret: string };
    expect(client_secret).to.be.a('string').with.length.of.at.least(43);
    expect(app).to.deep.include({
      client_id: 'svc-new',
      source: 'database',
      name: 'Service svc-new',
      token_endpoint_auth_method: 'client_secret_basic',
      has_secret: true,
      previous_secret_expires_at: null,
    });
    const token = await machineToken(server, 'reports.read', { id: 'svc-new', secret: client_secret });
    expect(token.status, token.text).to.equal(200);

    const got = await admin(server, 'GET', '/apps/svc-new');
    expect(got.status).to.equal(200);
    const list = await admin(server, 'GET', '/apps');
    const listed = list.body.data as unknown as Record<string, unknown>[];
    expect(listed.find((a) => a.client_id === 'svc-new')).to.deep.equal(got.body.data);
    expect(listed.find((a) => a.client_id === MACHINE.id)).to.deep.include({ source: 'config', has_secret: true });
    for (const text of [got.text, list.text]) {
      expect(text).to.not.include(client_secret);
      expect(text).to.not.include(MACHINE.secret);
      expect(text).to.not.include('"client_secret"');
      expect(text).to.not.include('client_secret_sha256');
    }
  });

  it('a client_id is made when none is given; a public app has no secret', async function () {
    const made = await admin(server, 'POST', '/apps', { grant_types: ['client_credentials'] });
    expect(made.status, made.text).to.equal(201);
    expect(made.body.data.app.client_id).to.match(/^[A-Za-z0-9_-]{22}$/);
    const pub = await admin(server, 'POST', '/apps', {
      client_id: 'spa-new',
      token_endpoint_auth_method: 'none',
      redirect_uris: ['http://127.0.0.1:9999/cb'],
    });
    expect(pub.status, pub.text).to.equal(201);
    expect(pub.body.data.client_secret).to.equal(null);
    expect(pub.body.data.app).to.deep.include({ token_endpoint_auth_method: 'none', has_secret: false });
    expectRefusal(await admin(server, 'POST', '/apps/spa-new/secret', {}), 409, 'APP_HAS_NO_SECRET');
  });

  it('config apps are read-only: 409 APP_READ_ONLY; their ids cannot be taken: 409 APP_EXISTS', async function () {
    expectRefusal(await admin(server, 'PUT', `/apps/${MACHINE.id}`, serviceApp(MACHINE.id)), 409, 'APP_READ_ONLY');
    expectRefusal(await admin(server, 'PATCH', `/apps/${MACHINE.id}`, { name: 'x' }), 409, 'APP_READ_ONLY');
    expectRefusal(await admin(server, 'DELETE', `/apps/${MACHINE.id}`), 409, 'APP_READ_ONLY');
    expectRefusal(await admin(server, 'POST', `/apps/${MACHINE.id}/secret`, {}), 409, 'APP_READ_ONLY');
    expectRefusal(await admin(server, 'POST', '/apps', serviceApp(MACHINE.id)), 409, 'APP_EXISTS');
    await createApp(server, serviceApp('svc-twice'));
    expectRefusal(await admin(server, 'POST', '/apps', serviceApp('svc-twice')), 409, 'APP_EXISTS');
    expect((await machineToken(server, 'reports.read')).status).to.equal(200);
  });

  it("a database row with a config app's id (the config gained it later) is ignored: the config app wins", async function () {
    const { sql, storedClients, clients } = server.gatehouse.container.cradle;
    const now = Date.now();
    await sql.exec(
      `INSERT INTO clients (client_id, settings, secret_sha256, revision, created_at, updated_at)
       VALUES (:id, :settings, NULL, 1, :now, :now)`,
      { id: MACHINE.id, settings: JSON.stringify({ token_endpoint_auth_method: 'none' }), now },
    );
    try {
      await storedClients.refresh();
      expect(clients.get(MACHINE.id)!.isPublic).to.equal(false);
      expect((await machineToken(server, 'reports.read')).status).to.equal(200);
      const listed = (await admin(server, 'GET', '/apps')).body.data as unknown as {
        client_id: string;
        source: string;
      }[];
      expect(listed.filter((a) => a.client_id === MACHINE.id).map((a) => a.source)).to.deep.equal(['config']);
    } finally {
      await sql.exec('DELETE FROM clients WHERE client_id = :id', { id: MACHINE.id });
      await storedClients.refresh();
    }
  });

  it('an entry the config would refuse is 400 INVALID_APP naming the key; nothing is stored', async function () {
    const cases: [Record<string, unknown>, RegExp][] = [
      [serviceApp('bad-1', { client_secret: 'x'.repeat(40) }), /client_secret/],
      [serviceApp('bad-2', { token_endpoint_auth_method: 'client_secret_jwt' }), /client_secret_jwt/],
      [serviceApp('bad-3', { no_such_key: true }), /no_such_key/],
      [serviceApp('bad-4', { grant_types: ['urn:example:nothing'] }), /grant_types\[0\]/],
      [serviceApp('bad-5', { login_stages: [['NOSUCHMETHOD']] }), /NOSUCHMETHOD/],
      [serviceApp('bad-6', { redirect_uris: ['not a url'] }), /redirect_uris/],
      [serviceApp('bad-7', { id_token_signed_response_alg: 'HS256' }), /id_token_signed_response_alg/],
      [serviceApp('bad-8', { token_endpoint_auth_method: 'private_key_jwt' }), /jwks/],
      [{ client_id: 'x'.repeat(256) }, /client_id/],
      // FAPI 2.0 (decisions 0053, 0080): the profile's config rules, and the plugins it needs (none loaded here).
      [serviceApp('bad-9', { security_profile: 'fapi2', token_endpoint_auth_method: 'none' }), /FAPI 2\.0/],
      [
        serviceApp('bad-10', {
          security_profile: 'fapi2',
          token_endpoint_auth_method: 'private_key_jwt',
          jwks: { keys: [{ kty: 'EC', kid: 'k' }] },
          id_token_signed_response_alg: 'ES256',
        }),
        /^app\.security_profile: the FAPI 2\.0 app "bad-10" needs pushed authorization requests; add @gatehouse-auth\/oauth-par/,
      ],
    ];
    for (const [entry, message] of cases) {
      const res = await admin(server, 'POST', '/apps', entry);
      expectRefusal(res, 400, 'INVALID_APP');
      expect((res.body.error as unknown as { error: string }).error).to.match(message);
    }
    expectRefusal(await admin(server, 'GET', '/apps/bad-1'), 404, 'APP_NOT_FOUND');
  });

  it("a loaded plugin's appConfig key is checked with its schema and reaches the client's settings", async function () {
    const res = await admin(
      server,
      'POST',
      '/apps',
      serviceApp('svc-plugin-key', { refresh_token_reuse_interval: 10 }),
    );
    expect(res.status, res.text).to.equal(201);
    const { clients } = server.gatehouse.container.cradle;
    expect(clients.get('svc-plugin-key')!.settings.refresh_token_reuse_interval).to.equal(10);
    const bad = await admin(
      server,
      'POST',
      '/apps',
      serviceApp('svc-plugin-bad', { refresh_token_reuse_interval: 61 }),
    );
    expectRefusal(bad, 400, 'INVALID_APP');
    expect((bad.body.error as unknown as { error: string }).error).to.match(/refresh_token_reuse_interval/);
    expectRefusal(await admin(server, 'POST', '/apps', []), 400, 'INVALID_APP');
  });

  it('a database app signs a user in through the hosted login (code flow) and its origin gets CORS', async function () {
    const app = await createApp(server, {
      client_id: 'web-new',
      redirect_uris: ['https://web-new.example.test/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email', 'offline_access'],
      login_stages: [['PASSWORD']],
      allowed_origins: ['https://web-new.example.test'],
    });
    const user = await server.user('dbapp');
    const { code, verifier, redirectUri } = await obtainCode(server, user, {
      clientId: app.id,
      redirectUri: 'https://web-new.example.test/cb',
    });
    const token = await postForm(
      server,
      '/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier },
      basic(app.id, app.secret),
    );
    expect(token.status, token.text).to.equal(200);
    expect(token.body.id_token).to.be.a('string');
    const preflight = await fetch(server.url('/oauth/token'), {
      method: 'OPTIONS',
      headers: { Origin: 'https://web-new.example.test', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).to.equal('https://web-new.example.test');
    expect((await admin(server, 'DELETE', '/apps/web-new')).status).to.equal(200);
    const after = await fetch(server.url('/oauth/token'), {
      method: 'OPTIONS',
      headers: { Origin: 'https://web-new.example.test', 'Access-Control-Request-Method': 'POST' },
    });
    expect(after.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('an unknown app is 404 APP_NOT_FOUND everywhere; a wrong admin token 401', async function () {
    for (const [method, p, body] of [
      ['GET', '/apps/nope', undefined],
      ['PUT', '/apps/nope', serviceApp('nope')],
      ['PATCH', '/apps/nope', { name: 'x' }],
      ['DELETE', '/apps/nope', undefined],
      ['POST', '/apps/nope/secret', {}],
    ] as const) {
      expectRefusal(await admin(server, method, p, body), 404, 'APP_NOT_FOUND');
    }
    expectRefusal(await admin(server, 'GET', '/apps', undefined, 'wrong-token'), 401, 'UNAUTHORIZED');
    expectRefusal(await admin(server, 'POST', '/apps', serviceApp('x'), 'wrong-token'), 401, 'UNAUTHORIZED');
  });

  it('updates (PATCH, PUT) keep the secret and the tokens; a changed secret or client_id is refused', async function () {
    const app = await createApp(server, serviceApp('svc-edit'));
    const token = await machineToken(server, 'reports.read', app);
    expect(token.status).to.equal(200);
    expectOAuthError(await machineToken(server, 'reports.write', app), 400, 'invalid_scope');
    const patched = await admin(server, 'PATCH', '/apps/svc-edit', {
      scopes: ['reports.read', 'reports.write'],
      name: null,
    });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body.data.name).to.equal('svc-edit');
    expect((await machineToken(server, 'reports.write', app)).status).to.equal(200);
    const put = await admin(server, 'PUT', '/apps/svc-edit', serviceApp('svc-edit', { name: 'Edited' }));
    expect(put.status, put.text).to.equal(200);
    expect(put.body.data.app).to.deep.equal({ ...serviceApp('svc-edit', { name: 'Edited' }) });
    expect((await introspect(server, token.body.access_token as string, app)).active).to.equal(true);
    expectRefusal(
      await admin(server, 'PATCH', '/apps/svc-edit', { client_secret_sha256: 'A'.repeat(43) }),
      400,
      'INVALID_APP',
    );
    expectRefusal(await admin(server, 'PATCH', '/apps/svc-edit', { client_id: 'other' }), 400, 'INVALID_APP');
    expectRefusal(
      await admin(server, 'PATCH', '/apps/svc-edit', { token_endpoint_auth_method: 'none' }),
      400,
      'INVALID_APP',
    );
    expectRefusal(await admin(server, 'PATCH', '/apps/svc-edit', { access_token_ttl: -1 }), 400, 'INVALID_APP');
  });

  it('a rotated secret: the new one works, the previous one for the overlap (24 h by default) and not after', async function () {
    const app = await createApp(server, serviceApp('svc-rotate'));
    const res = await admin(server, 'POST', '/apps/svc-rotate/secret', {});
    expect(res.status, res.text).to.equal(200);
    const fresh = { id: app.id, secret: res.body.data.client_secret as string };
    expect(fresh.secret).to.not.equal(app.secret);
    expect(Date.parse(res.body.data.app.previous_secret_expires_at as string)).to.equal(
      clock.now().getTime() + 24 * 3600 * 1000,
    );
    expect((await machineToken(server, 'reports.read', fresh)).status).to.equal(200);
    expect((await machineToken(server, 'reports.read', app)).status).to.equal(200);
    clock.advance(24 * 3600 - 1);
    expect((await machineToken(server, 'reports.read', app)).status).to.equal(200);
    clock.advance(2);
    expectOAuthError(await machineToken(server, 'reports.read', app), 401, 'invalid_client');
    expect((await machineToken(server, 'reports.read', fresh)).status).to.equal(200);
    expect((await admin(server, 'GET', '/apps/svc-rotate')).body.data.previous_secret_expires_at).to.equal(null);
  });

  it('a rotation with overlap_seconds 0 ends the previous secret at once; a bad overlap is 400 INVALID_FIELD', async function () {
    const app = await createApp(server, serviceApp('svc-rotate-now'));
    const res = await admin(server, 'POST', '/apps/svc-rotate-now/secret', { overlap_seconds: 0 });
    expect(res.status, res.text).to.equal(200);
    expectOAuthError(await machineToken(server, 'reports.read', app), 401, 'invalid_client');
    const fresh = { id: app.id, secret: res.body.data.client_secret as string };
    expect((await machineToken(server, 'reports.read', fresh)).status).to.equal(200);
    for (const overlap of [-1, 1.5, '60', 31 * 24 * 3600]) {
      expectRefusal(
        await admin(server, 'POST', '/apps/svc-rotate-now/secret', { overlap_seconds: overlap }),
        400,
        'INVALID_FIELD',
      );
    }
    expect((await machineToken(server, 'reports.read', fresh)).status).to.equal(200);
  });

  it('deleting an app revokes its tokens and consents; it no longer signs in; the audit names the admin token', async function () {
    const app = await createApp(server, serviceApp('svc-gone'));
    const token = await machineToken(server, 'reports.read', app);
    expect(token.status).to.equal(200);
    const { consents } = server.gatehouse.container.cradle;
    const userId = '00000000-0000-4000-8000-000000000001';
    await consents.put(`${userId}:svc-gone`, { scopes: ['openid'] });
    await consents.put(`${userId}:${MACHINE.id}`, { scopes: ['openid'] });
    const res = await admin(server, 'DELETE', '/apps/svc-gone');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.deep.equal({ revoked_grants: 0, revoked_tokens: 1 });
    const { tokens } = server.gatehouse.container.cradle;
    expect((await tokens.inspect(token.body.access_token as string)).active).to.equal(false);
    expectOAuthError(await machineToken(server, 'reports.read', app), 401, 'invalid_client');
    expectRefusal(await admin(server, 'GET', '/apps/svc-gone'), 404, 'APP_NOT_FOUND');
    expect(await consents.get(`${userId}:svc-gone`)).to.equal(null);
    expect(await consents.get(`${userId}:${MACHINE.id}`)).to.not.equal(null);
    const events = await server.gatehouse.container.cradle.events.recent({
      types: ['admin.app_created', 'admin.app_deleted'],
      limit: 100,
    });
    const mine = events.filter((e) => e.clientId === 'svc-gone').map((e) => e.type);
    expect(mine.sort()).to.deep.equal(['admin.app_created', 'admin.app_deleted']);
  });
});

describe('@gatehouse-auth/admin-api: apps on two nodes sharing one PostgreSQL database', function () {
  const db = withPostgresDatabase();
  let a: OAuthServer;
  let b: OAuthServer;
  before(async function () {
    const key = await clientKey();
    // The poll is off: the peer bus alone must carry the change.
    const config = { oauth: { clients_poll_seconds: 0 } };
    a = await startServer({ databaseUrl: db.url, key, config });
    b = await startServer({ databaseUrl: db.url, key, config });
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });

  /** B's answer once it is `status`, or its last one after a second (the peer bus reloads B's apps). */
  async function withinASecond<T extends { status: number }>(ask: () => Promise<T>, status: number): Promise<T> {
    const started = Date.now();
    let res = await ask();
    while (res.status !== status && Date.now() - started < 1000) {
      await new Promise((r) => setTimeout(r, 25));
      res = await ask();
    }
    return res;
  }

  it('an app created on A signs in on B within a second; rotated or deleted on A, B follows before A answers', async function () {
    const app = await createApp(a, serviceApp('svc-nodes'));
    const res = await withinASecond(() => machineToken(b, 'reports.read', app), 200);
    expect(res.status, res.text).to.equal(200);
    // The peer bus is acknowledged once B reloaded: A's answer comes after B applied the change.
    const rotated = await admin(a, 'POST', '/apps/svc-nodes/secret', { overlap_seconds: 0 });
    expect(rotated.status).to.equal(200);
    expectOAuthError(await machineToken(b, 'reports.read', app), 401, 'invalid_client');
    const fresh = { id: app.id, secret: rotated.body.data.client_secret as string };
    expect((await machineToken(b, 'reports.read', fresh)).status).to.equal(200);
    expect((await admin(a, 'DELETE', '/apps/svc-nodes')).status).to.equal(200);
    expectOAuthError(await machineToken(b, 'reports.read', fresh), 401, 'invalid_client');
  });
});

describe('@gatehouse-auth/admin-api: apps on two nodes of one SQLite file, no peer bus', function () {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-apps-'));
  let a: OAuthServer;
  let b: OAuthServer;
  before(async function () {
    const key = await clientKey();
    const databaseUrl = `sqlite:${path.join(dir, 'gatehouse.db')}`;
    const config = { oauth: { clients_poll_seconds: 0.2 } };
    a = await startServer({ databaseUrl, key, config });
    b = await startServer({ databaseUrl, key, config });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('B sees an app created on A within the poll interval, without a restart, and its deletion', async function () {
    const app = await createApp(a, serviceApp('svc-polled'));
    await new Promise((r) => setTimeout(r, 600));
    expect((await machineToken(b, 'reports.read', app)).status).to.equal(200);
    expect((await admin(a, 'DELETE', '/apps/svc-polled')).status).to.equal(200);
    await new Promise((r) => setTimeout(r, 600));
    expectOAuthError(await machineToken(b, 'reports.read', app), 401, 'invalid_client');
  });
});
