/**
 * The token, introspection and revocation endpoints answer alike whether a request takes the
 * fast path (an exact path, withFastRoutes) or reaches express (another spelling of the path):
 * status, headers and body. Tokens signed by signJwt verify with jose, and randomToken's pool
 * hands out fresh bytes across refills.
 */
import { generateKeyPairSync, type KeyPairKeyObjectResult } from 'node:crypto';
import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { signJwt } from '../../core/dist/oauth/jws.js';
import { randomToken } from '../../core/dist/util/crypto.js';
import { PATHS } from '../../core/dist/oauth/endpoints.js';
import {
  GUESSED,
  MACHINE,
  WEB,
  basic,
  expectOAuthError,
  obtainCode,
  postForm,
  redeem,
  startServer,
  type JsonResponse,
  type OAuthServer,
} from './support.js';

/** Express-only spellings: not in PATHS, so withFastRoutes hands them to express. */
const TOKEN_FAST = '/oauth/token';
const TOKEN_EXPRESS = '/OAuth/Token';
const INTROSPECT_FAST = '/token/introspect';
const INTROSPECT_EXPRESS = '/token_info/';
const REVOKE_FAST = '/token/revoke';
const REVOKE_EXPRESS = '/token/revoke/';

/** The headers both paths must agree on. */
const COMPARED_HEADERS = ['cache-control', 'pragma', 'content-type', 'www-authenticate', 'allow', 'content-length'];

function headersOf(res: { headers: Headers }, names = COMPARED_HEADERS): Record<string, string | null> {
  return Object.fromEntries(names.map((n) => [n, res.headers.get(n)]));
}

describe('OAuth fast path and express agree', function () {
  let server: OAuthServer;
  let jwks: JSONWebKeySet;
  /** URLs (path and query) that reached express, in order. */
  const reachedExpress: string[] = [];

  before(async function () {
    server = await startServer();
    // Which requests express sees: the fast path must not hand it the exact paths.
    const app = server.gatehouse.express as unknown as { handle: (...args: unknown[]) => unknown };
    const handle = app.handle.bind(app);
    app.handle = (...args: unknown[]) => {
      reachedExpress.push(String((args[0] as { url?: string }).url));
      return handle(...args);
    };
    jwks = (await (await fetch(server.url('/.well-known/jwks.json'))).json()) as JSONWebKeySet;
  });
  after(() => server?.close());
  beforeEach(() => {
    reachedExpress.length = 0;
  });

  const machineAuth = () => basic(MACHINE.id, MACHINE.secret);
  const ccToken = (path: string, scope = 'reports.read') =>
    postForm(server, path, { grant_type: 'client_credentials', scope }, machineAuth());

  it('the express-only spellings really are outside PATHS', function () {
    const all = Object.values(PATHS).flat() as string[];
    for (const p of [TOKEN_EXPRESS, INTROSPECT_EXPRESS, REVOKE_EXPRESS]) expect(all, p).not.to.include(p);
    for (const p of [TOKEN_FAST, INTROSPECT_FAST, REVOKE_FAST]) expect(all, p).to.include(p);
  });

  describe('token endpoint', function () {
    it('client_credentials: same status, headers and body shape on both paths; only the odd spelling reaches express', async function () {
      const fast = await ccToken(TOKEN_FAST);
      expect(reachedExpress, 'the exact path never reaches express').to.deep.equal([]);
      const slow = await ccToken(TOKEN_EXPRESS);
      expect(reachedExpress).to.deep.equal([TOKEN_EXPRESS]);

      for (const res of [fast, slow]) {
        expect(res.status, res.text).to.equal(200);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        expect(res.headers.get('pragma')).to.equal('no-cache');
        expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
        expect(res.headers.get('content-length')).to.equal(String(Buffer.byteLength(res.text)));
        expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
        expect(res.headers.get('etag')).to.equal(null);
        expect(res.body).to.have.all.keys('access_token', 'token_type', 'expires_in', 'issued_token_type', 'scope');
      }
      const { access_token: a, ...fastRest } = fast.body;
      const { access_token: b, ...slowRest } = slow.body;
      expect(fastRest).to.deep.equal(slowRest);
      expect(fastRest).to.deep.equal({
        token_type: 'bearer',
        expires_in: 3600,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        scope: 'reports.read',
      });
      expect(a).to.be.a('string').and.not.equal(b);
      expect(headersOf(fast, ['cache-control', 'pragma', 'content-type'])).to.deep.equal(
        headersOf(slow, ['cache-control', 'pragma', 'content-type']),
      );
    });

    it('invalid_client is identical on both: 401, WWW-Authenticate Basic, same body', async function () {
      const wrong = basic(GUESSED.id, `${GUESSED.secret}-wrong`);
      const fast = await postForm(server, TOKEN_FAST, { grant_type: 'client_credentials' }, wrong);
      const slow = await postForm(server, TOKEN_EXPRESS, { grant_type: 'client_credentials' }, wrong);
      expect(reachedExpress).to.deep.equal([TOKEN_EXPRESS]);
      for (const res of [fast, slow]) {
        expectOAuthError(res, 401, 'invalid_client');
        expect(res.headers.get('www-authenticate')).to.equal('Basic realm="gatehouse"');
        expect(res.headers.get('pragma')).to.equal('no-cache');
      }
      expect(slow.body).to.deep.equal(fast.body);
      expect(slow.text).to.equal(fast.text);
      expect(headersOf(slow)).to.deep.equal(headersOf(fast));
    });

    it('a missing grant_type is the same invalid_request on both', async function () {
      const fast = await postForm(server, TOKEN_FAST, { scope: 'reports.read' }, machineAuth());
      const slow = await postForm(server, TOKEN_EXPRESS, { scope: 'reports.read' }, machineAuth());
      expectOAuthError(fast, 400, 'invalid_request');
      expectOAuthError(slow, 400, 'invalid_request');
      expect(slow.text).to.equal(fast.text);
      expect(headersOf(slow)).to.deep.equal(headersOf(fast));
    });

    it('GET → 405 with Allow: POST and invalid_request, on both', async function () {
      const get = async (path: string): Promise<JsonResponse> => {
        const res = await fetch(server.url(path));
        const text = await res.text();
        return { status: res.status, headers: res.headers, body: JSON.parse(text) as Record<string, unknown>, text };
      };
      const fast = await get(TOKEN_FAST);
      expect(reachedExpress).to.deep.equal([]);
      const slow = await get(TOKEN_EXPRESS);
      expect(reachedExpress).to.deep.equal([TOKEN_EXPRESS]);
      for (const res of [fast, slow]) {
        expectOAuthError(res, 405, 'invalid_request');
        expect(res.headers.get('allow')).to.equal('POST');
        expect(res.body).to.deep.equal({
          error: 'invalid_request',
          error_description: 'the token endpoint accepts POST only',
        });
      }
      expect(headersOf(slow)).to.deep.equal(headersOf(fast));
    });
  });

  describe('introspection', function () {
    it('an active token: the same description on both paths', async function () {
      const token = (await ccToken(TOKEN_FAST, 'reports.read reports.write')).body.access_token as string;
      const fast = await postForm(server, INTROSPECT_FAST, { token }, machineAuth());
      const slow = await postForm(server, INTROSPECT_EXPRESS, { token }, machineAuth());
      expect(reachedExpress).to.deep.equal([INTROSPECT_EXPRESS]);
      for (const res of [fast, slow]) {
        expect(res.status, res.text).to.equal(200);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
        expect(res.body).to.include({
          active: true,
          client_id: MACHINE.id,
          scope: 'reports.read reports.write',
          token_type: 'bearer',
          sub: MACHINE.id,
          iss: server.issuer,
        });
      }
      expect(slow.body).to.deep.equal(fast.body);
      expect(headersOf(slow)).to.deep.equal(headersOf(fast));
    });

    it('an unknown token: exactly {"active":false} on both', async function () {
      for (const path of [INTROSPECT_FAST, INTROSPECT_EXPRESS]) {
        const res = await postForm(server, path, { token: 'not-a-token' }, machineAuth());
        expect(res.status, path).to.equal(200);
        expect(res.text, path).to.equal('{"active":false}');
      }
    });

    it('no credentials: the same 401 invalid_client on both', async function () {
      const fast = await postForm(server, INTROSPECT_FAST, { token: 'x' });
      const slow = await postForm(server, INTROSPECT_EXPRESS, { token: 'x' });
      for (const res of [fast, slow]) {
        expectOAuthError(res, 401, 'invalid_client');
        expect(res.headers.get('www-authenticate')).to.equal('Basic realm="gatehouse"');
      }
      expect(slow.text).to.equal(fast.text);
      expect(headersOf(slow)).to.deep.equal(headersOf(fast));
    });
  });

  describe('revocation', function () {
    it('revokes on both paths: 200, empty body, no-store; the tokens become inactive', async function () {
      const t1 = (await ccToken(TOKEN_FAST)).body.access_token as string;
      const t2 = (await ccToken(TOKEN_FAST)).body.access_token as string;
      const fast = await postForm(server, REVOKE_FAST, { token: t1 }, machineAuth());
      expect(reachedExpress).to.deep.equal([]);
      const slow = await postForm(server, REVOKE_EXPRESS, { token: t2 }, machineAuth());
      expect(reachedExpress).to.deep.equal([REVOKE_EXPRESS]);
      for (const res of [fast, slow]) {
        expect(res.status, res.text).to.equal(200);
        expect(res.text).to.equal('');
        expect(res.headers.get('content-length')).to.equal('0');
        expect(res.headers.get('content-type')).to.equal(null);
        expect(res.headers.get('cache-control')).to.equal('no-store');
      }
      expect(headersOf(slow)).to.deep.equal(headersOf(fast));
      for (const token of [t1, t2]) {
        const info = await postForm(server, INTROSPECT_FAST, { token }, machineAuth());
        expect(info.text).to.equal('{"active":false}');
      }
    });

    it('a missing token: the same invalid_request on both', async function () {
      const fast = await postForm(server, REVOKE_FAST, {}, machineAuth());
      const slow = await postForm(server, REVOKE_EXPRESS, {}, machineAuth());
      expectOAuthError(fast, 400, 'invalid_request');
      expectOAuthError(slow, 400, 'invalid_request');
      expect(slow.text).to.equal(fast.text);
    });
  });

  describe('signatures', function () {
    it('JWT access tokens from both paths verify against the JWKS with typ at+jwt', async function () {
      for (const path of [TOKEN_FAST, TOKEN_EXPRESS]) {
        const res = await ccToken(path);
        const token = res.body.access_token as string;
        const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), {
          issuer: server.issuer,
          audience: MACHINE.id,
          typ: 'at+jwt',
          algorithms: ['ES256'],
        });
        expect(protectedHeader, path).to.deep.equal({
          alg: 'ES256',
          kid: protectedHeader.kid,
          typ: 'at+jwt',
        });
        expect(jwks.keys.map((k) => k.kid)).to.include(protectedHeader.kid);
        expect(payload, path).to.include({ client_id: MACHINE.id, scope: 'reports.read', sub: MACHINE.id });
        expect(payload.exp! - payload.iat!).to.equal(3600);
        // typ is enforced: the access token is not an ID token.
        let refused: unknown;
        await jwtVerify(token, createLocalJWKSet(jwks), { typ: 'JWT' }).catch((e: unknown) => (refused = e));
        expect((refused as { code?: string } | undefined)?.code).to.equal('ERR_JWT_CLAIM_VALIDATION_FAILED');
      }
    });

    it('the ID token of a code flow verifies against the JWKS with typ JWT (RS256 by default)', async function () {
      const user = await server.user('fast');
      const got = await obtainCode(server, user, { scope: 'openid profile' });
      const res = await redeem(server, got);
      expect(res.status, res.text).to.equal(200);
      const idToken = res.body.id_token as string;
      const { payload, protectedHeader } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
        issuer: server.issuer,
        audience: WEB.id,
        typ: 'JWT',
        algorithms: ['RS256'],
      });
      expect(protectedHeader).to.include({ alg: 'RS256', typ: 'JWT' });
      expect(payload).to.include({ sub: user.id, nonce: got.nonce });
      // The access token of the same response is an at+jwt.
      expect(decodeProtectedHeader(res.body.access_token as string).typ).to.equal('at+jwt');
    });

    it('signJwt: RS256, PS256, ES256 and EdDSA verify with jose; a tampered token does not', async function () {
      const keys: [string, KeyPairKeyObjectResult][] = [
        ['RS256', generateKeyPairSync('rsa', { modulusLength: 2048 })],
        ['PS256', generateKeyPairSync('rsa', { modulusLength: 2048 })],
        ['ES256', generateKeyPairSync('ec', { namedCurve: 'P-256' })],
        ['EdDSA', generateKeyPairSync('ed25519')],
      ];
      const now = Math.floor(Date.now() / 1000);
      for (const [alg, { privateKey, publicKey }] of keys) {
        const jwt = signJwt(
          { alg, kid: `k-${alg}`, key: privateKey },
          { typ: 'JWT' },
          { sub: 'subject-1', iat: now, exp: now + 60 },
        );
        expect(jwt.split('.'), alg).to.have.length(3);
        const { payload, protectedHeader } = await jwtVerify(jwt, publicKey, { algorithms: [alg], typ: 'JWT' });
        expect(protectedHeader, alg).to.deep.equal({ alg, kid: `k-${alg}`, typ: 'JWT' });
        expect(payload, alg).to.deep.equal({ sub: 'subject-1', iat: now, exp: now + 60 });

        const [h, , s] = jwt.split('.');
        const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'admin', iat: now, exp: now + 60 })).toString('base64url')}.${s}`;
        let refused: unknown;
        await jwtVerify(forged, publicKey, { algorithms: [alg] }).catch((e: unknown) => (refused = e));
        expect((refused as { code?: string } | undefined)?.code, alg).to.equal('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
      }
    });

    it('signJwt refuses an algorithm it does not sign with (ES384, none)', function () {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-384' });
      expect(() => signJwt({ alg: 'ES384', kid: 'r', key: privateKey }, {}, { sub: 'x' })).to.throw(
        'signing algorithm ES384 is not supported',
      );
      expect(() => signJwt({ alg: 'none', kid: 'n', key: privateKey }, {}, { sub: 'x' })).to.throw(
        /none is not supported/,
      );
    });

    it('signJwt: a caller header cannot replace the alg or kid that signed the token', function () {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const jwt = signJwt({ alg: 'ES256', kid: 'k1', key: privateKey }, { alg: 'none', kid: 'evil', typ: 'JWT' }, {});
      const header = JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as Record<string, string>;
      expect(header).to.deep.equal({ typ: 'JWT', alg: 'ES256', kid: 'k1' });
    });
  });
});

describe('randomToken (pooled CSPRNG)', function () {
  /** True if `buf` has `run` zero bytes in a row (a sign of handing out wiped pool bytes). */
  const zeroRun = (buf: Buffer, run: number) => buf.toString('hex').includes('00'.repeat(run));

  it('2,000 tokens of 32 bytes (about 16 pool refills): all distinct, 43 base64url chars, fresh bytes', function () {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const t = randomToken(32);
      expect(t).to.match(/^[A-Za-z0-9_-]{43}$/);
      const bytes = Buffer.from(t, 'base64url');
      expect(bytes).to.have.length(32);
      expect(zeroRun(bytes, 8), `token ${i} has a run of zero bytes`).to.equal(false);
      seen.add(t);
    }
    expect(seen.size).to.equal(2000);
    expect(randomToken()).to.match(/^[A-Za-z0-9_-]{43}$/);
  });

  it('sizes that do not divide the pool, and sizes over 256 bytes, have the right length and differ', function () {
    const sizes = [1, 7, 16, 200, 255, 256, 257, 300, 1000, 4096, 5000];
    const seen = new Set<string>();
    let calls = 0;
    for (let round = 0; round < 40; round++) {
      for (const size of sizes) {
        const t = randomToken(size);
        calls += 1;
        expect(t).to.match(/^[A-Za-z0-9_-]+$/);
        expect(t.length, `size ${size}`).to.equal(Math.ceil((size * 4) / 3));
        const bytes = Buffer.from(t, 'base64url');
        expect(bytes.length, `size ${size}`).to.equal(size);
        if (size >= 16) expect(zeroRun(bytes, 8), `size ${size}`).to.equal(false);
        seen.add(t);
      }
    }
    // One-byte tokens may repeat by chance (1 in 256); everything from 7 bytes up must not.
    const repeatable = sizes.filter((s) => s < 7).length * 40;
    expect(seen.size).to.be.at.least(calls - repeatable);
    expect(
      [...seen].filter((t) => t.length > 2),
      'no repeats above one byte',
    ).to.have.length(calls - repeatable);
  });
});
