import { expect } from 'chai';
import { type GrantHandler, type OAuthClient } from '@gatehouse-auth/core';
import {
  fakeClient,
  fakeOAuth,
  fakeServices,
  grantContext,
  registerWithFakes,
  type FakeOAuth,
  expectOAuthError,
} from '@gatehouse-auth/testing';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import plugin from '../src/index.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const PARTNER = 'https://idp.partner.example';
const OTHER_ISSUER = 'https://idp.other.example';
const ISSUER = 'https://issuer.example.test';
const TOKEN_ENDPOINT = `${ISSUER}/oauth/token`;
const HMAC_SECRET = new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!');

interface Keys {
  es256: CryptoKey;
  rs256: CryptoKey;
  other: CryptoKey;
  otherIssuer: CryptoKey;
  partnerJwks: { keys: JWK[] };
  otherIssuerJwks: { keys: JWK[] };
}

let keys: Keys;

before(async () => {
  const es = await generateKeyPair('ES256');
  const rs = await generateKeyPair('RS256');
  const other = await generateKeyPair('ES256');
  const otherIssuer = await generateKeyPair('ES256');
  keys = {
    es256: es.privateKey,
    rs256: rs.privateKey,
    other: other.privateKey,
    otherIssuer: otherIssuer.privateKey,
    partnerJwks: {
      keys: [
        { ...(await exportJWK(es.publicKey)), kid: 'es-1', alg: 'ES256' },
        { ...(await exportJWK(rs.publicKey)), kid: 'rs-1', alg: 'RS256' },
        // An HMAC key in the set must still never verify anything: HS* is not an allowed algorithm.
        { kty: 'oct', kid: 'hs-1', k: Buffer.from(HMAC_SECRET).toString('base64url') },
      ],
    },
    otherIssuerJwks: { keys: [{ ...(await exportJWK(otherIssuer.publicKey)), kid: 'other-1', alg: 'ES256' }] },
  };
});

function partnerClient(overrides: Partial<OAuthClient> = {}): OAuthClient {
  return fakeClient({
    clientId: 'partner-app',
    grantTypes: [GRANT, 'refresh_token'],
    scopes: ['openid', 'profile', 'read', 'offline_access'],
    settings: { assertion_issuers: [{ issuer: PARTNER, jwks: keys.partnerJwks }] },
    ...overrides,
  });
}

interface Setup {
  oauth: FakeOAuth;
  handler: GrantHandler;
  client: OAuthClient;
  now: () => number;
}

async function setup(): Promise<Setup> {
  const services = fakeServices();
  const { grants } = await registerWithFakes(plugin, {}, services);
  const users = [
    { identifier: 'alice', userId: 'user-1', password: 'unused' },
    { identifier: 'bob', userId: 'user-2', password: 'unused', status: 'disabled' as const },
    { identifier: 'carol', userId: 'user-3', password: 'unused', status: 'locked' as const },
  ];
  return {
    oauth: fakeOAuth({ clock: services.clock, users, issuer: ISSUER }),
    handler: grants[0]!,
    client: partnerClient(),
    now: () => Math.floor(services.clock.now().getTime() / 1000),
  };
}

let jtiCounter = 0;

/** Claims of a good assertion at `now`, with overrides (undefined removes a claim). */
function claims(now: number, overrides: Record<string, unknown> = {}): JWTPayload {
  const base: Record<string, unknown> = {
    iss: PARTNER,
    sub: 'alice',
    aud: TOKEN_ENDPOINT,
    exp: now + 300,
    iat: now,
    jti: `jti-${++jtiCounter}`,
    ...overrides,
  };
  return Object.fromEntries(Object.entries(base).filter(([, v]) => v !== undefined));
}

function sign(
  payload: JWTPayload,
  opts: { key?: CryptoKey | Uint8Array; alg?: string; kid?: string } = {},
): Promise<string> {
  const alg = opts.alg ?? 'ES256';
  const kid = opts.kid ?? (alg === 'RS256' ? 'rs-1' : 'es-1');
  return new SignJWT(payload).setProtectedHeader({ alg, kid }).sign(opts.key ?? keys.es256);
}

/** An unsigned JWT (`alg: none`), built by hand since jose will not make one. */
function unsigned(payload: JWTPayload): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(payload)}.`;
}

function request(s: Setup, params: Record<string, string | undefined>, client: OAuthClient = s.client) {
  return s.handler.handle(grantContext({ client, oauth: s.oauth, params }));
}

/** Expects invalid_grant with this description, and that nothing was issued. */
async function expectRejected(s: Setup, assertion: string, description: string, scope?: string): Promise<void> {
  const err = await expectOAuthError(request(s, { assertion, scope }), 'invalid_grant');
  expect(err.message).to.equal(description);
  expect(s.oauth.issued).to.deep.equal([]);
}

describe('@gatehouse-auth/grant-jwt-bearer', () => {
  it('registers one handler for the RFC 7523 grant type with its parameters', async () => {
    const { handler } = await setup();
    expect(handler.grantType).to.equal(GRANT);
    expect(handler.parameters).to.deep.equal(['assertion', 'scope']);
  });

  it('refuses unknown options', async () => {
    let error: unknown = null;
    await registerWithFakes(plugin, { lifetime: 7200 }).catch((err: unknown) => (error = err));
    expect(error).to.be.instanceOf(Error);
  });

  describe('success', () => {
    it('ES256 assertion naming a user by identifier: access token and ID token for that user, no refresh token', async () => {
      const s = await setup();
      const response = await request(s, { assertion: await sign(claims(s.now())) });
      expect(s.oauth.issued).to.deep.equal([
        {
          client: s.client,
          subject: 'user-1',
          scope: ['openid', 'profile', 'read'],
          grantType: GRANT,
          refreshToken: false,
          idToken: { authTime: s.now() },
        },
      ]);
      expect(response.scope).to.equal('openid profile read');
      expect(response).to.not.have.property('refresh_token');
      expect(response.id_token).to.be.a('string');
      expect(s.oauth.tokenRow(response.access_token)!.subject).to.equal('user-1');
    });

    it('RS256 assertion naming a user by id, with a requested scope and an audience list', async () => {
      const s = await setup();
      const assertion = await sign(claims(s.now(), { sub: 'user-1', aud: ['https://elsewhere.example', ISSUER] }), {
        key: keys.rs256,
        alg: 'RS256',
      });
      const response = await request(s, { assertion, scope: 'read' });
      expect(s.oauth.issued).to.deep.equal([
        { client: s.client, subject: 'user-1', scope: ['read'], grantType: GRANT, refreshToken: false },
      ]);
      expect(response).to.not.have.property('id_token');
    });

    it('accepts exp up to the clock tolerance in the past, nbf/iat up to it in the future, exp up to 1 h + tolerance ahead', async () => {
      const s = await setup();
      const now = s.now();
      for (const overrides of [
        { exp: now - 29 },
        { nbf: now + 30, iat: now + 30 },
        { exp: now + 3630, iat: undefined },
      ]) {
        await request(s, { assertion: await sign(claims(now, overrides)) });
      }
      expect(s.oauth.issued.map((i) => i.subject)).to.deep.equal(['user-1', 'user-1', 'user-1']);
    });

    it('uses the issuer of the assertion among several trusted ones', async () => {
      const s = await setup();
      const client = partnerClient({
        settings: {
          assertion_issuers: [
            { issuer: PARTNER, jwks: keys.partnerJwks },
            { issuer: OTHER_ISSUER, jwks: keys.otherIssuerJwks },
          ],
        },
      });
      const assertion = await sign(claims(s.now(), { iss: OTHER_ISSUER }), { key: keys.otherIssuer, kid: 'other-1' });
      await request(s, { assertion, scope: 'read' }, client);
      expect(s.oauth.issued.map((i) => i.subject)).to.deep.equal(['user-1']);
    });

    it('the same jti from two different issuers are two assertions', async () => {
      const s = await setup();
      const client = partnerClient({
        settings: {
          assertion_issuers: [
            { issuer: PARTNER, jwks: keys.partnerJwks },
            { issuer: OTHER_ISSUER, jwks: keys.otherIssuerJwks },
          ],
        },
      });
      const now = s.now();
      await request(s, { assertion: await sign(claims(now, { jti: 'shared' })) }, client);
      const other = await sign(claims(now, { iss: OTHER_ISSUER, jti: 'shared' }), {
        key: keys.otherIssuer,
        kid: 'other-1',
      });
      await request(s, { assertion: other }, client);
      expect(s.oauth.issued).to.have.length(2);
    });
  });

  describe('request failures', () => {
    it('a public client → unauthorized_client', async () => {
      const s = await setup();
      const client = partnerClient({ authMethod: 'none' });
      const assertion = await sign(claims(s.now()));
      await expectOAuthError(request(s, { assertion }, client), 'unauthorized_client');
      expect(s.oauth.issued).to.deep.equal([]);
    });

    it('no assertion → invalid_request', async () => {
      const s = await setup();
      const err = await expectOAuthError(request(s, { scope: 'read' }), 'invalid_request');
      expect(err.message).to.equal('assertion is required');
      expect(s.oauth.issued).to.deep.equal([]);
    });

    for (const garbage of ['not-a-jwt', 'a.b.c', 'eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.c2ln', 'a.b.c.d.e']) {
      it(`"${garbage}" (not a JWT) → invalid_grant`, async () => {
        const s = await setup();
        await expectRejected(s, garbage, 'assertion is not a JWT');
      });
    }
  });

  describe('issuer and signature', () => {
    it('an issuer the client does not trust → invalid_grant', async () => {
      const s = await setup();
      const assertion = await sign(claims(s.now(), { iss: OTHER_ISSUER }), { key: keys.otherIssuer, kid: 'other-1' });
      await expectRejected(s, assertion, 'assertion issuer is not trusted by this client');
    });

    it('no iss → invalid_grant', async () => {
      const s = await setup();
      await expectRejected(
        s,
        await sign(claims(s.now(), { iss: undefined })),
        'assertion issuer is not trusted by this client',
      );
    });

    it('an issuer trusted by another client only → invalid_grant', async () => {
      const s = await setup();
      const client = partnerClient({
        settings: { assertion_issuers: [{ issuer: OTHER_ISSUER, jwks: keys.otherIssuerJwks }] },
      });
      const err = await expectOAuthError(
        request(s, { assertion: await sign(claims(s.now())) }, client),
        'invalid_grant',
      );
      expect(err.message).to.equal('assertion issuer is not trusted by this client');
    });

    it('a trusted issuer but signed by another key under its kid → invalid_grant', async () => {
      const s = await setup();
      await expectRejected(s, await sign(claims(s.now()), { key: keys.other }), 'assertion signature is invalid');
    });

    it('a trusted issuer but signed by another key with an unknown kid → invalid_grant', async () => {
      const s = await setup();
      const assertion = await sign(claims(s.now()), { key: keys.other, kid: 'unknown' });
      await expectRejected(s, assertion, 'assertion signature is invalid');
    });

    it('a key of another trusted issuer → invalid_grant', async () => {
      const s = await setup();
      const client = partnerClient({
        settings: {
          assertion_issuers: [
            { issuer: PARTNER, jwks: keys.partnerJwks },
            { issuer: OTHER_ISSUER, jwks: keys.otherIssuerJwks },
          ],
        },
      });
      const assertion = await sign(claims(s.now()), { key: keys.otherIssuer, kid: 'other-1' });
      const err = await expectOAuthError(request(s, { assertion }, client), 'invalid_grant');
      expect(err.message).to.equal('assertion signature is invalid');
    });

    it('alg none (unsigned) → invalid_grant', async () => {
      const s = await setup();
      await expectRejected(s, unsigned(claims(s.now())), 'assertion signature algorithm is not allowed');
    });

    it('HS256 with the secret of an oct key in the issuer JWKS → invalid_grant', async () => {
      const s = await setup();
      const assertion = await sign(claims(s.now()), { key: HMAC_SECRET, alg: 'HS256', kid: 'hs-1' });
      await expectRejected(s, assertion, 'assertion signature algorithm is not allowed');
    });

    it('a tampered payload → invalid_grant', async () => {
      const s = await setup();
      const [header, , signature] = (await sign(claims(s.now()))).split('.');
      const forged = Buffer.from(JSON.stringify(claims(s.now(), { sub: 'user-2' }))).toString('base64url');
      await expectRejected(s, `${header}.${forged}.${signature}`, 'assertion signature is invalid');
    });
  });

  describe('claims', () => {
    const cases: { name: string; overrides: (now: number) => Record<string, unknown>; description: string }[] = [
      {
        name: 'aud naming another server',
        overrides: () => ({ aud: 'https://other-as.example/token' }),
        description: 'assertion audience does not name this server',
      },
      { name: 'no aud', overrides: () => ({ aud: undefined }), description: 'assertion lacks the aud claim' },
      { name: 'no exp', overrides: () => ({ exp: undefined }), description: 'assertion lacks the exp claim' },
      {
        name: 'exp in the past beyond the tolerance',
        overrides: (now) => ({ exp: now - 30 }),
        description: 'assertion has expired',
      },
      { name: 'exp an hour ago', overrides: (now) => ({ exp: now - 3600 }), description: 'assertion has expired' },
      {
        name: 'exp 2 h ahead',
        overrides: (now) => ({ exp: now + 7200 }),
        description: 'assertion expires more than an hour ahead',
      },
      {
        name: 'exp just past 1 h + tolerance',
        overrides: (now) => ({ exp: now + 3631 }),
        description: 'assertion expires more than an hour ahead',
      },
      { name: 'exp not a number', overrides: () => ({ exp: 'soon' }), description: 'assertion exp claim is invalid' },
      {
        name: 'nbf in the future beyond tolerance',
        overrides: (now) => ({ nbf: now + 31 }),
        description: 'assertion is not yet valid',
      },
      {
        name: 'iat in the future beyond tolerance',
        overrides: (now) => ({ iat: now + 31 }),
        description: 'assertion was issued in the future',
      },
      { name: 'no sub', overrides: () => ({ sub: undefined }), description: 'assertion lacks the sub claim' },
      { name: 'empty sub', overrides: () => ({ sub: '' }), description: 'assertion sub claim is invalid' },
      { name: 'numeric sub', overrides: () => ({ sub: 42 }), description: 'assertion sub claim is invalid' },
      { name: 'no jti', overrides: () => ({ jti: undefined }), description: 'assertion lacks the jti claim' },
      { name: 'empty jti', overrides: () => ({ jti: '' }), description: 'assertion jti claim is invalid' },
    ];
    for (const c of cases) {
      it(`${c.name} → invalid_grant`, async () => {
        const s = await setup();
        await expectRejected(s, await sign(claims(s.now(), c.overrides(s.now()))), c.description);
      });
    }

    it('an assertion that was good expires with the clock', async () => {
      const s = await setup();
      const assertion = await sign(claims(s.now(), { exp: s.now() + 60 }));
      s.oauth.clock.advance(90);
      await expectRejected(s, assertion, 'assertion has expired');
    });
  });

  describe('single use', () => {
    it('a replayed assertion → invalid_grant, the first still succeeded', async () => {
      const s = await setup();
      const assertion = await sign(claims(s.now()));
      await request(s, { assertion });
      const err = await expectOAuthError(request(s, { assertion }), 'invalid_grant');
      expect(err.message).to.equal('assertion was already used');
      expect(s.oauth.issued).to.have.length(1);
    });

    it('a new assertion with a used jti from the same issuer → invalid_grant', async () => {
      const s = await setup();
      await request(s, { assertion: await sign(claims(s.now(), { jti: 'once' })) });
      const again = await sign(claims(s.now(), { jti: 'once', sub: 'user-1' }), { key: keys.rs256, alg: 'RS256' });
      const err = await expectOAuthError(request(s, { assertion: again }), 'invalid_grant');
      expect(err.message).to.equal('assertion was already used');
    });

    it('a jti accepted within the clock tolerance stays used until the tolerance runs out', async () => {
      const s = await setup();
      const assertion = await sign(claims(s.now(), { exp: s.now() - 20 }));
      await request(s, { assertion });
      s.oauth.clock.advance(5);
      const err = await expectOAuthError(request(s, { assertion }), 'invalid_grant');
      expect(err.message).to.equal('assertion was already used');
    });

    it('a request refused for its scope does not use the assertion up', async () => {
      const s = await setup();
      const assertion = await sign(claims(s.now()));
      await expectOAuthError(request(s, { assertion, scope: 'admin' }), 'invalid_scope');
      await request(s, { assertion, scope: 'read' });
      expect(s.oauth.issued.map((i) => i.scope)).to.deep.equal([['read']]);
    });
  });

  describe('subject and scope', () => {
    for (const [sub, why] of [
      ['nobody', 'unknown'],
      ['bob', 'disabled (by identifier)'],
      ['user-2', 'disabled (by id)'],
      ['carol', 'locked'],
    ] as const) {
      it(`sub "${sub}" (${why}) → invalid_grant`, async () => {
        const s = await setup();
        await expectRejected(s, await sign(claims(s.now(), { sub })), 'assertion subject is not an active user');
      });
    }

    for (const scope of ['admin', 'read admin', 'offline_access', 'read\\x']) {
      it(`scope "${scope}" → invalid_scope`, async () => {
        const s = await setup();
        await expectOAuthError(request(s, { assertion: await sign(claims(s.now())), scope }), 'invalid_scope');
        expect(s.oauth.issued).to.deep.equal([]);
      });
    }
  });
});
