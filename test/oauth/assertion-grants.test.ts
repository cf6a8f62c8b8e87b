/**
 * The assertion and exchange grants end to end over HTTP: JWT bearer (RFC 7523), SAML 2.0
 * bearer (RFC 7522) and token exchange (RFC 8693), with a real client authentication, the
 * real stores and introspection of what they issue.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import supertest from 'supertest';
import { buildApp, createLogger, parseConfig, type Gatehouse } from '@gatehouse-auth/core';
import { assertionXml, encode, makeKeyPairs, sign, type KeyPair } from '../../plugins/grant-saml2-bearer/test/idp.js';

const ISSUER = 'https://login.example.test';
const TOKEN_ENDPOINT = `${ISSUER}/oauth/token`;
const IDP = 'https://idp.example.test';
const SAML_IDP = 'https://saml-idp.example.test';
const SECRET = 'partner-secret-0123456789abcdef0123456789';
const API = 'https://api.example.test';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const SAML2 = 'urn:ietf:params:oauth:grant-type:saml2-bearer';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';

describe('OAuth: assertion and exchange grants over HTTP', function () {
  this.timeout(30_000);
  let gatehouse: Gatehouse;
  let http: ReturnType<typeof supertest>;
  let idpKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  let samlKeys: KeyPair;
  let username: string;
  let userId: string;

  before(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    idpKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'idp-1', alg: 'ES256' };
    [samlKeys] = makeKeyPairs(['saml-idp']) as [KeyPair];
    const config = parseConfig(
      {
        issuer: ISSUER,
        database: { url: 'sqlite::memory:' },
        log: { level: 'silent' },
        secrets: { encryption_key: Buffer.alloc(32, 21).toString('base64') },
        plugins: [
          { name: '@gatehouse-auth/grant-jwt-bearer' },
          { name: '@gatehouse-auth/grant-saml2-bearer' },
          { name: '@gatehouse-auth/grant-token-exchange' },
        ],
        apps: [
          {
            client_id: 'partner',
            client_secret: SECRET,
            grant_types: [JWT_BEARER, SAML2, EXCHANGE],
            scopes: ['read', 'write'],
            audiences: [API],
            assertion_issuers: [{ issuer: IDP, jwks: { keys: [jwk] } }],
            saml_issuers: [{ issuer: SAML_IDP, certificate: samlKeys.certificate }],
          },
        ],
      },
      {},
    );
    gatehouse = await buildApp(config, { logger: createLogger('silent') });
    http = supertest(gatehouse.app);
    username = `assert-${randomUUID().slice(0, 8)}`;
    userId = (await gatehouse.container.cradle.users.create({ username })).id;
  });
  after(() => gatehouse?.close());

  const token = (form: Record<string, string>) =>
    http.post('/oauth/token').auth('partner', SECRET).type('form').send(form);
  const introspect = (value: string) =>
    http.post('/token/introspect').auth('partner', SECRET).type('form').send({ token: value });

  const jwtAssertion = (claims: Record<string, unknown> = {}) =>
    new SignJWT({ jti: randomUUID(), ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'idp-1' })
      .setIssuer(IDP)
      .setSubject(username)
      .setAudience(TOKEN_ENDPOINT)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(idpKey);

  it('JWT bearer: a signed assertion for a user gets a token for that user; a replay is invalid_grant', async () => {
    const assertion = await jwtAssertion();
    const res = await token({ grant_type: JWT_BEARER, assertion, scope: 'read' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(res.body).to.include({ token_type: 'bearer', scope: 'read', issued_token_type: ACCESS });
    expect((await introspect(res.body.access_token)).body).to.include({ active: true, sub: userId, username });
    const replay = await token({ grant_type: JWT_BEARER, assertion, scope: 'read' });
    expect(replay.status).to.equal(400);
    expect(replay.body.error).to.equal('invalid_grant');
  });

  it('JWT bearer: the wrong audience is invalid_grant', async () => {
    const assertion = await new SignJWT({ jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', kid: 'idp-1' })
      .setIssuer(IDP)
      .setSubject(username)
      .setAudience('https://elsewhere.example.test/token')
      .setExpirationTime('5m')
      .sign(idpKey);
    const res = await token({ grant_type: JWT_BEARER, assertion });
    expect(res.status).to.equal(400);
    expect(res.body.error).to.equal('invalid_grant');
  });

  const samlAssertion = (nameId: string, audience = TOKEN_ENDPOINT) => {
    const now = Date.now();
    return encode(
      sign(
        assertionXml({
          id: `_${randomUUID()}`,
          issuer: SAML_IDP,
          nameId,
          audience,
          recipient: TOKEN_ENDPOINT,
          method: 'urn:oasis:names:tc:SAML:2.0:cm:bearer',
          notBefore: new Date(now - 60_000),
          notOnOrAfter: new Date(now + 300_000),
          confirmationNotOnOrAfter: new Date(now + 300_000),
          extra: '',
        }),
        samlKeys,
      ),
    );
  };

  it('SAML 2.0 bearer: a signed assertion gets a token; the wrong Audience is invalid_grant', async () => {
    const res = await token({ grant_type: SAML2, assertion: samlAssertion(username), scope: 'read write' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect((await introspect(res.body.access_token)).body).to.include({ active: true, sub: userId });
    const wrong = await token({
      grant_type: SAML2,
      assertion: samlAssertion(username, 'https://elsewhere.example.test'),
    });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.error).to.equal('invalid_grant');
  });

  it('token exchange: down-scopes a token for a registered resource; other targets and wider scopes are refused', async () => {
    const subject = (await token({ grant_type: JWT_BEARER, assertion: await jwtAssertion(), scope: 'read write' })).body
      .access_token as string;
    const exchanged = await token({
      grant_type: EXCHANGE,
      subject_token: subject,
      subject_token_type: ACCESS,
      resource: API,
      scope: 'read',
    });
    expect(exchanged.status, JSON.stringify(exchanged.body)).to.equal(200);
    expect(exchanged.body).to.include({ issued_token_type: ACCESS, scope: 'read' });
    expect((await introspect(exchanged.body.access_token)).body).to.include({ active: true, sub: userId, aud: API });

    const target = await token({
      grant_type: EXCHANGE,
      subject_token: subject,
      subject_token_type: ACCESS,
      resource: 'https://other.example.test',
    });
    expect(target.status).to.equal(400);
    expect(target.body.error).to.equal('invalid_target');

    const narrow = exchanged.body.access_token as string;
    const wider = await token({
      grant_type: EXCHANGE,
      subject_token: narrow,
      subject_token_type: ACCESS,
      scope: 'read write',
    });
    expect(wider.status).to.equal(401);
    expect(wider.body.error).to.equal('invalid_scope');

    const missing = await token({ grant_type: EXCHANGE, subject_token: subject });
    expect(missing.status).to.equal(400);
    expect(missing.body.error).to.equal('invalid_request');

    const bad = await token({ grant_type: EXCHANGE, subject_token: 'not-a-token', subject_token_type: ACCESS });
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.equal('invalid_request');
  });

  it('token exchange: revoking a token revokes what was exchanged from it, down the chain, and nothing above', async () => {
    // JWT-bearer tokens stand alone (no grant row, no refresh token): only the parent link ties them.
    const root = (await token({ grant_type: JWT_BEARER, assertion: await jwtAssertion(), scope: 'read write' })).body
      .access_token as string;
    const exchange = async (subject: string) => {
      const res = await token({
        grant_type: EXCHANGE,
        subject_token: subject,
        subject_token_type: ACCESS,
        scope: 'read',
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.access_token as string;
    };
    const child = await exchange(root);
    const grandchild = await exchange(child);
    const sibling = await exchange(root);
    const active = async (value: string) => (await introspect(value)).body.active as boolean;
    expect(await Promise.all([root, child, grandchild, sibling].map(active))).to.deep.equal([true, true, true, true]);

    const revoke = (value: string) =>
      http.post('/oauth2/revoke').auth('partner', SECRET).type('form').send({ token: value });
    expect((await revoke(child)).status).to.equal(200);
    // The child and what came from it are gone; its parent and its sibling are not.
    expect(await Promise.all([root, child, grandchild, sibling].map(active))).to.deep.equal([true, false, false, true]);

    expect((await revoke(root)).status).to.equal(200);
    expect(await Promise.all([root, sibling].map(active))).to.deep.equal([false, false]);
  });

  it('metadata lists the grants the apps use', async () => {
    const md = (await http.get('/.well-known/oauth-authorization-server')).body;
    expect(md.grant_types_supported).to.include.members([JWT_BEARER, SAML2, EXCHANGE]);
  });
});
