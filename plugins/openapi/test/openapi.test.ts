/**
 * /openapi.json (decisions 26, 59): generated from the route declarations the handlers validate
 * with, a valid OpenAPI 3.1 document, served with a reference page; a request that breaks a
 * schema gets an error the document lists. The suite's server (startServer) loads the plugin.
 */
import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ADMIN_TOKEN, WEB, startServer, type OAuthServer } from '../../../test/oauth/support.js';
import { documentedCodes } from '../../../test/support/openapi.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('OpenAPI document', function () {
  this.timeout(60_000);
  let server: OAuthServer;
  let doc: Json;
  before(async () => {
    server = await startServer();
    const res = await fetch(server.url('/openapi.json'));
    expect(res.status).to.equal(200);
    doc = (await res.json()) as Json;
  });
  after(() => server.close());

  it('is public and cacheable', async () => {
    const res = await fetch(server.url('/openapi.json'));
    expect(res.headers.get('cache-control')).to.equal('public, max-age=300');
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
  });

  it('validates as OpenAPI 3.1', async () => {
    expect(doc.openapi).to.match(/^3\.1\./);
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)?.slice(0, 2000)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('holds no secret: not the admin token, an app’s secret or the encryption key', () => {
    const text = JSON.stringify(doc);
    expect(text).to.not.include(ADMIN_TOKEN);
    expect(text).to.not.include(WEB.secret);
    expect(text).to.not.include(server.gatehouse.config.secrets.encryption_key!);
  });

  it('names the issuer as the server', () => {
    expect(doc.servers).to.deep.equal([{ url: server.issuer }]);
  });

  describe('admin API', () => {
    it('documents the user creation body from its schema, with its error codes', () => {
      const op = doc.paths['/admin/users'].post;
      const body = op.requestBody.content['application/json'].schema;
      expect(body.required).to.deep.equal(['username']);
      expect(body.properties.username.pattern).to.be.a('string');
      expect(op.security).to.deep.equal([{ adminToken: [] }]);
      expect(documentedCodes(doc, 'post', '/admin/users', 400)).to.include.members(['INVALID_FIELD']);
      expect(documentedCodes(doc, 'post', '/admin/users', 401)).to.deep.equal(['UNAUTHORIZED']);
      expect(documentedCodes(doc, 'post', '/admin/users', 409)).to.deep.equal(['USER_EXISTS']);
      expect(Object.keys(op.responses)).to.include('201');
    });

    it('a body that breaks the schema gets the documented 400 INVALID_FIELD', async () => {
      const res = await fetch(server.url('/admin/users'), {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: 'has space' }),
      });
      expect(res.status).to.equal(400);
      const body = (await res.json()) as Json;
      expect(body.error.code).to.equal('INVALID_FIELD');
      expect(body.error.details).to.deep.equal({ field: 'username' });
      expect(documentedCodes(doc, 'post', '/admin/users', 400)).to.include(body.error.code);
    });

    it('documents the query of the user list, which is validated with it', async () => {
      const params = doc.paths['/admin/users'].get.parameters as Json[];
      expect(params.map((p) => [p.name, p.in, p.schema.type])).to.deep.equal([
        ['limit', 'query', 'integer'],
        ['offset', 'query', 'integer'],
      ]);
      const res = await fetch(server.url('/admin/users?offset=1.5'), {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(res.status).to.equal(400);
      expect(((await res.json()) as Json).error.code).to.equal('INVALID_FIELD');
    });
  });

  describe('reference page', () => {
    it('lists every operation as server-rendered HTML under the pages’ CSP', async () => {
      const res = await fetch(server.url('/openapi'));
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      expect(res.headers.get('content-security-policy')).to.include("default-src 'none'");
      const page = await res.text();
      expect(page).to.not.include('<script');
      for (const [path, item] of Object.entries(doc.paths as Json)) {
        for (const method of Object.keys(item as Json)) {
          expect(page, `${method} ${path}`).to.include(`${method.toUpperCase()} ${path}`);
        }
      }
      expect(page).to.include('USER_EXISTS');
    });
  });
});
