/**
 * `restricted_to` end to end over HTTP, with the real core: the token response, introspection,
 * the claim in a signed JWT access token, a refused widening, and the `resource_objects` config
 * at start-up. The rules themselves are tested against fakes in token-exchange.test.ts.
 */
import { expect } from 'chai';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import supertest from 'supertest';
import { buildApp, createLogger, parseConfig, type Gatehouse } from '@gatehouse-auth/core';

const ISSUER = 'https://login.example.test';
const SECRET = 'files-app-secret-0123456789abcdef0123456789';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const DOC = 'https://files.example.test/2.0/files/123';
const DOC_OBJECT = { type: 'file', id: '123', name: 'Contract.pdf', etag: '3' };

const configWith = (resourceObjects: unknown) =>
  parseConfig(
    {
      issuer: ISSUER,
      database: { url: 'sqlite::memory:' },
      log: { level: 'silent' },
      secrets: { encryption_key: Buffer.alloc(32, 13).toString('base64') },
      plugins: [{ name: '@gatehouse-auth/grant-client-credentials' }, { name: '@gatehouse-auth/grant-token-exchange' }],
      apps: [
        {
          client_id: 'files-app',
          client_secret: SECRET,
          grant_types: ['client_credentials', EXCHANGE],
          scopes: ['item_preview', 'item_download', 'read'],
          token_format: 'jwt',
          resource_objects: resourceObjects,
        },
      ],
    },
    {},
  );

describe('@gatehouse-auth/grant-token-exchange: restricted_to over HTTP', function () {
  this.timeout(30_000);
  let gatehouse: Gatehouse;
  let http: ReturnType<typeof supertest>;

  before(async () => {
    gatehouse = await buildApp(configWith([{ resource: DOC, object: DOC_OBJECT }]), {
      logger: createLogger('silent'),
    });
    http = supertest(gatehouse.app);
  });
  after(() => gatehouse?.close());

  const token = (form: Record<string, string>) =>
    http.post('/oauth/token').auth('files-app', SECRET).type('form').send(form);
  const exchange = (subject: string, form: Record<string, string>) =>
    token({ grant_type: EXCHANGE, subject_token: subject, subject_token_type: ACCESS, ...form });
  const subjectToken = async () =>
    (await token({ grant_type: 'client_credentials', scope: 'item_preview item_download read' })).body
      .access_token as string;

  it('the response, introspection and the JWT access token carry restricted_to', async () => {
    const res = await exchange(await subjectToken(), { resource: DOC, scope: 'item_preview' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const expected = [{ object: DOC_OBJECT, scope: 'item_preview' }];
    expect(res.body).to.deep.include({ scope: 'item_preview', issued_token_type: ACCESS, restricted_to: expected });

    const introspected = await http
      .post('/token/introspect')
      .auth('files-app', SECRET)
      .type('form')
      .send({ token: res.body.access_token });
    expect(introspected.body).to.deep.include({ active: true, aud: DOC, restricted_to: expected });

    const jwks = (await http.get('/.well-known/jwks.json')).body as JSONWebKeySet;
    const { payload } = await jwtVerify(res.body.access_token as string, createLocalJWKSet(jwks), {
      issuer: ISSUER,
      audience: DOC,
      typ: 'at+jwt',
    });
    expect(payload.restricted_to).to.deep.equal(expected);
  });

  it('refuses a non-file scope (400), a widened re-exchange (401) and an unknown object (400)', async () => {
    const subject = await subjectToken();
    const other = await exchange(subject, { resource: DOC, scope: 'item_preview read' });
    expect([other.status, other.body.error]).to.deep.equal([400, 'invalid_scope']);

    const narrow = (await exchange(subject, { resource: DOC, scope: 'item_preview' })).body.access_token as string;
    const wider = await exchange(narrow, { scope: 'item_preview item_download' });
    expect([wider.status, wider.body.error]).to.deep.equal([401, 'invalid_scope']);

    const unknown = await exchange(subject, { resource: 'https://files.example.test/2.0/files/999' });
    expect([unknown.status, unknown.body.error]).to.deep.equal([400, 'invalid_target']);
  });

  it('a bad resource_objects entry stops the start with a message naming it', async () => {
    const failure = await buildApp(configWith([{ resource: DOC, object: { type: 'file', id: 123 } }]), {
      logger: createLogger('silent'),
    }).then(
      (app) => app.close().then(() => null),
      (err: unknown) => err as Error,
    );
    expect(failure?.message).to.equal('apps[0].resource_objects[0].object.id: must be a string');
  });
});
